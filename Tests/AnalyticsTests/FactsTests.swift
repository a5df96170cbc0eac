import AnalyticsDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeTestSupport
import Testing

@testable import AnalyticsService

/// Events applied through the consumer's own handlers on a real PostgreSQL, then the KPIs read back.
@Suite("Analytics: facts and KPIs on PostgreSQL", .tags(.integration), .kind(.integration, needsDatabase: true), .serialized)
struct FactsTests {
    struct Stage {
        let client: PostgresClient
        let database: TestDatabase
        let logger: Logger
        let handlers = AnalyticsService.handlers

        func apply<Payload: EventPayload>(_ payload: Payload) async throws {
            let record = try EventRecord(CloudEvent(source: "/test", time: Date(), data: payload))
            try await client.withConnection { connection in
                _ = try await handlers.apply(record, on: connection, logger: logger)
            }
        }

        func report(_ from: String, _ to: String, now: String) async throws -> KPIReport {
            try await PostgresKPIQueries(client: client, logger: logger).report(for: LocalDate(from)!...LocalDate(to)!, now: instant(now))
        }

        func day(_ report: KPIReport, _ date: String) -> DayKPIs {
            report.days.first { $0.date == LocalDate(date)! }!
        }

        func count(_ query: PostgresQuery) async throws -> Int {
            try await database.count(query)
        }
    }

    static func run(_ body: @Sendable (Stage) async throws -> Void) async throws {
        try await withTestDatabase(services: ["analytics"]) { database in
            let logger = Logger.test("analytics")
            let client = database.configuration(for: "analytics").makeClient(schema: "analytics", logger: logger)
            try await PostgresClient.withRunning(client) { client in
                try await Migrator.migrate([MessagingMigrations.set, AnalyticsMigrations.set], schema: "analytics", client: client, logger: logger)
                try await body(Stage(client: client, database: database, logger: logger))
            }
        }
    }

    static func instant(_ text: String) -> Date { Timestamp.parse(text)! }
    func instant(_ text: String) -> Date { Self.instant(text) }

    func registered(_ user: UUID, _ time: String, zone: String = "Europe/Rome") -> UserRegistered {
        UserRegistered(userID: user, displayName: "Someone", timeZone: zone, locale: nil, kind: .guest, registeredAt: instant(time))
    }

    func started(_ attempt: UUID, _ user: UUID, _ time: String) -> AttemptStarted {
        AttemptStarted(
            attemptID: attempt, userID: user, challengeID: UUID(), challengeVersion: 1, kind: .curated, attemptNumber: 1,
            startedOn: LocalDate("2026-11-02")!, timeZone: "Europe/Rome", groupID: nil, startedAt: instant(time))
    }

    func checkIn(_ user: UUID, _ date: String, at time: String) -> CheckInRecorded {
        CheckInRecorded(
            checkInID: UUID(), userID: user, attemptID: UUID(), challengeID: UUID(), challengeVersion: 1, kind: .curated, groupID: nil,
            taskID: "read", taskKind: .checkbox, action: .done, localDate: LocalDate(date)!, dayNumber: 1, quantity: nil, unit: nil,
            photoID: nil, happenedAt: instant(time), recordedAt: instant(time), taskComplete: true, dayComplete: true)
    }

    func judged(_ attempt: UUID, _ user: UUID, _ date: String, _ outcome: PeriodOutcome) -> DayJudged {
        DayJudged(
            userID: user, attemptID: attempt, challengeID: UUID(), kind: .curated, groupID: nil, period: .day, localDate: LocalDate(date)!,
            dayNumber: 1, outcome: outcome, missedTaskIDs: [], currentStreak: 0, bestStreak: 0, judgedAt: instant("\(date)T23:30:00Z"))
    }

    func ended(_ attempt: UUID, _ user: UUID, _ date: String, _ end: AttemptEnd) -> AttemptEnded {
        AttemptEnded(
            attemptID: attempt, userID: user, challengeID: UUID(), kind: .curated, groupID: nil, attemptNumber: 1, end: end,
            endedOn: LocalDate(date)!, dayNumber: 3, reason: nil, missedTaskIDs: [], daysCompleted: 1, bestStreak: 1, points: 0,
            endedAt: instant("\(date)T23:30:00Z"))
    }

    func broken(_ attempt: UUID, _ user: UUID, _ date: String, previous: Int) -> StreakChanged {
        StreakChanged(
            userID: user, attemptID: attempt, challengeID: UUID(), kind: .curated, groupID: nil, period: .day, change: .broken,
            previous: previous, current: 0, best: previous, freezesLeft: 0, localDate: LocalDate(date)!, changedAt: instant("\(date)T23:30:00Z"))
    }

    func preferences(_ user: UUID, optOut: Bool, at time: String) -> PreferencesChanged {
        PreferencesChanged(
            userID: user, notificationsEnabled: true, dailyReminderTime: nil, quietHours: nil, disabledCategories: [], telemetryOptOut: optOut,
            changedAt: instant(time))
    }

    @Test("one Rome cohort: retention on local day 7, start in the first session, check-ins on days that expected work, ends, breaks")
    func cohort() async throws {
        try await Self.run { stage in
            let (a, b, c) = (UUID(), UUID(), UUID())
            let (a1, a2, b1) = (UUID(), UUID(), UUID())
            for user in [a, b, c] { try await stage.apply(registered(user, "2026-11-02T08:00:00Z")) }
            // A starts 10 minutes in: the first session. B starts 45 minutes in, with nothing between: a second session.
            try await stage.apply(started(a1, a, "2026-11-02T08:10:00Z"))
            try await stage.apply(started(b1, b, "2026-11-02T08:45:00Z"))
            // A acts at 23:30 on its local day 7 (2026-11-09); B at 00:30 on day 8, having skipped day 7.
            try await stage.apply(checkIn(a, "2026-11-09", at: "2026-11-09T22:30:00Z"))
            try await stage.apply(checkIn(b, "2026-11-08", at: "2026-11-08T10:00:00Z"))
            try await stage.apply(checkIn(b, "2026-11-10", at: "2026-11-09T23:30:00Z"))
            // C opts out on day 2: registered, but measured in neither cohort KPI.
            try await stage.apply(preferences(c, optOut: true, at: "2026-11-04T10:00:00Z"))

            try await stage.apply(checkIn(a, "2026-11-03", at: "2026-11-03T09:00:00Z"))
            try await stage.apply(checkIn(b, "2026-11-03", at: "2026-11-03T09:00:00Z"))
            try await stage.apply(judged(a1, a, "2026-11-03", .completed))
            try await stage.apply(judged(b1, b, "2026-11-03", .missed))
            try await stage.apply(judged(a1, a, "2026-11-04", .missed))
            try await stage.apply(judged(a1, a, "2026-11-05", .rest))
            try await stage.apply(broken(a1, a, "2026-11-04", previous: 1))
            try await stage.apply(broken(a2, a, "2026-11-06", previous: 0))
            try await stage.apply(broken(b1, b, "2026-11-06", previous: 4))
            try await stage.apply(ended(a1, a, "2026-11-04", .failed))
            try await stage.apply(
                AttemptRestarted(previousAttemptID: a1, attemptID: a2, userID: a, challengeID: UUID(), kind: .curated, attemptNumber: 2, restartedAt: instant("2026-11-05T08:00:00Z")))
            try await stage.apply(ended(b1, b, "2026-11-06", .completed))
            try await stage.apply(ended(a2, a, "2026-11-06", .abandoned))

            let report = try await stage.report("2026-11-02", "2026-11-08", now: "2026-11-11T00:00:00Z")
            let first = stage.day(report, "2026-11-02")
            #expect(first.registrations == 3)
            #expect(first.values.day7Retention == KPIValue(numerator: 1, denominator: 2))
            #expect(first.values.challengeStartRate == KPIValue(numerator: 1, denominator: 2))
            #expect(stage.day(report, "2026-11-03").values.dailyCheckInRate == KPIValue(numerator: 2, denominator: 2))
            #expect(stage.day(report, "2026-11-04").values.dailyCheckInRate == KPIValue(numerator: 0, denominator: 1))
            #expect(stage.day(report, "2026-11-05").values.dailyCheckInRate == KPIValue())
            #expect(stage.day(report, "2026-11-04").values.completionRate == KPIValue(numerator: 0, denominator: 1))
            #expect(stage.day(report, "2026-11-04").values.restartRate == KPIValue(numerator: 1, denominator: 1))
            #expect(stage.day(report, "2026-11-06").values.completionRate == KPIValue(numerator: 1, denominator: 2))
            #expect(stage.day(report, "2026-11-04").values.averageStreakBeforeBreak == KPIValue(numerator: 1, denominator: 1))
            #expect(stage.day(report, "2026-11-06").values.averageStreakBeforeBreak == KPIValue(numerator: 4, denominator: 1))

            let week = try #require(report.cohortWeeks.first)
            #expect(report.cohortWeeks.count == 1)
            #expect(week.week == LocalDate("2026-11-02")!)
            #expect(week.users == 3)
            #expect(week.values.day7Retention == KPIValue(numerator: 1, denominator: 2))
            #expect(week.values.dailyCheckInRate == KPIValue(numerator: 2, denominator: 3))
            #expect(week.values.completionRate == KPIValue(numerator: 1, denominator: 3))
            #expect(week.values.restartRate == KPIValue(numerator: 1, denominator: 1))
            #expect(week.values.averageStreakBeforeBreak == KPIValue(numerator: 5, denominator: 2))
            #expect(report.totals.dailyCheckInRate == KPIValue(numerator: 2, denominator: 3))

            // Before day 7 has ended in Rome, retention is not measured yet; the first sessions are over.
            let early = try await stage.report("2026-11-02", "2026-11-02", now: "2026-11-09T22:59:00Z")
            #expect(early.days[0].values.day7Retention == KPIValue())
            #expect(early.days[0].values.challengeStartRate == KPIValue(numerator: 1, denominator: 2))
            // While a first session may still go on (no 30 minutes of quiet yet), the start rate waits for it.
            let newcomer = UUID()
            try await stage.apply(registered(newcomer, "2026-11-12T10:00:00Z"))
            #expect(try await stage.report("2026-11-12", "2026-11-12", now: "2026-11-12T10:29:00Z").days[0].values.challengeStartRate == KPIValue())
            #expect(
                try await stage.report("2026-11-12", "2026-11-12", now: "2026-11-12T10:31:00Z").days[0].values.challengeStartRate
                    == KPIValue(numerator: 0, denominator: 1))
        }
    }

    @Test("day 7 follows the user's zone across the spring-forward night (Los Angeles, 8 March 2026)")
    func daylightSaving() async throws {
        try await Self.run { stage in
            let (early, late) = (UUID(), UUID())
            for user in [early, late] { try await stage.apply(registered(user, "2026-03-01T20:00:00Z", zone: "America/Los_Angeles")) }
            // 23:30 PDT on 8 March is day 7; 00:30 PDT on 9 March (23:30 on 8 March by the winter offset) is not.
            try await stage.apply(checkIn(early, "2026-03-08", at: "2026-03-09T06:30:00Z"))
            try await stage.apply(checkIn(late, "2026-03-09", at: "2026-03-09T07:30:00Z"))
            let report = try await stage.report("2026-03-01", "2026-03-01", now: "2026-03-10T00:00:00Z")
            #expect(report.days[0].values.day7Retention == KPIValue(numerator: 1, denominator: 2))
            #expect(try await stage.report("2026-03-01", "2026-03-01", now: "2026-03-09T06:59:00Z").days[0].values.day7Retention.denominator == 0)
        }
    }

    @Test("an opt-out erases what was recorded from its instant on, ignores what comes during it; an opt-in counts again")
    func telemetryOptOut() async throws {
        try await Self.run { stage in
            let user = UUID()
            try await stage.apply(registered(user, "2026-11-02T08:00:00Z"))
            try await stage.apply(checkIn(user, "2026-11-03", at: "2026-11-03T09:00:00Z"))
            // Applied before the opt-out (another topic), though it happened after it.
            try await stage.apply(checkIn(user, "2026-11-04", at: "2026-11-04T12:00:00Z"))
            try await stage.apply(preferences(user, optOut: true, at: "2026-11-04T10:00:00Z"))
            try await stage.apply(preferences(user, optOut: true, at: "2026-11-04T11:00:00Z"))
            try await stage.apply(preferences(user, optOut: false, at: "2026-11-06T10:00:00Z"))
            try await stage.apply(checkIn(user, "2026-11-05", at: "2026-11-05T09:00:00Z"))
            try await stage.apply(checkIn(user, "2026-11-07", at: "2026-11-07T09:00:00Z"))
            let days = try await stage.client.query("SELECT local_date FROM check_in_days WHERE user_id = \(user) ORDER BY 1", logger: stage.logger)
                .collect().map { try $0.decode(LocalDate.self) }
            #expect(days == [LocalDate("2026-11-03")!, LocalDate("2026-11-07")!])
            #expect(try await stage.count("SELECT count(*) FROM analytics.telemetry_opt_outs WHERE user_id = \(user)") == 1)
            #expect(try await stage.count("SELECT count(*) FROM analytics.activity WHERE user_id = \(user) AND at >= '2026-11-04T10:00:00Z' AND at < '2026-11-06T10:00:00Z'") == 0)
        }
    }

    @Test("a deleted user is forgotten, and what arrives about them later is ignored")
    func deletion() async throws {
        try await Self.run { stage in
            let (user, other) = (UUID(), UUID())
            try await stage.apply(registered(user, "2026-11-02T08:00:00Z"))
            try await stage.apply(registered(other, "2026-11-02T08:00:00Z"))
            try await stage.apply(checkIn(user, "2026-11-03", at: "2026-11-03T09:00:00Z"))
            try await stage.apply(UserDeleted(userID: user, deletedAt: instant("2026-11-04T09:00:00Z")))
            try await stage.apply(checkIn(user, "2026-11-04", at: "2026-11-04T08:00:00Z"))
            try await stage.apply(judged(UUID(), user, "2026-11-04", .missed))
            for table in ["users", "activity", "attempts", "active_days", "check_in_days", "streak_breaks", "telemetry_opt_outs"] {
                #expect(try await stage.count("SELECT count(*) FROM analytics.\(unescaped: table) WHERE user_id = \(user)") == 0, "\(table)")
            }
            #expect(try await stage.report("2026-11-02", "2026-11-02", now: "2026-11-20T00:00:00Z").days[0].registrations == 1)
        }
    }
}
