import AnalyticsDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import Synchronization

/// Where KPI reports come from. `PostgresKPIQueries` computes them from the facts; `FixedKPIQueries` serves router
/// tests a report without a database.
protocol KPIQueries: Sendable {
    func report(for range: ClosedRange<LocalDate>, now: Date) async throws -> KPIReport
}

/// The KPIs computed from the facts when asked for, so a late event (day 7's activity, a restart weeks after a
/// failure) moves the figures of the day it belongs to.
struct PostgresKPIQueries: KPIQueries {
    let client: PostgresClient
    let logger: Logger

    /// The two ways facts are grouped: by the local day they happened on (cohort KPIs: by the day the users
    /// registered), or by the week the users registered in.
    enum Grouping {
        case day
        case cohortWeek
    }

    func report(for range: ClosedRange<LocalDate>, now: Date) async throws -> KPIReport {
        let days = try await values(.day, range, now: now)
        let weeks = try await values(.cohortWeek, range, now: now)
        return KPIReport(
            range: range,
            days: days.map { DayKPIs(date: $0.key, registrations: $0.value.users, values: $0.value.values) },
            cohortWeeks: weeks.map { CohortWeekKPIs(week: $0.key, users: $0.value.users, values: $0.value.values) })
    }

    private func values(_ grouping: Grouping, _ range: ClosedRange<LocalDate>, now: Date) async throws -> [LocalDate: (users: Int, values: KPIValues)] {
        var periods: [LocalDate: (users: Int, values: KPIValues)] = [:]
        for row in try await client.query(cohortQuery(grouping, range, now: now), logger: logger).collect() {
            let (period, users, retained, retentionKnown, startedEarly, firstSessionOver) = try row.decode((LocalDate, Int, Int, Int, Int, Int).self)
            periods[period, default: (0, KPIValues())].users = users
            periods[period, default: (0, KPIValues())].values.day7Retention = KPIValue(numerator: retained, denominator: retentionKnown)
            periods[period, default: (0, KPIValues())].values.challengeStartRate = KPIValue(numerator: startedEarly, denominator: firstSessionOver)
        }
        for row in try await client.query(checkInQuery(grouping, range), logger: logger).collect() {
            let (period, checkedIn, active) = try row.decode((LocalDate, Int, Int).self)
            periods[period, default: (0, KPIValues())].values.dailyCheckInRate = KPIValue(numerator: checkedIn, denominator: active)
        }
        for row in try await client.query(endQuery(grouping, range), logger: logger).collect() {
            let (period, ended, completed, failed, restarted) = try row.decode((LocalDate, Int, Int, Int, Int).self)
            periods[period, default: (0, KPIValues())].values.completionRate = KPIValue(numerator: completed, denominator: ended)
            periods[period, default: (0, KPIValues())].values.restartRate = KPIValue(numerator: restarted, denominator: failed)
        }
        for row in try await client.query(breakQuery(grouping, range), logger: logger).collect() {
            let (period, days, breaks) = try row.decode((LocalDate, Int, Int).self)
            periods[period, default: (0, KPIValues())].values.averageStreakBeforeBreak = KPIValue(numerator: days, denominator: breaks)
        }
        return periods
    }

    /// Registrations, Day-7 retention and the first-session start rate of the users who registered in the range.
    /// A user who opted out of telemetry before their day 7 ended is registered but measured in neither: what they
    /// did afterwards is not ours to know, and counting them as gone would be wrong.
    private func cohortQuery(_ grouping: Grouping, _ range: ClosedRange<LocalDate>, now: Date) -> PostgresQuery {
        let period = grouping == .day ? "cohort_date" : "date_trunc('week', cohort_date)::date"
        let gap = Int(Definitions.sessionGap)
        return """
            WITH cohort AS (
                SELECT u.user_id, u.registered_at, \(unescaped: period) AS period,
                       ((u.cohort_date + \(unescaped: String(Definitions.retentionDay)))::timestamp AT TIME ZONE u.time_zone) AS day7_starts,
                       ((u.cohort_date + \(unescaped: String(Definitions.retentionDay + 1)))::timestamp AT TIME ZONE u.time_zone) AS day7_ends
                FROM users u WHERE u.cohort_date BETWEEN \(range.lowerBound) AND \(range.upperBound)
            ), measured AS (
                SELECT c.*, NOT EXISTS (
                    SELECT 1 FROM telemetry_opt_outs o WHERE o.user_id = c.user_id AND o.since < c.day7_ends) AS counted
                FROM cohort c
            ), steps AS (
                SELECT a.user_id, a.at, a.at - lag(a.at) OVER (PARTITION BY a.user_id ORDER BY a.at) AS gap
                FROM activity a JOIN cohort c ON c.user_id = a.user_id AND a.at >= c.registered_at
            ), first_sessions AS (
                SELECT c.user_id,
                       min(s.at) FILTER (WHERE s.gap > make_interval(secs => \(unescaped: String(gap)))) AS next_session_at,
                       max(s.at) AS last_at
                FROM cohort c LEFT JOIN steps s ON s.user_id = c.user_id GROUP BY c.user_id
            ), judged AS (
                SELECT m.period, m.counted,
                       \(now) >= m.day7_ends AS retention_known,
                       EXISTS (SELECT 1 FROM activity a WHERE a.user_id = m.user_id AND a.at >= m.day7_starts AND a.at < m.day7_ends) AS retained,
                       (f.next_session_at IS NOT NULL OR \(now) >= f.last_at + make_interval(secs => \(unescaped: String(gap)))) AS first_session_over,
                       EXISTS (SELECT 1 FROM attempts t WHERE t.user_id = m.user_id AND t.started_at >= m.registered_at
                               AND t.started_at < coalesce(f.next_session_at, 'infinity')) AS started_early
                FROM measured m JOIN first_sessions f ON f.user_id = m.user_id
            )
            SELECT period, count(*)::bigint,
                   count(*) FILTER (WHERE counted AND retention_known AND retained)::bigint,
                   count(*) FILTER (WHERE counted AND retention_known)::bigint,
                   count(*) FILTER (WHERE counted AND first_session_over AND started_early)::bigint,
                   count(*) FILTER (WHERE counted AND first_session_over)::bigint
            FROM judged GROUP BY period
            """
    }

    /// Per (user, day) on which an attempt expected work: whether the user checked in that day.
    private func checkInQuery(_ grouping: Grouping, _ range: ClosedRange<LocalDate>) -> PostgresQuery {
        let scope = Scope(grouping, range, date: "d.local_date", user: "d.user_id")
        return """
            SELECT period, count(*) FILTER (WHERE checked_in)::bigint, count(*)::bigint FROM (
                SELECT DISTINCT \(unescaped: scope.period) AS period, d.user_id, d.local_date,
                       EXISTS (SELECT 1 FROM check_in_days c WHERE c.user_id = d.user_id AND c.local_date = d.local_date) AS checked_in
                FROM active_days d \(unescaped: scope.join) WHERE \(unescaped: scope.filter)
            ) days GROUP BY period
            """
    }

    /// Attempts that ended: completed out of all ended, restarted out of failed.
    private func endQuery(_ grouping: Grouping, _ range: ClosedRange<LocalDate>) -> PostgresQuery {
        let scope = Scope(grouping, range, date: "t.ended_on", user: "t.user_id")
        return """
            SELECT \(unescaped: scope.period) AS period, count(*)::bigint,
                   count(*) FILTER (WHERE t.outcome = 'completed')::bigint,
                   count(*) FILTER (WHERE t.outcome = 'failed')::bigint,
                   count(*) FILTER (WHERE t.outcome = 'failed' AND t.restarted_at IS NOT NULL)::bigint
            FROM attempts t \(unescaped: scope.join) WHERE t.outcome IS NOT NULL AND \(unescaped: scope.filter) GROUP BY 1
            """
    }

    private func breakQuery(_ grouping: Grouping, _ range: ClosedRange<LocalDate>) -> PostgresQuery {
        let scope = Scope(grouping, range, date: "b.local_date", user: "b.user_id")
        return """
            SELECT \(unescaped: scope.period) AS period, sum(b.length)::bigint, count(*)::bigint
            FROM streak_breaks b \(unescaped: scope.join) WHERE \(unescaped: scope.filter) GROUP BY 1
            """
    }

    /// By day: the facts dated in the range. By cohort week: every fact of the users who registered in the range.
    private struct Scope {
        let period: String
        let join: String
        let filter: String

        init(_ grouping: Grouping, _ range: ClosedRange<LocalDate>, date: String, user: String) {
            switch grouping {
            case .day:
                period = date
                join = ""
                filter = "\(date) BETWEEN \(Self.literal(range.lowerBound)) AND \(Self.literal(range.upperBound))"
            case .cohortWeek:
                period = "date_trunc('week', u.cohort_date)::date"
                join = "JOIN users u ON u.user_id = \(user)"
                filter = "u.cohort_date BETWEEN \(Self.literal(range.lowerBound)) AND \(Self.literal(range.upperBound))"
            }
        }

        /// A `LocalDate` prints only as `YYYY-MM-DD`, so it is safe as a literal.
        static func literal(_ date: LocalDate) -> String { "'\(date)'::date" }
    }
}

final class FixedKPIQueries: KPIQueries {
    private let reports = Mutex<[ClosedRange<LocalDate>]>([])
    let make: @Sendable (ClosedRange<LocalDate>) -> KPIReport

    init(_ make: @escaping @Sendable (ClosedRange<LocalDate>) -> KPIReport) {
        self.make = make
    }

    /// The ranges asked for, in order.
    var asked: [ClosedRange<LocalDate>] { reports.withLock { $0 } }

    func report(for range: ClosedRange<LocalDate>, now: Date) async throws -> KPIReport {
        reports.withLock { $0.append(range) }
        return make(range)
    }
}
