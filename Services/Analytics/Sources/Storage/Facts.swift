import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres

/// Writes the facts of one consumed event, on the consumer's inbox transaction. Nothing is written about a deleted
/// user, or about what a user did while opted out of telemetry.
struct Facts {
    let connection: PostgresConnection
    let logger: Logger

    /// Whether what the user (`$1`) did at `$2` may be recorded.
    private static let recordable = """
        NOT EXISTS (SELECT 1 FROM erased_users WHERE user_id = $1)
        AND NOT EXISTS (SELECT 1 FROM telemetry_opt_outs WHERE user_id = $1 AND since <= $2 AND (until IS NULL OR until > $2))
        """

    /// Whether something the user did at `time` may be recorded.
    func mayRecord(_ userID: UUID, at time: Date) async throws -> Bool {
        try await writeGatheredActivity()
        var binds = PostgresBindings(capacity: 2)
        binds.append(userID)
        binds.append(time)
        let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(Self.recordable)", binds: binds), logger: logger)
        for try await allowed in rows.decode(Bool.self) { return allowed }
        return false
    }

    /// The user's activity at `time` and, for a check-in, its local day with a check-in, unless the user may not be
    /// recorded then. Check-ins are the events that come most: inside a transaction (a consumer batch) they are
    /// gathered and written in one statement when its body ends (`BeforeCommit`); whatever reads or changes who may be
    /// recorded writes them first.
    func recordActivity(of userID: UUID, at time: Date, checkInOn date: LocalDate? = nil) async throws {
        try await BeforeCommit.gather(Activity(userID: userID, at: time, checkInOn: date), on: connection, logger: logger) { activities, connection, logger in
            try await Self.write(activities, on: connection, logger: logger)
        }
    }

    struct Activity: Sendable {
        var userID: UUID
        var at: Date
        var checkInOn: LocalDate?
    }

    /// Each recordable activity, and each check-in's day (the earliest time, when a batch has several), in one statement.
    static func write(_ activities: [Activity], on connection: PostgresConnection, logger: Logger) async throws {
        guard !activities.isEmpty else { return }
        var binds = PostgresBindings(capacity: 3)
        binds.append(activities.map(\.userID))
        binds.append(activities.map(\.at))
        // Arrays of optionals are not encodable: a day travels as its text, empty for none.
        binds.append(activities.map { $0.checkInOn?.description ?? "" })
        try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    WITH batch AS (
                        SELECT user_id, at, NULLIF(day, '')::date AS local_date FROM unnest($1::uuid[], $2::timestamptz[], $3::text[]) AS b (user_id, at, day)
                    ),
                    recorded AS (
                        SELECT b.* FROM batch b
                        WHERE NOT EXISTS (SELECT 1 FROM erased_users e WHERE e.user_id = b.user_id)
                          AND NOT EXISTS (
                              SELECT 1 FROM telemetry_opt_outs o
                              WHERE o.user_id = b.user_id AND o.since <= b.at AND (o.until IS NULL OR o.until > b.at))
                    ),
                    day AS (
                        INSERT INTO check_in_days (user_id, local_date, at)
                        SELECT user_id, local_date, min(at) FROM recorded WHERE local_date IS NOT NULL GROUP BY user_id, local_date
                        ON CONFLICT (user_id, local_date) DO UPDATE SET at = excluded.at WHERE excluded.at < check_in_days.at
                    )
                    INSERT INTO activity (user_id, at) SELECT DISTINCT user_id, at FROM recorded ON CONFLICT DO NOTHING
                    """, binds: binds), logger: logger)
    }

    /// Writes the activity this transaction has gathered so far.
    private func writeGatheredActivity() async throws {
        try await BeforeCommit.writeGathered(Activity.self, on: connection, logger: logger)
    }

    func register(_ userID: UUID, timeZone: String, at time: Date, cohortDate: LocalDate) async throws {
        try await connection.query(
            """
            INSERT INTO users (user_id, time_zone, registered_at, cohort_date) VALUES (\(userID), \(timeZone), \(time), \(cohortDate))
            ON CONFLICT (user_id) DO NOTHING
            """, logger: logger)
        try await activity(userID, at: time)
    }

    func activity(_ userID: UUID, at time: Date) async throws {
        try await connection.query("INSERT INTO activity (user_id, at) VALUES (\(userID), \(time)) ON CONFLICT DO NOTHING", logger: logger)
    }

    func moveZone(_ userID: UUID, to timeZone: String) async throws {
        try await connection.query("UPDATE users SET time_zone = \(timeZone) WHERE user_id = \(userID)", logger: logger)
    }

    func attemptStarted(_ attemptID: UUID, userID: UUID, at time: Date) async throws {
        try await connection.query(
            """
            INSERT INTO attempts (attempt_id, user_id, started_at) VALUES (\(attemptID), \(userID), \(time))
            ON CONFLICT (attempt_id) DO UPDATE SET started_at = excluded.started_at
            """, logger: logger)
    }

    func attemptEnded(_ attemptID: UUID, userID: UUID, on date: LocalDate, at time: Date, outcome: AttemptEnd) async throws {
        try await connection.query(
            """
            INSERT INTO attempts (attempt_id, user_id, ended_on, ended_at, outcome) VALUES (\(attemptID), \(userID), \(date), \(time), \(outcome.rawValue))
            ON CONFLICT (attempt_id) DO UPDATE SET ended_on = excluded.ended_on, ended_at = excluded.ended_at, outcome = excluded.outcome
            """, logger: logger)
    }

    func attemptRestarted(_ previousAttemptID: UUID, userID: UUID, at time: Date) async throws {
        try await connection.query(
            """
            INSERT INTO attempts (attempt_id, user_id, restarted_at) VALUES (\(previousAttemptID), \(userID), \(time))
            ON CONFLICT (attempt_id) DO UPDATE SET restarted_at = least(attempts.restarted_at, excluded.restarted_at)
            """, logger: logger)
    }

    func activeDay(_ attemptID: UUID, userID: UUID, on date: LocalDate, at time: Date) async throws {
        try await connection.query(
            """
            INSERT INTO active_days (attempt_id, local_date, user_id, at) VALUES (\(attemptID), \(date), \(userID), \(time))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    func streakBreak(_ attemptID: UUID, userID: UUID, on date: LocalDate, length: Int, at time: Date) async throws {
        try await connection.query(
            """
            INSERT INTO streak_breaks (attempt_id, local_date, user_id, length, at) VALUES (\(attemptID), \(date), \(userID), \(length), \(time))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    func isOptedOut(_ userID: UUID) async throws -> Bool {
        try await writeGatheredActivity()
        let rows = try await connection.query(
            "SELECT EXISTS (SELECT 1 FROM telemetry_opt_outs WHERE user_id = \(userID) AND until IS NULL)", logger: logger)
        for try await optedOut in rows.decode(Bool.self) { return optedOut }
        return false
    }

    /// Opens an opt-out interval and erases what was recorded from its start on (events of other topics may have
    /// been applied before this one).
    func optOut(_ userID: UUID, at time: Date) async throws {
        try await writeGatheredActivity()
        try await connection.query(
            "INSERT INTO telemetry_opt_outs (user_id, since) VALUES (\(userID), \(time)) ON CONFLICT DO NOTHING", logger: logger)
        for table in ["activity", "active_days", "check_in_days", "streak_breaks"] {
            try await connection.query("DELETE FROM \(unescaped: table) WHERE user_id = \(userID) AND at >= \(time)", logger: logger)
        }
        try await connection.query("DELETE FROM attempts WHERE user_id = \(userID) AND started_at >= \(time)", logger: logger)
        try await connection.query(
            "UPDATE attempts SET ended_on = NULL, ended_at = NULL, outcome = NULL WHERE user_id = \(userID) AND ended_at >= \(time)", logger: logger)
        try await connection.query(
            "UPDATE attempts SET restarted_at = NULL WHERE user_id = \(userID) AND restarted_at >= \(time)", logger: logger)
    }

    func optIn(_ userID: UUID, at time: Date) async throws {
        try await writeGatheredActivity()
        try await connection.query(
            "UPDATE telemetry_opt_outs SET until = \(time) WHERE user_id = \(userID) AND until IS NULL", logger: logger)
    }

    /// Forgets the user, and remembers only that they are gone.
    func erase(_ userID: UUID) async throws {
        try await writeGatheredActivity()
        for table in ["users", "activity", "attempts", "active_days", "check_in_days", "streak_breaks", "telemetry_opt_outs"] {
            try await connection.query("DELETE FROM \(unescaped: table) WHERE user_id = \(userID)", logger: logger)
        }
        try await connection.query("INSERT INTO erased_users (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
    }
}
