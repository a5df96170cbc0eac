import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import SurgeCalendar
import SurgeContracts
import SurgeKafka
import SurgeMessaging

@main
struct SurgeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "surge-bench",
        abstract: "Benchmarks against a running Surge (see `make bench`, which starts one).",
        subcommands: [
            CheckInLatency.self, CheckInThroughputBench.self, GatewayBench.self, LeaderboardBench.self, StreamBench.self, ReminderBench.self, StackBench.self,
            RebuildBench.self, SettleBench.self, BenchReport.self, ByteRelayCommand.self,
        ])
}

/// Check-in latency for an attempt one day old and one with `days` of history: it must not grow with history.
struct CheckInLatency: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "checkin-latency")

    @Option(help: "Gateway base URL.") var gateway = "http://127.0.0.1:8080"
    @Option(help: "Progress base URL (its simulated clock is moved through /internal/clock).") var progress = "http://127.0.0.1:8083"
    @Option(help: "Kafka bootstrap servers (the benchmark publishes its habit definition).") var kafka = "127.0.0.1:9092"
    @Option(help: "Days of history for the long attempt.") var days = 1000
    @Option(help: "Measured check-ins per attempt.") var samples = 400
    @Option(help: "A service's /metrics URL: after seeding, the stack settles before the measurement (repeat for every service).")
    var settleURL: [String] = []
    @OptionGroup var output: ResultsOption

    func run() async throws {
        let api = GatewayClient(gateway: gateway)
        let zone = "Europe/Rome"
        let calendar = LocalCalendar(zoneNamed: zone)!
        let habit = try await BenchHabit.publish(kafka: kafka)
        let first = LocalDate("2024-01-01")!
        try await BenchHabit.setClock(calendar.instant(of: LocalTime("12:00")!, on: first), progress: progress)
        let veteran = try await api.guest("Veteran", zone: zone)
        let veteranAttempt = try await api.retrying { try await api.startAttempt(habit, token: veteran) }
        print("Seeding \(days) days of history...")
        let seeding = ContinuousClock.now
        for day in 0..<days {
            try await BenchHabit.setClock(calendar.instant(of: LocalTime("12:00")!, on: first.adding(days: day)), progress: progress)
            _ = try await api.tick(veteranAttempt, done: true, token: veteran)
        }
        print("  seeded in \(ContinuousClock.now - seeding)")
        // The seeding's events (a thousand days judged) keep the other consumers busy for a while: not measured here.
        let settled = try await SettleBench.settle(settleURL, timeout: .seconds(900))
        print("  the stack settled \(settled) later")
        let newcomer = try await api.guest("Newcomer", zone: zone)
        let newcomerAttempt = try await api.retrying { try await api.startAttempt(habit, token: newcomer) }

        var fresh: [Double] = []
        var long: [Double] = []
        for index in 0..<samples {
            fresh.append(try await api.tick(newcomerAttempt, done: index % 2 == 0, token: newcomer))
            long.append(try await api.tick(veteranAttempt, done: index % 2 == 0, token: veteran))
        }
        print("")
        print("Check-in latency through the gateway (PUT /v1/attempts/{id}/tasks/{taskID}), \(samples) check-ins each:")
        print("  history     p50 ms   p95 ms   p99 ms   mean ms")
        for (label, values) in [("1 day", fresh), ("\(days) days", long)] {
            let sorted = values.sorted()
            func pct(_ p: Double) -> String { String(format: "%7.2f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) }
            print("  \(label.padding(toLength: 10, withPad: " ", startingAt: 0))  \(pct(0.5))  \(pct(0.95))  \(pct(0.99))  \(String(format: "%7.2f", values.reduce(0, +) / Double(values.count)))")
        }
        let ratio = median(long) / median(fresh)
        print(String(format: "  median ratio (%d days / 1 day): %.2f", days, ratio))
        try output.record([
            BenchFigure(
                "checkin-latency", "check-in p50 with \(days) days of history", median(long), "ms", yardstick: .init(name: "1 day p50", value: median(fresh)),
                ratio: ratio, target: "≤ 1.2×", met: ratio <= 1.2)
        ])
    }

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}

/// The benchmarks' habit: published straight to the challenges topic (no challenges service runs), judged by progress
/// on its simulated clock.
enum BenchHabit {
    static func publish(kafka: String, tasks: [ChallengeTask] = [ChallengeTask(taskID: "t", title: "Tick", kind: .checkbox)]) async throws -> UUID {
        let producer = try KafkaProducer(configuration: KafkaConfiguration(bootstrapServers: kafka, clientID: "surge-bench"), logger: Logger(label: "bench"))
        let habit = ChallengeDefinition(
            challengeID: UUID(), version: 1, effectiveFrom: nil, kind: .habit, name: "Benchmark habit", description: "", category: "bench",
            difficulty: .beginner, visibility: .public, ownerID: nil, groupID: nil, durationDays: nil, estimatedDailyMinutes: nil,
            tasks: tasks,
            rules: ChallengeRules(failure: .init(mode: .none), points: .init(kind: .perTask, pointsPerTask: 1)))
        _ = try await producer.send(KafkaRecord(
            publishing: try EventRecord(CloudEvent(source: "/surge/bench", time: Date(), data: ChallengePublished(definition: habit, publishedAt: Date()))),
            to: Topic.challenges.name))
        await producer.close()
        return habit.challengeID
    }

    static func setClock(_ instant: Date, progress: String) async throws {
        var request = HTTPClientRequest(url: progress + "/internal/clock")
        request.method = .PUT
        request.headers.add(name: "content-type", value: "application/json")
        // `rewind`: back to the real now, whatever an earlier benchmark on this stack left the clock at.
        request.body = .bytes(ByteBuffer(string: "{\"now\":\"\(Timestamp.format(instant))\",\"rewind\":true}"))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        guard response.status == .ok else { throw BenchError("progress refused the clock (is SIMULATED_CLOCK=true?)") }
    }
}

/// The public API as the benchmarks call it.
struct GatewayClient: Sendable {
    let gateway: String
    var client: HTTPClient = .shared

    func guest(_ name: String, zone: String) async throws -> String {
        try await guestAccount(name, zone: zone).token
    }

    /// A new guest's access token and user ID.
    func guestAccount(_ name: String, zone: String) async throws -> (token: String, userID: UUID) {
        let body = try await json(.POST, "/v1/auth/guest", ["displayName": name, "timeZone": zone], token: nil)
        guard let token = (body["tokens"] as? [String: Any])?["accessToken"] as? String,
            let userID = ((body["user"] as? [String: Any])?["id"] as? String).flatMap(UUID.init(uuidString:))
        else { throw BenchError("sign-up failed: \(body)") }
        return (token, userID)
    }

    func startAttempt(_ challengeID: UUID, token: String) async throws -> String {
        let body = try await json(.POST, "/v1/attempts", ["challengeID": challengeID.uuidString], token: token)
        guard let id = (body["attempt"] as? [String: Any])?["attemptID"] as? String else { throw BenchError("start failed: \(body)") }
        return id
    }

    /// One check-in; returns its latency in milliseconds.
    func tick(_ attemptID: String, done: Bool, token: String) async throws -> Double {
        let start = ContinuousClock.now
        _ = try await json(.PUT, "/v1/attempts/\(attemptID)/tasks/t", ["done": done], token: token)
        return milliseconds(ContinuousClock.now - start)
    }

    /// The caller's score on a leaderboard (`…/me`); 0 while they have no entry.
    func score(_ path: String, token: String) async throws -> Int {
        var request = HTTPClientRequest(url: gateway + path)
        request.headers.add(name: "authorization", value: "Bearer \(token)")
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        if response.status == .notFound { return 0 }
        guard response.status == .ok, let object = try JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any] else {
            throw BenchError("GET \(path): \(response.status.code) \(String(buffer: bytes))")
        }
        return (object["score"] as? NSNumber)?.intValue ?? 0
    }

    func json(_ method: HTTPMethod, _ path: String, _ body: [String: Any], token: String?) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: gateway + path)
        request.method = method
        request.headers.add(name: "content-type", value: "application/json")
        if let token { request.headers.add(name: "authorization", value: "Bearer \(token)") }
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]) ?? [:]
        guard (200..<300).contains(response.status.code) else { throw BenchError("\(method) \(path): \(response.status.code) \(object)") }
        return object
    }

    /// Progress learns of new users and definitions from events: retry until it has.
    func retrying<T>(_ body: () async throws -> T) async throws -> T {
        for _ in 0..<100 {
            if let value = try? await body() { return value }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await body()
    }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
