import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging

/// The points ledger: append-only rows with a reason, a running total per member, a `PointsAwarded` event per row.
struct LedgerStore {
    let logger: Logger
    let outbox: Outbox

    struct Entry: Sendable {
        var userID: UUID
        var groupID: UUID?
        var challengeID: UUID?
        var attemptID: UUID?
        var points: Int
        var reason: PointsReason
        var localDate: LocalDate
        var excessQuantity: Double?
        /// Points from a curated challenge, whose values Surge chose. Only these raise a member's level (and with it
        /// the anti-cheat cap): points a user's own challenge awards cannot buy a higher cap.
        var countsTowardLevel: Bool
        /// The check-in that earned (or took back) the points; nil for bonuses and chores.
        var checkInID: UUID? = nil
    }

    /// The points that set the member's level: those of curated challenges.
    func levelPoints(_ userID: UUID, on connection: PostgresConnection) async throws -> Int {
        try await connection.query("SELECT level_points FROM member_points WHERE user_id = \(userID)", logger: logger)
            .collect().first?.decode(Int.self) ?? 0
    }

    /// Appends the entry, updates the member's total and emits the event; returns the new total.
    @discardableResult
    func append(_ entry: Entry, at now: Date, trace: TraceContext?, on connection: PostgresConnection) async throws -> Int {
        let awarded = try await write(entry, at: now, on: connection)
        try await outbox.append(awarded, on: connection, at: now, trace: trace, logger: logger)
        return awarded.totalPoints
    }

    /// Appends the entry and updates the member's total in one statement; returns the event to emit with it.
    func write(_ entry: Entry, at now: Date, on connection: PostgresConnection) async throws -> PointsAwarded {
        let entryID = UUID()
        var total = entry.points
        for try await value in try await connection.execute(WriteEntry(entryID: entryID, entry: entry, now: now), logger: logger) { total = value }
        return PointsAwarded(
            entryID: entryID, userID: entry.userID, groupID: entry.groupID, challengeID: entry.challengeID, attemptID: entry.attemptID,
            points: entry.points, reason: entry.reason, localDate: entry.localDate, excessQuantity: entry.excessQuantity,
            totalPoints: total, awardedAt: now)
    }

    /// Prepared once per connection: PostgreSQL plans it once, not on every check-in. Nullable parameters are cast to
    /// the type they are bound as, since the first binding fixes the statement's types.
    struct WriteEntry: PostgresPreparedStatement {
        static let sql = """
            WITH entry AS (
                INSERT INTO points_ledger (
                    entry_id, user_id, group_id, challenge_id, attempt_id, points, reason, local_date, excess_quantity, awarded_at,
                    counts_toward_level, checkin_id)
                VALUES ($1, $2, $3::uuid, $4::uuid, $5::uuid, $6, $7, $8, $9::float8, $10, $11, $12::uuid)
            )
            INSERT INTO member_points (user_id, total, level_points) VALUES ($2, $6, $13)
            ON CONFLICT (user_id) DO UPDATE
            SET total = member_points.total + EXCLUDED.total, level_points = member_points.level_points + EXCLUDED.level_points
            RETURNING total
            """
        typealias Row = Int

        var entryID: UUID
        var entry: Entry
        var now: Date

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 13)
            bindings.append(entryID)
            bindings.append(entry.userID)
            bindings.append(entry.groupID)
            bindings.append(entry.challengeID)
            bindings.append(entry.attemptID)
            bindings.append(entry.points)
            bindings.append(entry.reason.rawValue)
            bindings.append(entry.localDate)
            bindings.append(entry.excessQuantity)
            bindings.append(now)
            bindings.append(entry.countsTowardLevel)
            bindings.append(entry.checkInID)
            bindings.append(entry.countsTowardLevel ? entry.points : 0)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
    }
}
