import Foundation
import Logging
import PostgresNIO

/// Each user's next daily reminder: one row per user, its instant indexed, claimed by the scheduler when due.
struct DailyReminders {
    let connection: PostgresConnection
    let logger: Logger

    /// Up to `limit` due at `now`, oldest first, locked for this transaction: other replicas skip them (`SKIP LOCKED`),
    /// so each is handled by one.
    func claimDue(at now: Date, limit: Int) async throws -> [(userID: UUID, fireAt: Date)] {
        try await connection.query(
            "SELECT user_id, fire_at FROM reminders WHERE fire_at <= \(now) ORDER BY fire_at LIMIT \(limit) FOR UPDATE SKIP LOCKED", logger: logger
        ).collect().map { try $0.decode((UUID, Date).self) }
    }

    /// Sets each user's next reminder, in one statement (a user named twice gets the last); a user without a row gets one.
    func move(_ firings: [(userID: UUID, fireAt: Date)]) async throws {
        let latest = Dictionary(firings.map { ($0.userID, $0.fireAt) }, uniquingKeysWith: { _, last in last })
        guard !latest.isEmpty else { return }
        let users = Array(latest.keys)
        try await connection.query(
            """
            INSERT INTO reminders (user_id, fire_at) SELECT * FROM unnest(\(users), \(users.map { latest[$0]! }))
            ON CONFLICT (user_id) DO UPDATE SET fire_at = EXCLUDED.fire_at
            """, logger: logger)
    }

    /// Moves the claimed reminders to their next instants, in one statement: cheaper than an upsert for a wave, whose
    /// rows all exist and are locked by this transaction.
    func moveClaimed(_ firings: [(userID: UUID, fireAt: Date)]) async throws {
        guard !firings.isEmpty else { return }
        try await connection.query(
            """
            UPDATE reminders r SET fire_at = next.fire_at FROM unnest(\(firings.map(\.userID)), \(firings.map(\.fireAt))) AS next (user_id, fire_at)
            WHERE r.user_id = next.user_id
            """, logger: logger)
    }

    func remove(_ userIDs: [UUID]) async throws {
        guard !userIDs.isEmpty else { return }
        try await connection.query("DELETE FROM reminders WHERE user_id = ANY(\(userIDs))", logger: logger)
    }
}
