import Foundation
import NIOHTTP1
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgeRuntime
import SurgeTestSupport
import Testing

/// Zero loss under faults: check-ins from many users through the gateway while every consumer service is killed and
/// restarted, poison records land on every topic, the broker goes away for 10 s, PostgreSQL restarts and the gateway
/// dies mid-request; then the whole system is checked against the ground truth of what clients were told.
///
/// `make test` runs it after the other suites (it restarts the shared PostgreSQL) with a few hundred check-ins;
/// `make chaos` with 10,000 (`SURGE_CHAOS_CHECKINS`).
@Suite("Chaos: faults under load, nothing lost or counted twice", .tags(.system), .kind(.system), .serialized)
struct ChaosSystemTests {
    static var checkIns: Int { Int(ProcessInfo.processInfo.environment["SURGE_CHAOS_CHECKINS"] ?? "") ?? 300 }
    static let users = 12
    /// The faults take about this long; a small load is spread over it so that every fault meets requests in flight.
    static let faultWindow: Duration = .seconds(45)
    static let consumers = ["progress", "leaderboard", "badges", "notifications", "analytics", "challenges"]

    /// One user's share of the load: a habit with one checkbox task, ticked and unticked in turn.
    struct Worker: Sendable {
        let user: ProgressStage.User
        let challengeID: String
        let attemptID: String
    }

    /// What the clients were told.
    final class Ledger: Sendable {
        private let state = LockedValue<(accepted: [String], refused: [String], retries: Int)>(([], [], 0))
        func accept(_ id: String) { state.withLock { $0.accepted.append(id) } }
        func refuse(_ detail: String) { state.withLock { $0.refused.append(detail) } }
        func retried() { state.withLock { $0.retries += 1 } }
        var accepted: [String] { state.withLock { $0.accepted } }
        var refused: [String] { state.withLock { $0.refused } }
        var retries: Int { state.withLock { $0.retries } }
    }

    /// Sends one check-in until the gateway answers 2xx, with the same check-in id every time (a retry after a dead
    /// gateway, a restarting service or a lost answer is the same check-in, never a second one).
    static func checkIn(_ worker: Worker, done: Bool, ledger: Ledger) async {
        let id = UUID().uuidString
        var backoff = Duration.milliseconds(50)
        let deadline = ContinuousClock.now + .seconds(180)
        while ContinuousClock.now < deadline {
            let response = try? await worker.user.http.put(
                "/v1/attempts/\(worker.attemptID)/tasks/sketch", json: ["done": done, "checkInID": id])
            if let response, (200..<300).contains(response.status) {
                ledger.accept(id)
                return
            }
            if let response, (400..<500).contains(response.status), response.status != 408, response.status != 429 {
                ledger.refuse("\(response.status) \(response.text)")
                return
            }
            ledger.retried()
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(1))
        }
        ledger.refuse("no 2xx within 180 s for check-in \(id)")
    }

    /// Restarts a killed instance on its old port, so the gateway (and the clients, for the gateway) find it again.
    static func restart(_ stack: TestStack, _ service: String, port: Int) async throws {
        try await stack.start(service, environment: ["HTTP_PORT": String(port)])
    }

    static func killAndRestart(_ stack: TestStack, _ service: String) async throws {
        let process = try stack.process(service)
        let port = try process.port
        await process.crash()
        try await restart(stack, service, port: port)
    }

    /// Where the points ledger, the members' totals and the challenge boards disagree, once they have had time to
    /// agree (empty when they do).
    static func projectionDisagreements(_ stack: TestStack) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let rows = try await stack.database.withAdmin { client in
                try await client.query(
                    """
                    SELECT 'total ' || m.user_id || ': ' || m.total || ' vs ledger ' || coalesce(l.points, 0)
                    FROM progress.member_points m
                    LEFT JOIN (SELECT user_id, sum(points) AS points FROM progress.points_ledger GROUP BY 1) l USING (user_id)
                    WHERE m.total <> coalesce(l.points, 0)
                    UNION ALL
                    SELECT 'board challenge:' || challenge_id || ' ' || user_id || ': ' || coalesce(board.score, 0) || ' vs ledger '
                      || coalesce(ledger.points, 0)
                    FROM (
                      SELECT l.challenge_id, l.user_id, sum(l.points) AS points FROM progress.points_ledger l
                      WHERE l.challenge_id IS NOT NULL GROUP BY 1, 2) ledger
                    FULL JOIN (
                      SELECT substring(board FROM 11)::uuid AS challenge_id, user_id, score FROM leaderboard.scores
                      WHERE board LIKE 'challenge:%' AND window_key = 'all-time' AND NOT removed) board
                    USING (challenge_id, user_id)
                    WHERE coalesce(ledger.points, 0) <> coalesce(board.score, 0)
                    """, logger: .test("chaos")
                ).collect().map { try $0.decode(String.self) }
            }
            if rows.isEmpty || ContinuousClock.now >= deadline { return rows }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    @Test("check-ins under kill -9 of every consumer, poison records, a 10 s broker outage, a PostgreSQL restart and a dead gateway: none lost, none twice, every projection agrees")
    func faultsUnderLoad() async throws {
        let restartPostgreSQL = try #require(
            ProcessInfo.processInfo.environment["SURGE_TEST_PG_RESTART"], "run through make test or make chaos (they say how to restart PostgreSQL)")
        try await withTestStack("chaos") { stack in
            let kafka = try #require(stack.kafka)
            try await stack.start("identity")
            for service in Self.consumers { try await stack.start(service) }
            try await stack.start("gateway")
            let stage = ProgressStage(stack: stack)

            var workers: [Worker] = []
            for index in 0..<Self.users {
                let user = try await stage.user("Chaos \(index)", timeZone: ["Europe/Rome", "Asia/Tokyo", "America/New_York"][index % 3])
                let challengeID = try await stage.habit(for: user, graceMinutes: 0)
                let attempt = try await user.http.post("/v1/attempts", json: ["challengeID": challengeID])
                let attemptID = try #require((attempt.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(attempt.text)")
                workers.append(Worker(user: user, challengeID: challengeID, attemptID: attemptID))
            }

            let total = Self.checkIns
            let perUser = (total + Self.users - 1) / Self.users
            let pace = Self.faultWindow / perUser
            let ledger = Ledger()
            let started = ContinuousClock.now
            let load = Task {
                await withTaskGroup(of: Void.self) { group in
                    for (index, worker) in workers.enumerated() {
                        let share = total / Self.users + (index < total % Self.users ? 1 : 0)
                        group.addTask {
                            for step in 0..<share {
                                let sent = ContinuousClock.now
                                await Self.checkIn(worker, done: step % 2 == 0, ledger: ledger)
                                let spent = ContinuousClock.now - sent
                                if spent < pace { try? await Task.sleep(for: pace - spent) }
                            }
                        }
                    }
                }
            }

            // The faults, one after another while the load runs.
            let producer = try KafkaProducer(configuration: kafka.configuration(clientID: "chaos"), logger: .test("chaos"))
            let topics = SurgeService.deployed.compactMap(\.entry.topic)
            var poisons = 0
            for topic in topics {
                for index in 0..<2 {
                    _ = try await producer.send(
                        KafkaRecord(topic: topic.name, key: Data("poison-\(index)".utf8), value: Data("{chaos-poison \(topic.name) \(index)".utf8)))
                    poisons += 1
                }
            }
            var faults: [String] = ["\(poisons) poison records on \(topics.count) topics"]
            for service in Self.consumers {
                try await Task.sleep(for: .seconds(2))
                try await Self.killAndRestart(stack, service)
                faults.append("kill -9 \(service)")
            }
            kafka.cluster.setBrokersAvailable(false)
            try await Task.sleep(for: .seconds(10))
            kafka.cluster.setBrokersAvailable(true)
            faults.append("broker down 10 s")
            try await Task.sleep(for: .seconds(2))
            let (status, output) = try await runShell(restartPostgreSQL)
            #expect(status == 0, "PostgreSQL restart: \(output)")
            faults.append("PostgreSQL restarted")
            try await Task.sleep(for: .seconds(2))
            try await Self.killAndRestart(stack, "gateway")
            faults.append("kill -9 gateway")
            let lastFault = ContinuousClock.now

            await load.value
            let loadTime = ContinuousClock.now - started
            #expect(ledger.refused.isEmpty, "refused: \(ledger.refused.prefix(5))")
            let accepted = ledger.accepted
            #expect(accepted.count == total)

            // Ground truth: every accepted check-in once in progress, one event each, and every projection agrees.
            let ids = accepted.compactMap(UUID.init(uuidString:))
            let found = try await eventually("every accepted check-in is recorded", timeout: .seconds(60)) { () -> Int? in
                let found = try await stack.database.count("SELECT count(*) FROM progress.checkins WHERE checkin_id = ANY(\(ids))")
                return found == accepted.count ? found : nil
            }
            let events = try await stack.database.count(
                "SELECT count(*) FROM progress.outbox WHERE type IN ('surge.progress.checkin.recorded.v1', 'surge.progress.checkin.undone.v1')")
            let lost = accepted.count - found
            let duplicated = max(0, events - accepted.count)
            #expect(events == accepted.count, "check-in events \(events) for \(accepted.count) accepted check-ins")

            // Every outbox published. This harness found the relay stalling here for good: after the broker outage its
            // round outlived its connection, and PostgresNIO's next statement on the closed connection never returned.
            try await waitUntil("every outbox published", timeout: .seconds(60), every: .milliseconds(500)) {
                var unpublished = 0
                for schema in ["identity", "challenges", "progress", "leaderboard", "badges", "notifications"] {
                    unpublished += try await stack.database.count("SELECT count(*) FROM \(unescaped: schema).outbox_pending")
                }
                return unpublished == 0
            }
            let disagreements = try await Self.projectionDisagreements(stack)
            #expect(disagreements.isEmpty, "points ledger, totals and boards disagree: \(disagreements.prefix(10))")
            #expect(try await stack.database.count("SELECT count(*) FROM progress.points_ledger") > 0)
            // Every badge announced once: one event per award row (the table's key makes a second row impossible).
            try await waitUntil("one badge event per award") {
                let awards = try await stack.database.count("SELECT count(*) FROM badges.awards")
                let announced = try await stack.database.count("SELECT count(*) FROM badges.outbox WHERE type = 'surge.badges.badge.awarded.v1'")
                return awards == announced
            }
            #expect(try await stack.database.count("SELECT count(*) FROM badges.awards") > 0, "no badge was awarded, so none could be awarded twice")

            // Recovered: nothing waiting on any partition.
            try await waitUntil("consumer lag back to 0", timeout: .seconds(60), every: .milliseconds(500)) {
                for service in Self.consumers + ["gateway"] {
                    guard try await MetricsPage.scrape(try stack.process(service)).sum("surge_kafka_consumer_lag") == 0 else { return false }
                }
                return true
            }
            let recovered = ContinuousClock.now - lastFault

            // Every dead letter is one of the injected poison records; each poisoned topic's consumers set theirs aside.
            var deadLetters: [KafkaMessage] = []
            for topic in Topic.deadLetters { deadLetters += try await kafka.drain(topic: topic.name) }
            let unexplained = deadLetters.filter { !String(decoding: $0.value ?? Data(), as: UTF8.self).hasPrefix("{chaos-poison ") }
            #expect(unexplained.isEmpty, "dead letters that are not injected poison: \(unexplained.prefix(3).map { String(decoding: $0.value ?? Data(), as: UTF8.self) })")
            let poisonedTopics = Set(deadLetters.compactMap { $0.header(EventConsumer.DeadLetterHeader.originalTopic) })
            #expect(poisonedTopics.count >= 3, "dead letters came from \(poisonedTopics.sorted())")

            print(
                "chaos: \(accepted.count) check-ins accepted (\(ledger.retries) retried requests) over \(loadTime), lost \(lost), duplicated \(duplicated); "
                    + "\(deadLetters.count) dead letters, all injected poison; recovered \(recovered) after the last fault; faults: \(faults.joined(separator: ", "))")
        }
    }

    /// What the clients of the keyed run were told: the ids each accepted request answered with.
    final class Answers: Sendable {
        private let state = LockedValue<(logs: [UUID: [String]], habits: [UUID: [String]], groups: [UUID: [String]], refused: [String], retries: Int)>(
            ([:], [:], [:], [], 0))
        func log(_ user: UUID, _ id: String) { state.withLock { $0.logs[user, default: []].append(id) } }
        func habit(_ user: UUID, _ id: String) { state.withLock { $0.habits[user, default: []].append(id) } }
        func group(_ user: UUID, _ id: String) { state.withLock { $0.groups[user, default: []].append(id) } }
        func refuse(_ detail: String) { state.withLock { $0.refused.append(detail) } }
        func retried() { state.withLock { $0.retries += 1 } }
        var snapshot: (logs: [UUID: [String]], habits: [UUID: [String]], groups: [UUID: [String]], refused: [String], retries: Int) {
            state.withLock { $0 }
        }
    }

    /// Sends one keyed request until a 2xx, with the same `Idempotency-Key` every time and nothing else to tell the
    /// service that it is a retry (no check-in id); returns the answer.
    static func keyed(
        _ user: ProgressStage.User, _ method: HTTPMethod, _ path: String, json: [String: any Sendable], answers: Answers
    ) async -> TestResponse? {
        let key = UUID().uuidString
        var backoff = Duration.milliseconds(50)
        let deadline = ContinuousClock.now + .seconds(180)
        let body = try? JSONSerialization.data(withJSONObject: json)
        while ContinuousClock.now < deadline {
            let response = try? await user.http.send(method, path, body: body, headers: [("Idempotency-Key", key)])
            if let response, (200..<300).contains(response.status) { return response }
            let inFlight = response?.json["type"] as? String == ProblemType.idempotencyKeyInProgress.uri
            if let response, (400..<500).contains(response.status), response.status != 408, response.status != 429, !inFlight {
                answers.refuse("\(method) \(path): \(response.status) \(response.text)")
                return nil
            }
            answers.retried()
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(1))
        }
        answers.refuse("no 2xx within 180 s for \(method) \(path)")
        return nil
    }

    @Test("keyed requests under kill -9 of progress, challenges and identity, retried by key alone: each accepted one stored once, none lost")
    func keyedRequestsUnderKills() async throws {
        try await withTestStack("chaos-keyed") { stack in
            for service in ["identity", "challenges", "progress", "gateway"] { try await stack.start(service) }
            let stage = ProgressStage(stack: stack)
            let users = 32
            var workers: [(user: ProgressStage.User, attemptID: String)] = []
            for index in 0..<users {
                let user = try await stage.user("Keyed \(index)", timeZone: ["Europe/Rome", "Asia/Tokyo", "America/New_York"][index % 3])
                let habit = try await user.http.post("/v1/challenges", json: [
                    "kind": "habit", "name": "Read", "description": "Pages a day",
                    "tasks": [["taskID": "read", "title": "Read", "kind": "quantity", "target": 1000, "unit": "pages"] as [String: any Sendable]],
                    "habit": ["colour": "#3366FF", "priority": 1] as [String: any Sendable],
                ])
                let challengeID = try #require((habit.json["definition"] as? [String: Any])?["challengeID"] as? String, "\(habit.text)")
                try await stage.waitForDefinition(challengeID)
                let attempt = try await user.http.post("/v1/attempts", json: ["challengeID": challengeID])
                workers.append((user, try #require((attempt.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(attempt.text)")))
            }

            // Mostly quantity logs (a retry without a check-in id used to log twice), now and then a habit and a group,
            // each user's back to back until the faults are over (at least `checkIns` in all), so that every kill
            // meets requests in flight, some of them already committed.
            let minimum = Self.checkIns
            let answers = Answers()
            let faultsOver = LockedValue(false)
            let keyedWorkers = workers
            let load = Task {
                await withTaskGroup(of: Void.self) { group in
                    for (index, worker) in keyedWorkers.enumerated() {
                        let share = minimum / users + (index < minimum % users ? 1 : 0)
                        group.addTask {
                            var step = 0
                            while step < share || !faultsOver.withLock({ $0 }) {
                                defer { step += 1 }
                                let id = worker.user.id
                                if step % 10 == 5 {
                                    let habit: [String: any Sendable] = [
                                        "kind": "habit", "name": "Habit \(step)", "description": "Keyed",
                                        "tasks": [["taskID": "t", "title": "T", "kind": "checkbox"] as [String: any Sendable]],
                                        "habit": ["colour": "#FF8800", "priority": 2] as [String: any Sendable],
                                    ]
                                    if let answer = await Self.keyed(worker.user, .POST, "/v1/challenges", json: habit, answers: answers),
                                        let created = (answer.json["definition"] as? [String: Any])?["challengeID"] as? String
                                    { answers.habit(id, created) }
                                } else if step % 10 == 7 {
                                    let body: [String: any Sendable] = ["name": "Team \(step)", "kind": "team", "timeZone": "Europe/Rome"]
                                    if let answer = await Self.keyed(worker.user, .POST, "/v1/groups", json: body, answers: answers),
                                        let created = answer.json["id"] as? String
                                    { answers.group(id, created) }
                                } else {
                                    let path = "/v1/attempts/\(worker.attemptID)/tasks/read/logs"
                                    if let answer = await Self.keyed(worker.user, .POST, path, json: ["quantity": 1.0], answers: answers),
                                        let logID = answer.json["logID"] as? String
                                    { answers.log(id, logID) }
                                }
                            }
                        }
                    }
                }
            }
            var faults: [String] = []
            for service in ["progress", "challenges", "progress", "identity", "progress", "progress"] {
                try await Task.sleep(for: .seconds(3))
                try await Self.killAndRestart(stack, service)
                faults.append("kill -9 \(service)")
            }
            faultsOver.withLock { $0 = true }
            await load.value
            let told = answers.snapshot
            #expect(told.refused.isEmpty, "refused: \(told.refused.prefix(5))")

            // Ground truth: every id a client was given is stored once, and nothing else was stored.
            var lost = 0
            var duplicated = 0
            var accepted = 0
            for (user, _) in workers {
                let logs = try await stack.database.withAdmin { client in
                    try await client.query(
                        "SELECT checkin_id::text FROM progress.checkins WHERE user_id = \(user.id) AND action = 'logged'", logger: .test("chaos")
                    ).collect().map { try $0.decode(String.self) }
                }
                let habits = try await stack.database.withAdmin { client in
                    try await client.query(
                        "SELECT challenge_id::text FROM challenges.challenges WHERE owner_id = \(user.id) AND name <> 'Read'", logger: .test("chaos")
                    ).collect().map { try $0.decode(String.self) }
                }
                let groups = try await stack.database.withAdmin { client in
                    try await client.query("SELECT id::text FROM identity.groups WHERE owner_id = \(user.id)", logger: .test("chaos"))
                        .collect().map { try $0.decode(String.self) }
                }
                for (stored, given) in [(logs, told.logs[user.id] ?? []), (habits, told.habits[user.id] ?? []), (groups, told.groups[user.id] ?? [])] {
                    let given = given.map { $0.lowercased() }
                    accepted += given.count
                    lost += Set(given).subtracting(stored).count
                    duplicated += stored.count - Set(stored).intersection(given).count
                    #expect(Set(stored) == Set(given), "stored \(stored.count), answered \(given.count) for \(user.id)")
                    #expect(Set(given).count == given.count, "one id answered to two requests")
                }
            }
            #expect(accepted >= minimum)
            #expect(lost == 0)
            #expect(duplicated == 0)
            print(
                "chaos (keyed): \(accepted) keyed requests accepted (\(told.retries) retried requests), lost \(lost), duplicated \(duplicated); "
                    + "faults: \(faults.joined(separator: ", "))")
        }
    }
}

/// Runs `command` with bash to its end (at most `timeout`); returns its exit status and output. The output goes
/// through a file, not a pipe: a server the command starts keeps its inherited descriptors open.
func runShell(_ command: String, timeout: Duration = .seconds(90)) async throws -> (Int32, String) {
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("surge-shell-\(UUID().uuidString).log")
    FileManager.default.createFile(atPath: log.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: log) }
    let output = try FileHandle(forWritingTo: log)
    defer { try? output.close() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-c", command]
    process.standardOutput = output
    process.standardError = output
    try process.run()
    try await waitUntil("`\(command)` to finish", timeout: timeout) { !process.isRunning }
    return (process.terminationStatus, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
}
