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
    }

    func total(_ userID: UUID, on connection: PostgresConnection) async throws -> Int {
        try await connection.query("SELECT total FROM member_points WHERE user_id = \(userID)", logger: logger)
            .collect().first?.decode(Int.self) ?? 0
    }

    /// Appends the entry, updates the member's total and emits the event; returns the new total.
    @discardableResult
    func append(_ entry: Entry, at now: Date, trace: TraceContext?, on connection: PostgresConnection) async throws -> Int {
        let entryID = UUID()
        try await connection.query(
            """
            INSERT INTO points_ledger (entry_id, user_id, group_id, challenge_id, attempt_id, points, reason, local_date, excess_quantity, awarded_at)
            VALUES (\(entryID), \(entry.userID), \(entry.groupID), \(entry.challengeID), \(entry.attemptID), \(entry.points),
                    \(entry.reason.rawValue), \(entry.localDate), \(entry.excessQuantity), \(now))
            """, logger: logger)
        let total = try await connection.query(
            """
            INSERT INTO member_points (user_id, total) VALUES (\(entry.userID), \(entry.points))
            ON CONFLICT (user_id) DO UPDATE SET total = member_points.total + EXCLUDED.total RETURNING total
            """, logger: logger
        ).collect().first?.decode(Int.self) ?? entry.points
        try await outbox.append(
            PointsAwarded(
                entryID: entryID, userID: entry.userID, groupID: entry.groupID, challengeID: entry.challengeID, attemptID: entry.attemptID,
                points: entry.points, reason: entry.reason, localDate: entry.localDate, excessQuantity: entry.excessQuantity,
                totalPoints: total, awardedAt: now),
            on: connection, at: now, trace: trace, logger: logger)
        return total
    }
}
