import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import Synchronization

/// The live figures: a check-in's 2xx to its event on the caller's stream and to the challenge's leaderboard showing
/// it, beside a raw produce→consume hop through the same broker (the same tail the gateway uses), what 1,000 idle
/// streams cost the gateway, and how fast one board's events reach 1,000 and 10,000 streams following it.
struct StreamBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stream")

    @Option(help: "Gateway base URL.") var gateway = "http://127.0.0.1:8080"
    @Option(help: "Progress base URL (its simulated clock is moved through /internal/clock).") var progress = "http://127.0.0.1:8083"
    @Option(help: "Kafka bootstrap servers.") var kafka = "127.0.0.1:9092"
    @Option(help: "A file holding the gateway's process id (for its resident memory).") var gatewayPidFile: String?
    @Option(help: "Measured hops and check-ins.") var samples = 300
    @Option(help: "Idle streams to open.") var idleStreams = 1000
    @Option(help: "Streams following one board, for the fan-out (repeat for each size).") var fanOutStreams: [Int] = [1000, 10000]
    @Option(help: "Events published to the board for each fan-out size.") var fanOutEvents = 20
    @OptionGroup var output: ResultsOption

    func run() async throws {
        let hop = try await rawHop()
        let (habit, delivery, ranking) = try await checkInToStreamAndBoard()
        print("")
        print("Check-in to what others see (\(samples) samples each, sequential):")
        print("  path                                          p50 ms   p99 ms   p99 ÷ raw hop p99")
        print(String(format: "  raw produce→consume (yardstick)              %7.2f  %7.2f", percentile(hop, 0.5), percentile(hop, 0.99)))
        var figures: [BenchFigure] = []
        for (name, latencies) in [("check-in 2xx → event on the stream", delivery), ("check-in 2xx → leaderboard read shows it", ranking)] {
            let ratio = percentile(latencies, 0.99) / percentile(hop, 0.99)
            print("  " + name.padding(toLength: 43, withPad: " ", startingAt: 0)
                + String(format: "%7.2f  %7.2f  %7.2f (target ≤ 3)", percentile(latencies, 0.5), percentile(latencies, 0.99), ratio))
            figures.append(BenchFigure("stream", name + " p50", percentile(latencies, 0.5), "ms", yardstick: .init(name: "raw Kafka hop p50", value: percentile(hop, 0.5))))
            figures.append(BenchFigure(
                "stream", name + " p99", percentile(latencies, 0.99), "ms", yardstick: .init(name: "raw Kafka hop p99", value: percentile(hop, 0.99)),
                ratio: ratio, target: "≤ 3× raw hop", met: ratio <= 3))
        }
        if let perStream = try await idleMemory() {
            figures.append(BenchFigure("stream", "gateway memory per idle stream (\(idleStreams) open)", perStream, "KiB"))
        }
        for streams in fanOutStreams {
            let (events, deliveries, cpu) = try await fanOut(to: streams, board: habit)
            figures.append(BenchFigure("stream", "one board's events/s to \(streams) streams following it", events, "events/s"))
            figures.append(BenchFigure("stream", "deliveries/s to \(streams) streams following one board", deliveries, "deliveries/s"))
            if let cpu { figures.append(BenchFigure("stream", "gateway CPU per delivery, \(streams) streams", cpu * 1e6, "µs")) }
        }
        try output.record(figures)
    }

    /// Produce one record and wait for the tail to hand it over, `samples` times.
    func rawHop() async throws -> [Double] {
        let logger = Logger(label: "bench")
        // The fetch wait the stack's services have in the benchmark (the development broker wakes no waiting fetch).
        let configuration = KafkaConfiguration(bootstrapServers: kafka, clientID: "surge-bench", consumerProperties: ["fetch.wait.max.ms": "10"])
        let producer = try KafkaProducer(configuration: configuration, logger: logger)
        let topic = "surge.bench.hop"
        _ = try await producer.send(KafkaRecord(topic: topic, key: nil, value: Data("create".utf8)))
        let (arrivals, continuation) = AsyncStream.makeStream(of: String.self)
        let tail = try KafkaTail(configuration: configuration, topics: [topic], logger: logger) { message in
            continuation.yield(String(decoding: message.value ?? Data(), as: UTF8.self))
        }
        let following = Task { try await tail.run() }
        defer { following.cancel() }
        var iterator = arrivals.makeAsyncIterator()
        // The tail starts at the end: probe until it is following.
        let probing = Task {
            for index in 0..<600 {
                _ = try? await producer.send(KafkaRecord(topic: topic, key: nil, value: Data("probe-\(index)".utf8)))
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        guard await iterator.next() != nil else { throw BenchError("the tail never followed \(topic)") }
        probing.cancel()
        _ = await probing.result
        var latencies: [Double] = []
        for index in 0..<samples {
            let label = "hop-\(index)"
            let start = ContinuousClock.now
            _ = try await producer.send(KafkaRecord(topic: topic, key: nil, value: Data(label.utf8)))
            while let value = await iterator.next(), value != label {}
            latencies.append(milliseconds(ContinuousClock.now - start))
        }
        await producer.close()
        return latencies
    }

    /// Tick and untick a habit, one check-in at a time: first each 2xx waits for its `checkin` / `checkin-undone` on
    /// the user's own stream, then for a read of the habit's leaderboard (`…/me`, polled through the gateway) to show
    /// the point it added or took back. The leaderboard time ends when the read that showed it answered.
    func checkInToStreamAndBoard() async throws -> (habit: UUID, stream: [Double], board: [Double]) {
        let api = GatewayClient(gateway: gateway)
        let habit = try await BenchHabit.publish(kafka: kafka)
        try await BenchHabit.setClock(Date(), progress: progress)
        let token = try await api.guest("Streamer", zone: "Europe/Rome")
        let attempt = try await api.retrying { try await api.startAttempt(habit, token: token) }
        let stream = try await EventStreamReader.open(gateway + "/v1/stream", token: token)
        defer { stream.close() }
        var toStream: [Double] = []
        for index in 0..<samples {
            let before = stream.count(of: ["checkin", "checkin-undone"])
            _ = try await api.tick(attempt, done: index % 2 == 0, token: token)
            let answered = ContinuousClock.now
            let arrived = try await stream.waitForCount(of: ["checkin", "checkin-undone"], above: before)
            toStream.append(max(0, milliseconds(arrived - answered)))
        }
        let standing = "/v1/leaderboards/challenges/\(habit.uuidString.lowercased())/me?window=all-time"
        var toBoard: [Double] = []
        // A tick adds a point and an untick takes it back: after the ticks above the board holds 1 or 0.
        var score = samples % 2
        try await waitForScore(score, standing, token: token, api: api, within: .seconds(120))
        for index in 0..<samples {
            let done = index % 2 == 0
            _ = try await api.tick(attempt, done: done, token: token)
            let answered = ContinuousClock.now
            score += done ? 1 : -1
            try await waitForScore(score, standing, token: token, api: api, within: .seconds(30))
            toBoard.append(milliseconds(ContinuousClock.now - answered))
        }
        return (habit, toStream, toBoard)
    }

    func waitForScore(_ score: Int, _ standing: String, token: String, api: GatewayClient, within timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await api.score(standing, token: token) != score {
            guard ContinuousClock.now < deadline else { throw BenchError("the leaderboard did not show score \(score) within \(timeout)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// The gateway's resident memory before and after `idleStreams` streams are open and subscribed.
    func idleMemory() async throws -> Double? {
        guard let gatewayPidFile, let pid = try? BenchProcess.pid(inFile: gatewayPidFile) else {
            print("  (no --gateway-pid-file: idle stream memory not measured)")
            return nil
        }
        let api = GatewayClient(gateway: gateway)
        let token = try await api.guest("Idler", zone: "Europe/Rome")
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = idleStreams + 10
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let before = try BenchProcess.residentKiB(of: pid)
        var streams: [EventStreamReader] = []
        for _ in 0..<idleStreams { streams.append(try await EventStreamReader.open(gateway + "/v1/stream", token: token, client: client)) }
        let after = try BenchProcess.residentKiB(of: pid)
        print("")
        print("Idle streams: \(idleStreams) open; gateway RSS \(before / 1024) MiB → \(after / 1024) MiB, "
            + String(format: "%.1f KiB per stream", Double(after - before) / Double(idleStreams)))
        for stream in streams { stream.close() }
        try await client.shutdown()
        return Double(after - before) / Double(idleStreams)
    }

    /// `streams` streams follow the habit's board (opened 64 at a time, by as many guests as the per-user limit needs),
    /// then `fanOutEvents` closed windows of that board are published on the leaderboard's topic at once: the time
    /// from the first publish until every stream has every event gives the events and deliveries per second, and the
    /// gateway's CPU over that time per delivery.
    func fanOut(to streams: Int, board habit: UUID) async throws -> (eventsPerSecond: Double, deliveriesPerSecond: Double, cpuPerDelivery: Double?) {
        let api = GatewayClient(gateway: gateway)
        let perUser = 2000
        var followers: [String] = []
        for index in 0..<(streams + perUser - 1) / perUser { followers.append(try await api.guest("Follower \(index)", zone: "Europe/Rome")) }
        let tokens = followers
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = streams + 10
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let url = gateway + "/v1/stream?boards=challenge:\(habit.uuidString.lowercased())"
        let readers = try await withThrowingTaskGroup(of: EventStreamReader.self) { group in
            var readers: [EventStreamReader] = []
            for index in 0..<streams {
                if index >= 64, let reader = try await group.next() { readers.append(reader) }
                group.addTask { try await EventStreamReader.open(url, token: tokens[index / perUser], client: client) }
            }
            for try await reader in group { readers.append(reader) }
            return readers
        }
        let logger = Logger(label: "bench")
        let producer = try KafkaProducer(configuration: KafkaConfiguration(bootstrapServers: kafka, clientID: "surge-bench"), logger: logger)
        let now = Date()
        let records = try (0..<fanOutEvents).map { index in
            let closed = WindowClosed(
                board: "challenge:\(habit.uuidString.lowercased())", scope: .challenge, subjectID: habit, window: "bench-\(index)", startsAt: now,
                endsAt: now, revision: 1, participants: 1, winners: [], standings: [], closedAt: now)
            return KafkaRecord(publishing: try EventRecord(CloudEvent(source: "/surge/bench", time: now, data: closed)), to: WindowClosed.descriptor.topic.name)
        }
        let gatewayPID = gatewayPidFile.flatMap { try? BenchProcess.pid(inFile: $0) }
        let cpuBefore = gatewayPID.flatMap { BenchProcess.stat(of: $0)?.cpu }
        let started = ContinuousClock.now
        for result in await producer.send(records) { _ = try result.get() }
        let deadline = started + .seconds(120)
        while readers.contains(where: { $0.count(of: ["board-closed"]) < fanOutEvents }) {
            guard ContinuousClock.now < deadline else {
                let behind = readers.filter { $0.count(of: ["board-closed"]) < fanOutEvents }.count
                throw BenchError("\(behind) of \(streams) streams lacked some of the \(fanOutEvents) events after 120 s")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let elapsed = (ContinuousClock.now - started) / .seconds(1)
        var cpu: Double?
        if let cpuBefore, let gatewayPID, let cpuAfter = BenchProcess.stat(of: gatewayPID)?.cpu { cpu = cpuAfter - cpuBefore }
        await producer.close()
        for reader in readers { reader.close() }
        try await client.shutdown()
        let deliveries = Double(streams * fanOutEvents)
        let cpuText = cpu.map { String(format: ", the gateway's CPU %.1f µs per delivery", $0 / deliveries * 1e6) } ?? ""
        print(String(format: "Fan-out: %d events of one board to %d streams following it: all delivered in %.2f s: %.0f events/s, %.0f deliveries/s",
                     fanOutEvents, streams, elapsed, Double(fanOutEvents) / elapsed, deliveries / elapsed) + cpuText)
        return (Double(fanOutEvents) / elapsed, deliveries / elapsed, cpu.map { $0 / deliveries })
    }

    func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}

/// Reads one stream, counting events by name with their arrival instants; returns once `ready` arrived.
final class EventStreamReader: Sendable {
    private let arrivals = Mutex<[(name: String, at: ContinuousClock.Instant)]>([])
    private let reading = Mutex<Task<Void, Never>?>(nil)

    static func open(_ url: String, token: String, client: HTTPClient = .shared) async throws -> EventStreamReader {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "authorization", value: "Bearer \(token)")
        let response = try await client.execute(request, deadline: .now() + .hours(1))
        guard response.status == .ok else { throw BenchError("GET /v1/stream: \(response.status.code)") }
        let reader = EventStreamReader()
        reader.reading.withLock {
            $0 = Task {
                var pending = ""
                do {
                    for try await buffer in response.body {
                        pending += String(buffer: buffer)
                        while let end = pending.range(of: "\n\n") {
                            let block = pending[..<end.lowerBound]
                            if let line = block.split(separator: "\n").first(where: { $0.hasPrefix("event: ") }) {
                                let name = String(line.dropFirst("event: ".count))
                                reader.arrivals.withLock { $0.append((name, .now)) }
                            }
                            pending = String(pending[end.upperBound...])
                        }
                    }
                } catch {}
            }
        }
        _ = try await reader.waitForCount(of: ["ready"], above: 0)
        return reader
    }

    func count(of names: Set<String>) -> Int { arrivals.withLock { $0.filter { names.contains($0.name) }.count } }

    /// When the event that took the count of `names` past `count` arrived.
    func waitForCount(of names: Set<String>, above count: Int, timeout: Duration = .seconds(30)) async throws -> ContinuousClock.Instant {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let matching = arrivals.withLock { $0.filter { names.contains($0.name) } }
            if matching.count > count { return matching[count].at }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw BenchError("no \(names.sorted()) event on the stream within \(timeout)")
    }

    func close() { reading.withLock { $0?.cancel() } }
}
