import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgePostgres

/// Due daily reminders sent per second, and their lag behind the users' local time (issue 20: 10,000 due in one
/// minute, all sent within 60 s).
///
/// `users` guests sign up through the gateway, spread over several zones (one of them not a whole hour from UTC),
/// then each sets their daily reminder time through `PUT /v1/me/preferences` (no quiet hours) to the local wall-clock
/// minute that is, in their own zone, one instant T: the next whole minute far enough ahead for the preferences to
/// reach notifications. Before T the bench checks that notifications scheduled every one of them at T. From T it polls
/// the notifications schema's inbox (an administrator's connection, every `poll` ms) for the rows keyed
/// `daily-reminder:<local date>` of the bench's users: a reminder counts as sent when the bench first sees its inbox
/// row, so each lag is an upper bound, coarser by up to one poll. Bench users never check in, so none is skipped.
struct ReminderBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reminders", abstract: "Due daily reminders sent per second and their lag behind local time, N due at one instant.")

    @Option(help: "Gateway base URL.") var gateway = "http://127.0.0.1:8080"
    @Option(help: "An administrator's URL of the database holding the notifications schema (the inbox is read there).") var database: String
    @Option(help: "Guests, each with a daily reminder due at the same instant.") var users = 10_000
    @Option(help: "Requests in flight while seeding.") var connections = 32
    @Option(help: "Milliseconds between polls of the inbox.") var poll = 200
    @Option(help: "Seconds after the due instant to wait for every reminder.") var deadline = 120
    @OptionGroup var output: ResultsOption

    /// The zones the guests are spread over, in turn: Kolkata is 5:30 and Kathmandu 5:45 from UTC.
    static let zones = ["Europe/Rome", "Asia/Tokyo", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Adelaide"]
    static let targetSeconds = 60.0

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
            try await measure(GatewayClient(gateway: gateway, client: http))
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    func measure(_ api: GatewayClient) async throws {
        let logger = Logger(label: "bench")
        let calendars = try Self.zones.map { zone in
            guard let calendar = LocalCalendar(zoneNamed: zone) else { throw BenchError("\(zone) is not a zone here") }
            return calendar
        }

        // 1. Sign-ups through the gateway.
        print("Signing up \(users) guests over \(Self.zones.joined(separator: ", ")) (\(connections) in flight)...")
        var started = ContinuousClock.now
        let guests = try await bounded(0..<users) { index in
            let zone = Self.zones[index % Self.zones.count]
            let (token, userID) = try await api.guestAccount("Reminder \(index)", zone: zone)
            return Guest(index: index, token: token, userID: userID, zone: zone)
        }.sorted { $0.index < $1.index }
        let signUp = ContinuousClock.now - started
        let signUpRate = Double(users) / max(0.001, seconds(signUp))
        print(String(format: "  signed up in %@ (%.0f/s)", format(signUp), signUpRate))

        // 2. The instant T every reminder is due: the next whole minute after the preferences (as many requests as the
        // sign-ups, each costing about twice as much: given three times as long) and 30 s for notifications to hear of them.
        let earliest = Date().addingTimeInterval(3 * Double(users) / signUpRate + 30)
        let due = Date(timeIntervalSince1970: (earliest.timeIntervalSince1970 / 60).rounded(.up) * 60)
        let local = try Dictionary(uniqueKeysWithValues: zip(Self.zones, calendars).map { zone, calendar in
            let date = calendar.date(at: due)
            let minutes = Int((due.timeIntervalSince1970 + Double(calendar.timeZone.secondsFromGMT(for: due))) / 60) % (24 * 60)
            guard let time = LocalTime(hour: minutes / 60, minute: minutes % 60), calendar.instant(of: time, on: date) == due else {
                throw BenchError("\(Timestamp.format(due)) is not one wall-clock minute in \(zone) (a DST change?); run the bench again later")
            }
            return (zone, (date: date, time: time))
        })
        print("All reminders due at \(Timestamp.format(due)): "
            + Self.zones.map { "\($0) \(local[$0]!.time) on \(local[$0]!.date)" }.joined(separator: ", "))

        // 3. Each guest's daily reminder time, through the gateway (identity publishes it; notifications reschedules).
        print("Setting \(users) daily reminder times (PUT /v1/me/preferences, no quiet hours)...")
        started = ContinuousClock.now
        _ = try await bounded(guests) { guest in
            let body: [String: Any] = ["notificationsEnabled": true, "dailyReminderTime": local[guest.zone]!.time.description, "telemetryOptOut": false]
            return try await api.retrying { try await api.json(.PUT, "/v1/me/preferences", body, token: guest.token) }.count
        }
        let preferences = ContinuousClock.now - started
        print(String(format: "  set in %@ (%.0f/s); %.0f s before they are due", format(preferences),
                     Double(users) / max(0.001, seconds(preferences)), due.timeIntervalSinceNow))

        let admin = try DatabaseConfiguration(url: database, maximumConnections: 1)
        let userIDs = guests.map(\.userID)
        let keys = guests.map { "daily-reminder:\(local[$0.zone]!.date)" }
        let (expected, observations, created, slowestPoll) = try await PostgresClient.withRunning(admin.makeClient(logger: logger)) { client in
            try await client.withConnection { connection in
                try await connection.query("CREATE TEMP TABLE bench_reminders (user_id uuid PRIMARY KEY, key text NOT NULL)", logger: logger)
                try await connection.query(
                    "INSERT INTO bench_reminders (user_id, key) SELECT * FROM unnest(\(userIDs)::uuid[], \(keys)::text[])", logger: logger)
                try await connection.query("ANALYZE bench_reminders", logger: logger)
                func count(_ query: PostgresQuery) async throws -> Int {
                    try await connection.query(query, logger: logger).collect().first?.decode(Int.self) ?? 0
                }

                // 4. Notifications must have every reminder at T before T: otherwise the margin was too short and the
                // late ones went to tomorrow (the figures would mean nothing).
                var scheduled = 0
                while true {
                    scheduled = try await count(
                        "SELECT count(*) FROM notifications.reminders r JOIN bench_reminders b USING (user_id) WHERE r.fire_at = \(due)")
                    if scheduled == users || due.timeIntervalSinceNow < 1 { break }
                    try await Task.sleep(for: .milliseconds(200))
                }
                guard scheduled == users else {
                    throw BenchError("only \(scheduled) of \(users) reminders were scheduled for \(Timestamp.format(due)) before it came")
                }
                // A guest who signed up just before the default 09:00 may have had today's reminder already: the
                // same key, so none is sent at T.
                let already = try await count("SELECT count(*) FROM notifications.inbox i JOIN bench_reminders b USING (user_id, key)")
                print("  notifications has all \(users) scheduled at T" + (already > 0 ? "; \(already) already had that day's reminder" : ""))

                // 5. From T: how many of them are in the inbox, every `poll` ms.
                try await Task.sleep(for: .seconds(max(0, due.timeIntervalSinceNow)))
                var observations: [(at: Date, sent: Int)] = []
                var created: (Date, Date)?
                var slowestPoll = 0.0
                while true {
                    let asked = ContinuousClock.now
                    let row = try await connection.query(
                        """
                        SELECT count(*), min(i.created_at), max(i.created_at) FROM notifications.inbox i JOIN bench_reminders b USING (user_id, key)
                        WHERE i.created_at >= \(due)
                        """, logger: logger
                    ).collect().first
                    let seen = Date()
                    slowestPoll = max(slowestPoll, milliseconds(ContinuousClock.now - asked))
                    let (sent, first, last) = try row?.decode((Int, Date?, Date?).self) ?? (0, nil, nil)
                    if sent > (observations.last?.sent ?? 0) { observations.append((seen, sent)) }
                    if let first, let last { created = (first, last) }
                    if sent >= users - already || seen.timeIntervalSince(due) > Double(deadline) { break }
                    try await Task.sleep(until: asked.advanced(by: .milliseconds(poll)), clock: .continuous)
                }
                return (users - already, observations, created, slowestPoll)
            }
        }

        // 6. The figures: each reminder's lag is when the bench first saw it, less T.
        let sent = observations.last?.sent ?? 0
        let lags = observations.map { ($0.at.timeIntervalSince(due), $0.sent) }
        func lag(_ quantile: Double) -> Double? {
            let needed = max(1, Int((quantile * Double(expected)).rounded(.up)))
            return lags.first { $0.1 >= needed }?.0
        }
        let lastLag = lags.last?.0
        let allSent = sent >= expected
        let rate = lastLag.map { Double(sent) / max(0.001, $0) } ?? 0
        func ms(_ value: Double?) -> String { value.map { String(format: "%.0f ms", $0 * 1000) } ?? "not sent within \(deadline) s" }

        print("")
        print("Daily reminders due at one instant (\(Self.zones.count) zones), sent by notifications (the inbox, polled every \(poll) ms;"
            + String(format: " slowest poll %.0f ms):", slowestPoll))
        print("  due \(expected), sent \(sent)\(allSent ? "" : " (\(expected - sent) not sent within \(deadline) s)")")
        print("  sent so far:  " + stride(from: 5, through: Int((lastLag ?? 0).rounded(.up)) + 4, by: 5).map { mark in
            "\(mark) s \(lags.last { $0.0 <= Double(mark) }?.1 ?? 0)"
        }.joined(separator: ", "))
        print(String(format: "  %.0f reminders/s (sent ÷ time from T to the last one)", rate)
            + (lags.count > 1 ? String(format: "; %.0f/s from the first to the last", Double(sent - lags[0].1) / max(0.001, lags.last!.0 - lags[0].0)) : ""))
        print("  lag behind local time: p50 \(ms(lag(0.5))), p99 \(ms(lag(0.99))), max \(ms(allSent ? lastLag : nil))")
        if let (first, last) = created {
            print(String(format: "  (the inbox rows' created_at, the scheduler's tick time, runs from T + %.0f ms to T + %.0f ms)",
                         first.timeIntervalSince(due) * 1000, last.timeIntervalSince(due) * 1000))
        }
        let met = allSent && (lastLag ?? .infinity) <= Self.targetSeconds
        print("  target: all \(expected) sent within 60 s of their local time: \(met ? "met" : "MISSED")")

        let unsent = Double(deadline)
        try output.record([
            BenchFigure("reminders", "reminders sent per second (\(expected) due at one instant)", rate, "/s"),
            BenchFigure("reminders", "reminder lag behind local time p50", (lag(0.5) ?? unsent) * 1000, "ms"),
            BenchFigure("reminders", "reminder lag behind local time p99", (lag(0.99) ?? unsent) * 1000, "ms"),
            BenchFigure(
                "reminders", "all \(expected) due reminders sent within (s)", allSent ? lastLag ?? unsent : unsent, "s", target: "≤ 60 s", met: met),
        ])
    }

    /// `body` for each element, `connections` at a time; the results in the order they finished.
    func bounded<S: Sequence & Sendable, T: Sendable>(
        _ elements: S, _ body: @escaping @Sendable (S.Element) async throws -> T
    ) async throws -> [T] where S.Element: Sendable {
        try await withThrowingTaskGroup(of: T.self) { group in
            var results: [T] = []
            var inFlight = 0
            for element in elements {
                if inFlight >= connections, let result = try await group.next() {
                    results.append(result)
                    inFlight -= 1
                }
                group.addTask { try await body(element) }
                inFlight += 1
            }
            for try await result in group { results.append(result) }
            return results
        }
    }

    func seconds(_ duration: Duration) -> Double { milliseconds(duration) / 1000 }
}
