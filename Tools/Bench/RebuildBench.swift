import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import SurgeCalendar
import SurgeContracts
import SurgeKafka
import SurgeMessaging

/// A service's state rebuilt from offset zero of every topic it reads (`surge-<service> rebuild`), in events/s: a
/// stream of directory events and points is published first, the service's replica is stopped for the rebuild (it
/// refuses to run beside one) and started again after it.
struct RebuildBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild", abstract: "A service rebuilt from offset zero (surge-<service> rebuild), events/s.")

    @Option(help: "The service rebuilt (badges or leaderboard).") var service: String
    @Option(help: "Kafka bootstrap servers (the rebuild's events are published there).") var kafka: String
    @Option(help: "Events to publish before timing the rebuild.") var events = 200_000
    @Option(help: "File holding the running replica's process id (rewritten after the restart).") var pidFile: String
    @Option(help: "Shell command that starts the service again (it must exec the process, so its id is the command's).")
    var startCommand: String
    @Option(help: "Shell command that runs `surge-<service> rebuild` with the service's environment.") var rebuildCommand: String
    @Option(help: "The service's /readyz URL.") var readyURL: String
    @Option(help: "File holding the process id of another service, paused while the rebuild is timed (repeat for every one).")
    var pausePidFile: [String] = []
    @OptionGroup var output: ResultsOption

    func run() async throws {
        print("Rebuild of \(service) from the earliest offsets (\(events) events published, plus whatever the topics already hold):")
        try await Self.publishStream(events: events, kafka: kafka, logger: Logger(label: "bench"))
        try BenchProcess.stop(try BenchProcess.pid(inFile: pidFile), name: service)
        let figure = try Self.rebuild(service, command: rebuildCommand, pausing: pausePidFile)
        let restarted = Process()
        restarted.executableURL = URL(fileURLWithPath: "/bin/bash")
        restarted.arguments = ["-c", startCommand]
        try restarted.run()
        try "\(restarted.processIdentifier)\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
        let deadline = ContinuousClock.now + .seconds(120)
        while (try? await HTTPClient.shared.execute(HTTPClientRequest(url: readyURL), timeout: .seconds(1)))?.status != .ok {
            guard restarted.isRunning, ContinuousClock.now < deadline else { throw BenchError("\(service) did not start again after the rebuild") }
            try await Task.sleep(for: .milliseconds(20))
        }
        try output.record([figure])
    }

    /// Runs the rebuild command and reads its report's "N events" and "X events/s". The services in `pausing` are
    /// stopped (SIGSTOP) meanwhile and continued after: on two cores, the rest of the stack digesting the flood just
    /// published (the leaderboard's rank changes alone are hundreds of thousands of events for notifications) would
    /// otherwise take most of the CPU the rebuild is timed on.
    static func rebuild(_ service: String, command: String, pausing pidFiles: [String]) throws -> BenchFigure {
        let paused = pidFiles.compactMap { try? BenchProcess.pid(inFile: $0) }
        for pid in paused { kill(pid, SIGSTOP) }
        defer { for pid in paused { kill(pid, SIGCONT) } }
        let rebuild = Process()
        rebuild.executableURL = URL(fileURLWithPath: "/bin/bash")
        rebuild.arguments = ["-c", command]
        let output = Pipe()
        rebuild.standardOutput = output
        try rebuild.run()
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        rebuild.waitUntilExit()
        guard rebuild.terminationStatus == 0 else { throw BenchError("the \(service) rebuild failed (\(rebuild.terminationStatus)): \(report)") }
        print("  " + report)
        guard let rate = number(before: " events/s", in: report), let events = number(before: " events (", in: report) else {
            throw BenchError("the \(service) rebuild's report has no events/s: \(report)")
        }
        print("  target: ≥ 50,000 events/s")
        return BenchFigure(
            "rebuild", "\(service) rebuilt from offset zero (\(Int(events)) events)", rate, "events/s", target: "≥ 50,000 events/s", met: rate >= 50_000)
    }

    static func number(before suffix: String, in text: String) -> Double? {
        guard let end = text.range(of: suffix) else { return nil }
        return Double(text[..<end.lowerBound].split(separator: " ").last ?? "")
    }

    /// A rebuild's input: 2,000 users in 100 households of a few zones, 20 challenges, and points on both boards
    /// across eight weeks until `events` events are on the topics.
    static func publishStream(events rebuildEvents: Int, kafka: String, logger: Logger) async throws {
        let producer = try KafkaProducer(configuration: KafkaConfiguration(bootstrapServers: kafka, clientID: "surge-bench"), logger: logger)
        let zones = ["Europe/Rome", "Asia/Tokyo", "America/New_York", "Australia/Sydney"]
        let users = (0..<2_000).map { _ in UUID() }
        let groups = (0..<100).map { _ in UUID() }
        let challenges = (0..<20).map { _ in UUID() }
        let now = Date()
        var batch: [KafkaRecord] = []
        var published = 0
        func add<P: EventPayload>(_ payload: P) async throws {
            batch.append(KafkaRecord(publishing: try EventRecord(CloudEvent(source: "/surge/bench", time: now, data: payload)), to: P.descriptor.topic.name))
            if batch.count == 5_000 { try await flush() }
        }
        func flush() async throws {
            for result in await producer.send(batch) { _ = try result.get() }
            published += batch.count
            batch.removeAll(keepingCapacity: true)
        }
        for (index, groupID) in groups.enumerated() {
            try await add(GroupChanged(
                groupID: groupID, name: "Home \(index)", kind: .household, timeZone: zones[index % zones.count], ownerID: users[index], created: true,
                changedAt: now))
        }
        for (index, userID) in users.enumerated() {
            try await add(UserRegistered(
                userID: userID, displayName: "Player \(index)", timeZone: zones[index % zones.count], locale: nil, kind: .guest, registeredAt: now))
            try await add(GroupMembershipChanged(
                groupID: groups[index % groups.count], userID: userID, displayName: "Player \(index)", role: .member, change: .joined, changedAt: now))
        }
        for (index, challengeID) in challenges.enumerated() {
            let definition = ChallengeDefinition(
                challengeID: challengeID, version: 1, effectiveFrom: nil, kind: .habit, name: "Habit \(index)", description: "", category: "bench",
                difficulty: .beginner, visibility: .public, ownerID: nil, groupID: nil, durationDays: nil, estimatedDailyMinutes: nil,
                tasks: [ChallengeTask(taskID: "t", title: "Tick", kind: .checkbox)],
                rules: ChallengeRules(failure: .init(mode: .none), points: .init(kind: .perTask, pointsPerTask: 5)))
            try await add(ChallengePublished(definition: definition, publishedAt: now))
        }
        let firstDay = LocalDate("2026-09-07")!
        var step = 0
        while published + batch.count < rebuildEvents {
            let index = step % users.count
            try await add(PointsAwarded(
                entryID: UUID(), userID: users[index], groupID: groups[index % groups.count], challengeID: challenges[step % challenges.count],
                attemptID: nil, points: 1 + step % 5, reason: .task, localDate: firstDay.adding(days: (step / users.count) % 56), excessQuantity: nil,
                totalPoints: step, awardedAt: now))
            step += 1
        }
        try await flush()
        await producer.close()
    }

}
