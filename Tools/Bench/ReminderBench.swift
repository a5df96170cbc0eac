import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// A wave of daily reminders due at one instant (issue 47: 100,000 in the inbox within 10 s), beside PostgreSQL
/// inserting as many inbox-shaped rows in one `INSERT ... SELECT` (the floor); then the next day's wave shared by two
/// notifications replicas.
///
/// `users` guests sign up through the gateway, spread over several zones (one of them not a whole hour from UTC), then
/// each sets, through `PUT /v1/me/preferences` (no quiet hours, the weekly digest off so that no digest wave mixes in),
/// their daily reminder to the local wall-clock minute that is, in their own zone, one instant T two hours ahead.
/// Notifications runs on a simulated clock (`SIMULATED_CLOCK=true`, development only): once it has scheduled every one
/// of them at T, the bench moves its clock to T and times, from that moment, how long until every reminder is sent.
/// Every `poll` ms it reads the replicas' `surge_reminders_sent_total` (counted as each batch commits its inbox rows;
/// a query counting rows would load PostgreSQL during the wave it measures); a reminder counts as sent when the bench
/// first sees it counted, so each time is an upper bound, coarser by up to one poll. At the end every one must be in
/// the inbox, once, and none still due. With `--second-replica-command`, a second replica starts, and both clocks move to the next day's
/// instant: the same wave, shared. Bench users never check in, so none is skipped.
struct ReminderBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reminders", abstract: "A wave of daily reminders due at one instant, beside a bulk insert of as many rows; then shared by two replicas.")

    @Option(help: "Gateway base URL.") var gateway = "http://127.0.0.1:8080"
    @Option(help: "Notifications' base URL (its simulated clock is moved there).") var notifications: String
    @Option(help: "An administrator's URL of the database holding the notifications schema (the inbox is read there).") var database: String
    @Option(help: "Guests, each with a daily reminder due at the same instant.") var users = 100_000
    @Option(help: "Requests in flight while seeding.") var connections = 64
    @Option(help: "Milliseconds between polls of the reminders still due.") var poll = 200
    @Option(help: "Preferences set before waiting for notifications to schedule them.") var chunk = 5000
    @Option(help: "Seconds after the due instant to wait for every reminder.") var deadline = 300
    @Option(help: "Shell command that starts a second notifications replica on a simulated clock.") var secondReplicaCommand: String?
    @Option(help: "The second replica's base URL.") var secondReplicaURL: String?
    @Option(help: "Where the second replica's process id is written (the bench stops it when done).") var secondReplicaPidFile: String?
    @Option(help: "Port of the FCM fake the bench serves (notifications' FCM_ENDPOINT and FCM_TOKEN_URI point there).") var fcmFakePort: Int?
    @Option(help: "The FCM fake's TLS certificate (PEM; notifications trusts it through PUSH_CA_FILE).") var fcmFakeCertificate: String?
    @Option(help: "The FCM fake's private key (PEM).") var fcmFakeKey: String?
    @Option(help: "Guests who register an FCM device: their reminders are pushed to the fake.") var pushUsers = 20_000
    @Option(help: "Directory of <process>.pid files whose CPU during a wave is reported (the services and the broker).") var pidDirectory: String?
    @Option(help: "PostgreSQL's data directory (its postmaster.pid names the server whose CPU during a wave is reported).") var pgdata: String?
    @OptionGroup var output: ResultsOption

    /// The zones the guests are spread over, in turn: Kolkata is 5:30 and Kathmandu 5:45 from UTC.
    static let zones = ["Europe/Rome", "Asia/Tokyo", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Adelaide"]
    static let targetSeconds = 10.0
    static let floorTarget = 10.0
    static let sharedTarget = 0.6
    static let pushTarget = 2000.0

    struct Guest: Sendable {
        var index: Int
        var token: String
        var userID: UUID
        var zone: String
    }

    func run() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await measure(GatewayClient(gateway: gateway, client: http), http: http)
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    func measure(_ api: GatewayClient, http: HTTPClient) async throws {
        let logger = Logger(label: "bench")
        let calendars = try Self.zones.map { zone in
            guard let calendar = LocalCalendar(zoneNamed: zone) else { throw BenchError("\(zone) is not a zone here") }
            return calendar
        }

        // 1. Sign-ups through the gateway.
        print("Signing up \(users) guests over \(Self.zones.joined(separator: ", ")) (\(connections) in flight)...")
        var started = ContinuousClock.now
        let guests = try await mapConcurrently(Array(0..<users), limit: connections) { index in
            let zone = Self.zones[index % Self.zones.count]
            let (token, userID) = try await api.retrying { try await api.guestAccount("Reminder \(index)", zone: zone) }
            return Guest(index: index, token: token, userID: userID, zone: zone)
        }.sorted { $0.index < $1.index }
        print(String(format: "  signed up in %@ (%.0f/s)", format(ContinuousClock.now - started), Double(users) / seconds(ContinuousClock.now - started)))

        // 2. The instant T every reminder is due, two hours ahead on the whole minute: one wall-clock minute in each zone
        // (not in a DST gap), and the next day's instant of the same minute (the second wave).
        let due = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 + 7200) / 60).rounded(.up) * 60)
        let local = try Dictionary(uniqueKeysWithValues: zip(Self.zones, calendars).map { zone, calendar in
            let date = calendar.date(at: due)
            let minutes = Int((due.timeIntervalSince1970 + Double(calendar.timeZone.secondsFromGMT(for: due))) / 60) % (24 * 60)
            guard let time = LocalTime(hour: minutes / 60, minute: minutes % 60), calendar.instant(of: time, on: date) == due else {
                throw BenchError("\(Timestamp.format(due)) is not one wall-clock minute in \(zone) (a DST change?); run the bench again later")
            }
            return (zone, (date: date, time: time, nextDay: calendar.instant(of: time, on: date.adding(days: 1))))
        })
        let nextDue = Self.zones.map { local[$0]!.nextDay }.max()!
        print("All reminders due at T = \(Timestamp.format(due)): "
            + Self.zones.map { "\($0) \(local[$0]!.time) on \(local[$0]!.date)" }.joined(separator: ", "))

        // 3. Each guest's daily reminder time, through the gateway (identity publishes it; notifications reschedules),
        // `chunk` at a time: the next chunk waits until notifications has scheduled the last one's, so that its consumer
        // never falls further behind than a chunk (the bench's broker keeps only a few MB per partition).
        print("Setting \(users) daily reminder times (PUT /v1/me/preferences, no quiet hours, no weekly digest), \(chunk) at a time; "
            + "the first \(fcmFakePort == nil ? 0 : min(pushUsers, users)) register an FCM device (POST /v1/me/push-tokens)...")
        started = ContinuousClock.now
        let admin = try DatabaseConfiguration(url: database, maximumConnections: 1)
        try await PostgresClient.withRunning(admin.makeClient(logger: logger)) { client in
            for first in stride(from: 0, to: users, by: chunk) {
                let part = Array(guests[first..<min(users, first + chunk)])
                _ = try await mapConcurrently(part, limit: connections) { guest in
                    let body: [String: Any] = [
                        "notificationsEnabled": true, "dailyReminderTime": local[guest.zone]!.time.description, "telemetryOptOut": false,
                        "disabledCategories": ["digest"],
                    ]
                    _ = try await api.retrying { try await api.json(.PUT, "/v1/me/preferences", body, token: guest.token) }
                    // The first `pushUsers` register an FCM device, while their access token is fresh.
                    if fcmFakePort != nil, guest.index < pushUsers {
                        let device: [String: Any] = ["platform": "fcm", "token": "bench-fcm-\(guest.userID.uuidString.lowercased())"]
                        _ = try await api.retrying { try await api.json(.POST, "/v1/me/push-tokens", device, token: guest.token) }
                    }
                    return guest.index
                }
                let asked = ContinuousClock.now
                while try await client.query("SELECT count(*) FROM notifications.reminders WHERE fire_at = \(due)", logger: logger)
                    .collect().first?.decode(Int.self) ?? 0 < first + part.count
                {
                    guard ContinuousClock.now - asked < .seconds(300) else { throw BenchError("notifications did not schedule the preferences within 300 s") }
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
        }
        print(String(format: "  set and scheduled in %@ (%.0f/s)", format(ContinuousClock.now - started), Double(users) / seconds(ContinuousClock.now - started)))

        let fake = try fcmFakePort.flatMap { port in
            try fcmFakeCertificate.flatMap { certificate in try fcmFakeKey.map { try FCMFake(port: port, certificate: certificate, key: $0) } }
        }
        let pushed = fake == nil ? 0 : min(pushUsers, users)

        let waves = { @Sendable in
            try await measureWaves(due: due, nextDue: nextDue, local: local, guests: guests, fake: fake, pushed: pushed, http: http, logger: logger)
        }
        let (floor, one, two, push) = if let fake { try await fake.serving(waves) } else { try await waves() }
        try report(floor: floor, one: one, two: two, push: push)
    }

    struct PushTiming {
        var expected: Int
        var received: Int
        var seconds: Double
        var sinceWave: Double
        var connections: Int

        var rate: Double { Double(received) / max(seconds, 0.001) }
    }

    /// Waits until the fake has `expected` pushes (or the deadline); how fast they came, from the first to the last.
    func pushes(to fake: FCMFake, expected: Int, since wave: ContinuousClock.Instant) async throws -> PushTiming {
        while fake.received.messages < expected, ContinuousClock.now - wave < .seconds(deadline) {
            try await Task.sleep(for: .milliseconds(poll))
        }
        let received = fake.received
        let timing = PushTiming(
            expected: expected, received: received.messages,
            seconds: received.first.flatMap { first in received.last.map { milliseconds($0 - first) / 1000 } } ?? 0,
            sinceWave: received.last.map { milliseconds($0 - wave) / 1000 } ?? 0, connections: received.connections.count)
        print(String(format: "  pushes: %d of %d at the FCM fake, %.0f/s from the first to the last (the last %.2f s after T), over %d connection(s)",
                     timing.received, expected, timing.rate, timing.sinceWave, timing.connections))
        return timing
    }

    func measureWaves(
        due: Date, nextDue: Date, local: [String: (date: LocalDate, time: LocalTime, nextDay: Date)], guests: [Guest], fake: FCMFake?, pushed: Int,
        http: HTTPClient, logger: Logger
    ) async throws -> (Double, Wave.Timing, Wave.Timing?, PushTiming?) {
        let admin = try DatabaseConfiguration(url: database, maximumConnections: 1)
        return try await PostgresClient.withRunning(admin.makeClient(logger: logger)) { client in
            try await client.withConnection { connection in
                let wave = Wave(connection: connection, users: guests, cpu: cpuSeconds, logger: logger)
                try await wave.prepare()
                // 4. Notifications must have every reminder at T (the preferences took effect) before its clock moves.
                try await wave.waitScheduled(at: due, count: users, timeout: .seconds(600))
                print("  notifications has all \(users) scheduled at T")

                // 5. The floor: as many inbox-shaped rows (the inbox's columns and indexes, a logged table) in one
                // INSERT ... SELECT, the best of two.
                let floor = try await wave.bulkInsertFloor()
                print(String(format: "Floor: PostgreSQL inserts %d inbox-shaped rows in one INSERT ... SELECT in %.3f s (best of two)", users, floor))

                // 6. The wave on one replica: its clock moves to T.
                let one = try await wave.time(
                    due: due, keys: guests.map { "daily-reminder:\(local[$0.zone]!.date)" }, poll: .milliseconds(poll), deadline: .seconds(deadline),
                    sent: { try await remindersSent([notifications], http) }
                ) {
                    try await setClock(notifications, to: due, http)
                }
                print("")
                print("One replica, \(users) due at T:")
                one.report()
                var push: PushTiming?
                if let fake { push = try await pushes(to: fake, expected: pushed, since: one.started) }

                // 7. The next day's wave, two replicas sharing it.
                guard let secondReplicaCommand, let secondReplicaURL else { return (floor, one, nil, push) }
                print("")
                print("Starting a second notifications replica...")
                let partitions = try await assignedPartitions(notifications, http)
                let process = try await startReplica(secondReplicaCommand, url: secondReplicaURL, http)
                defer { try? BenchProcess.stop(process, name: "the second notifications replica") }
                // The consumer group's rebalance over before the wave, so that it does not load the machine meanwhile.
                let rebalanced = ContinuousClock.now
                while true {
                    let owned = [try await assignedPartitions(notifications, http), try await assignedPartitions(secondReplicaURL, http)]
                    if owned.allSatisfy({ $0 > 0 }) && owned.reduce(0, +) == partitions { break }
                    guard ContinuousClock.now - rebalanced < .seconds(60) else { throw BenchError("the two replicas did not share the partitions in 60 s") }
                    try await Task.sleep(for: .milliseconds(100))
                }
                try await wave.waitScheduled(at: nextDue, count: users, timeout: .seconds(120), exactly: false)
                let firstBefore = try await remindersSent([notifications], http)
                let two = try await wave.time(
                    due: nextDue, keys: guests.map { "daily-reminder:\(local[$0.zone]!.date.adding(days: 1))" }, poll: .milliseconds(poll),
                    deadline: .seconds(deadline), sent: { try await remindersSent([notifications, secondReplicaURL], http) }
                ) {
                    async let first: Void = setClock(notifications, to: nextDue, http)
                    async let second: Void = setClock(secondReplicaURL, to: nextDue, http)
                    _ = try await (first, second)
                }
                let firstSent = try await remindersSent([notifications], http) - firstBefore
                print("Two replicas, \(users) due at T + 1 day:")
                two.report()
                print("  shared: the first replica sent \(firstSent), the second \(two.sent - firstSent)")
                return (floor, one, two, push)
            }
        }
    }

    func report(floor: Double, one: Wave.Timing, two: Wave.Timing?, push: PushTiming?) throws {
        let unsent = Double(deadline)
        let oneSeconds = one.allSent ? one.seconds : unsent
        let met = one.allSent && oneSeconds <= Self.targetSeconds
        let overFloor = oneSeconds / max(floor, 0.001)
        print("")
        print(String(format: "  all %d sent within %.2f s of T (target ≤ %.0f s: %@); %.1f× the bulk insert floor (target ≤ %.0f×: %@)", users, oneSeconds,
                     Self.targetSeconds, met ? "met" : "MISSED", overFloor, Self.floorTarget, overFloor <= Self.floorTarget ? "met" : "MISSED"))
        var figures = [
            BenchFigure("reminders", "all \(users) due sent within (s)", oneSeconds, "s", target: "≤ \(Int(Self.targetSeconds)) s", met: met),
            BenchFigure("reminders", "reminders sent per second (\(users) due at one instant)", one.rate, "/s"),
            BenchFigure("reminders", "reminder lag behind local time p50", (one.lag(0.5) ?? unsent) * 1000, "ms"),
            BenchFigure("reminders", "reminder lag behind local time p99", (one.lag(0.99) ?? unsent) * 1000, "ms"),
            BenchFigure(
                "reminders", "reminder wave ÷ bulk insert floor", oneSeconds, "s", yardstick: .init(name: "INSERT ... SELECT of \(users) inbox rows (s)", value: floor),
                ratio: overFloor, target: "≤ \(Int(Self.floorTarget))×", met: overFloor <= Self.floorTarget),
        ]
        if let two {
            let twoSeconds = two.allSent ? two.seconds : unsent
            let shared = twoSeconds / max(oneSeconds, 0.001)
            print(String(format: "  two replicas: %.2f s, %.2f× one replica's (target ≤ %.1f×: %@)", twoSeconds, shared, Self.sharedTarget,
                         shared <= Self.sharedTarget ? "met" : "MISSED"))
            figures.append(
                BenchFigure(
                    "reminders", "two replicas' wave ÷ one replica's", twoSeconds, "s", yardstick: .init(name: "one replica's wave (s)", value: oneSeconds),
                    ratio: shared, target: "≤ \(Self.sharedTarget)×", met: two.allSent && shared <= Self.sharedTarget))
        }
        if let push {
            let met = push.received >= push.expected && push.rate >= Self.pushTarget
            print(String(format: "  pushes: %.0f/s to the FCM fake (target ≥ %.0f/s: %@)", push.rate, Self.pushTarget, met ? "met" : "MISSED"))
            figures.append(BenchFigure("push", "pushes/s to a local FCM fake", push.rate, "/s", target: "≥ \(Int(Self.pushTarget))/s", met: met))
        }
        try output.record(figures)
    }

    /// Moves a replica's simulated clock.
    func setClock(_ baseURL: String, to instant: Date, _ http: HTTPClient) async throws {
        var request = HTTPClientRequest(url: baseURL + "/internal/clock")
        request.method = .PUT
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"now": "\#(Timestamp.format(instant))"}"#))
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        guard response.status == .ok else {
            throw BenchError("\(baseURL) refused the clock move (\(response.status)): \(String(buffer: body)); is SIMULATED_CLOCK=true set for it?")
        }
    }

    /// The partitions a replica's consumer owns (`surge_kafka_assigned_partitions` on its /metrics).
    func assignedPartitions(_ baseURL: String, _ http: HTTPClient) async throws -> Int {
        try await metricSum("surge_kafka_assigned_partitions{", at: baseURL, http)
    }

    /// Daily reminders the replicas have written to the inbox so far (`surge_reminders_sent_total`).
    func remindersSent(_ baseURLs: [String], _ http: HTTPClient) async throws -> Int {
        var sent = 0
        for url in baseURLs { sent += try await metricSum(#"surge_reminders_sent_total{kind="daily-reminder""#, at: url, http) }
        return sent
    }

    /// The sum of the samples on a replica's /metrics page whose line starts with `prefix`.
    func metricSum(_ prefix: String, at baseURL: String, _ http: HTTPClient) async throws -> Int {
        let response = try await http.execute(HTTPClientRequest(url: baseURL + "/metrics"), timeout: .seconds(5))
        let page = String(buffer: try await response.body.collect(upTo: 1 << 22))
        return page.split(separator: "\n").filter { $0.hasPrefix(prefix) }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0) { $0 + Int($1) }
    }

    func startReplica(_ command: String, url: String, _ http: HTTPClient) async throws -> Int32 {
        let started = ContinuousClock.now
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command]
        try process.run()
        if let secondReplicaPidFile { try "\(process.processIdentifier)\n".write(toFile: secondReplicaPidFile, atomically: true, encoding: .utf8) }
        while true {
            var request = HTTPClientRequest(url: url + "/readyz")
            request.method = .GET
            if let response = try? await http.execute(request, timeout: .seconds(1)) {
                _ = try? await response.body.collect(upTo: 1 << 16)
                if response.status == .ok { break }
            }
            guard process.isRunning else { throw BenchError("the second replica exited") }
            guard ContinuousClock.now - started < .seconds(120) else { throw BenchError("the second replica was not ready in 120 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        return process.processIdentifier
    }

    func seconds(_ duration: Duration) -> Double { max(0.001, milliseconds(duration) / 1000) }

    /// CPU seconds so far: the machine's (every process, `/proc/stat`), and, where the bench was told where to find
    /// them, the services', the broker's, PostgreSQL's and the bench's own.
    @Sendable func cpuSeconds() -> [String: Double] {
        var seconds = pidDirectory.map { BenchProcess.cpuSeconds(of: StackBench.services + ["notifications-2", "broker"], pidDirectory: $0) } ?? [:]
        seconds["postgres"] = pgdata.flatMap { try? BenchProcess.postgresCPUSeconds(pgdata: $0) }
        seconds["bench"] = BenchProcess.stat(of: getpid())?.cpu
        seconds[Wave.Timing.machine] = try? MachineCPU.busySeconds()
        return seconds
    }
}

/// The bench's users' reminders as the notifications schema holds them, read on an administrator's connection.
struct Wave {
    let connection: PostgresConnection
    let users: [ReminderBench.Guest]
    let cpu: @Sendable () -> [String: Double]
    let logger: Logger

    func prepare() async throws {
        try await connection.query("CREATE TEMP TABLE bench_users (user_id uuid PRIMARY KEY)", logger: logger)
        try await connection.query("INSERT INTO bench_users SELECT * FROM unnest(\(users.map(\.userID))::uuid[])", logger: logger)
        try await connection.query("ANALYZE bench_users", logger: logger)
    }

    func count(_ query: PostgresQuery) async throws -> Int {
        try await connection.query(query, logger: logger).collect().first?.decode(Int.self) ?? 0
    }

    /// Waits until `count` of the users' reminders are due at `instant` (or, not `exactly`, by it).
    func waitScheduled(at instant: Date, count expected: Int, timeout: Duration, exactly: Bool = true) async throws {
        let started = ContinuousClock.now
        var scheduled = 0
        while ContinuousClock.now - started < timeout {
            scheduled = try await count(
                exactly
                    ? "SELECT count(*) FROM notifications.reminders r JOIN bench_users b USING (user_id) WHERE r.fire_at = \(instant)"
                    : "SELECT count(*) FROM notifications.reminders r JOIN bench_users b USING (user_id) WHERE r.fire_at <= \(instant)")
            if scheduled == expected { return }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw BenchError("only \(scheduled) of \(expected) reminders were scheduled for \(Timestamp.format(instant)) within \(timeout)")
    }

    /// Seconds for one `INSERT ... SELECT` of as many rows as there are users into a logged table shaped like the
    /// inbox (its columns, primary key, unique key and index), the best of two.
    func bulkInsertFloor() async throws -> Double {
        try await connection.query("DROP TABLE IF EXISTS public.bench_inbox_floor", logger: logger)
        try await connection.query("CREATE TABLE public.bench_inbox_floor (LIKE notifications.inbox INCLUDING ALL)", logger: logger)
        var best = Double.infinity
        for _ in 0..<2 {
            try await connection.query("TRUNCATE public.bench_inbox_floor", logger: logger)
            let started = ContinuousClock.now
            try await connection.query(
                """
                INSERT INTO public.bench_inbox_floor (notification_id, user_id, kind, key, title, body, deep_link, created_at)
                SELECT gen_random_uuid(), user_id, 'daily-reminder', 'daily-reminder:2026-11-30', 'Time to check in',
                       'Keep your streak going: check in today.', 'surge://today', now()
                FROM bench_users
                """, logger: logger)
            best = min(best, milliseconds(ContinuousClock.now - started) / 1000)
        }
        try await connection.query("DROP TABLE public.bench_inbox_floor", logger: logger)
        return best
    }

    struct Timing {
        var started: ContinuousClock.Instant
        var expected: Int
        var observations: [(seconds: Double, sent: Int)]
        var slowestPoll: Double
        /// CPU seconds each process (and the machine, `machine`) spent from the start until every reminder was seen handled.
        var cpu: [String: Double]

        static let machine = "machine"

        var sent: Int { observations.last?.sent ?? 0 }
        var allSent: Bool { sent >= expected }
        var seconds: Double { observations.last?.seconds ?? 0 }
        var rate: Double { Double(sent) / max(0.001, seconds) }

        func lag(_ quantile: Double) -> Double? {
            let needed = max(1, Int((quantile * Double(expected)).rounded(.up)))
            return observations.first { $0.sent >= needed }?.seconds
        }

        func report() {
            print("  due \(expected), sent \(sent)\(allSent ? "" : " (\(expected - sent) not sent by the deadline)")")
            let marks = stride(from: 1, through: Int(seconds.rounded(.up)), by: max(1, Int(seconds.rounded(.up)) / 10))
            print("  in the inbox by:  " + marks.map { mark in "\(mark) s \(observations.last { $0.seconds <= Double(mark) }?.sent ?? 0)" }.joined(separator: ", "))
            print(String(format: "  %.0f reminders/s; all in by %.2f s (p50 %.2f s, p99 %.2f s); slowest poll %.0f ms", rate, seconds, lag(0.5) ?? .nan,
                         lag(0.99) ?? .nan, slowestPoll))
            guard let machine = cpu[Self.machine] else { return }
            let processes = cpu.filter { $0.key != Self.machine && $0.value >= 0.05 }.sorted { $0.value > $1.value }
            print(String(format: "  CPU meanwhile: %.1f s machine-wide (%.0f µs a reminder); ", machine, machine / Double(max(1, sent)) * 1e6)
                + processes.map { String(format: "%@ %.1f s", $0.key as NSString, $0.value) }.joined(separator: ", "))
        }
    }

    /// From `start` (which makes the users' reminders due at `instant`), how many of them are sent (`counted` from
    /// before), every `poll`; then checks that each user has the inbox row keyed `keys` and no reminder is still due.
    func time(
        due instant: Date, keys: [String], poll: Duration, deadline: Duration, sent counted: () async throws -> Int, start: () async throws -> Void
    ) async throws -> Timing {
        try await connection.query("DROP TABLE IF EXISTS bench_keys", logger: logger)
        try await connection.query("CREATE TEMP TABLE bench_keys (user_id uuid PRIMARY KEY, key text NOT NULL)", logger: logger)
        try await connection.query(
            "INSERT INTO bench_keys SELECT * FROM unnest(\(users.map(\.userID))::uuid[], \(keys)::text[])", logger: logger)
        try await connection.query("ANALYZE bench_keys", logger: logger)
        func inInbox() async throws -> Int { try await count("SELECT count(*) FROM notifications.inbox i JOIN bench_keys b USING (user_id, key)") }
        let already = try await inInbox()
        guard already == 0 else { throw BenchError("\(already) of the wave's reminders were sent before it began") }
        let before = try await counted()
        let cpuBefore = cpu()
        let started = ContinuousClock.now
        try await start()
        var observations: [(seconds: Double, sent: Int)] = []
        var slowestPoll = 0.0
        while true {
            let asked = ContinuousClock.now
            let sent = try await counted() - before
            let seen = ContinuousClock.now
            slowestPoll = max(slowestPoll, milliseconds(seen - asked))
            if sent > (observations.last?.sent ?? 0) { observations.append((milliseconds(seen - started) / 1000, sent)) }
            if sent >= users.count || seen - started > deadline { break }
            try await Task.sleep(until: asked.advanced(by: poll), clock: .continuous)
        }
        let cpuSpent = cpu().compactMapValues { $0 }.reduce(into: [String: Double]()) { spent, entry in
            if let before = cpuBefore[entry.key] { spent[entry.key] = entry.value - before }
        }
        let inbox = try await inInbox()
        let due = try await count("SELECT count(*) FROM notifications.reminders WHERE fire_at <= \(instant)")
        guard (inbox == users.count && due == 0) || observations.last?.sent != users.count else {
            throw BenchError("every reminder was counted sent but \(inbox) of \(users.count) are in the inbox and \(due) still due")
        }
        return Timing(started: started, expected: users.count, observations: observations, slowestPoll: slowestPoll, cpu: cpuSpent)
    }
}
