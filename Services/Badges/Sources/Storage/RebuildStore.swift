import BadgesDomain
import Foundation
import Logging
import PostgresNIO

/// `surge-badges rebuild`'s statements around what it writes (`RebuildWriter`), in its one transaction: the awards held
/// before kept aside in `previous_awards` (dropped when the transaction commits) and compared with those derived.
struct RebuildStore {
    let connection: PostgresConnection
    let logger: Logger

    /// Keeps the awards held now aside, and replaces every table the replay derives with what it derived.
    func replaceTables(with rebuilt: MemoryBadgeStore) async throws {
        try await connection.query("CREATE TEMPORARY TABLE previous_awards ON COMMIT DROP AS SELECT * FROM awards", logger: logger)
        try await connection.query(
            "TRUNCATE users, erased_users, friendships, group_members, facts, awards, challenges, participants", logger: logger)
        try await RebuildWriter(connection: connection, logger: logger).write(rebuilt)
        // Statistics for what was just written: without them the planner takes the emptied tables for empty and joins
        // the awards with those held before one row at a time (seconds for ten thousand awards).
        try await connection.query("ANALYZE awards, previous_awards", logger: logger)
    }

    /// Awards held before and derived again keep the date the user first saw, and whether they were backfilled.
    func keepDatesHeldBefore() async throws {
        try await connection.query(
            """
            UPDATE awards a SET awarded_at = p.awarded_at, backfilled = p.backfilled FROM previous_awards p
            WHERE (a.user_id, a.badge_id, a.level, a.period) = (p.user_id, p.badge_id, p.level, p.period)
            """, logger: logger)
    }

    /// Awards derived but not held before, in the order they were made.
    func awardsNotHeldBefore() async throws -> [(userID: UUID, award: Award)] {
        try await connection.query(
            """
            SELECT user_id, badge_id, level, period, title FROM awards a WHERE NOT EXISTS (
                SELECT 1 FROM previous_awards p WHERE (a.user_id, a.badge_id, a.level, a.period) = (p.user_id, p.badge_id, p.level, p.period))
            ORDER BY awarded_at, user_id, badge_id, level
            """, logger: logger
        ).collect().map { row in
            let (userID, badgeID, level, period, title) = try row.decode((UUID, String, Int, String, String).self)
            return (userID, Award(badgeID: badgeID, level: level, period: period, title: title))
        }
    }

    /// Marks an award new to the rebuild as backfilled, made now.
    func markBackfilled(_ award: Award, of userID: UUID, at time: Date) async throws {
        try await connection.query(
            """
            UPDATE awards SET backfilled = true, awarded_at = \(time)
            WHERE user_id = \(userID) AND badge_id = \(award.badgeID) AND level = \(award.level) AND period = \(award.period)
            """, logger: logger)
    }

    /// Keeps the awards held before but not derived, except those of users erased since; returns how many.
    func keepAwardsNotDerived() async throws -> Int {
        try await connection.query(
            """
            WITH kept AS (
                INSERT INTO awards SELECT p.* FROM previous_awards p
                WHERE NOT EXISTS (SELECT 1 FROM erased_users e WHERE e.user_id = p.user_id)
                ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*)::bigint FROM kept
            """, logger: logger
        ).collect().first?.decode(Int.self) ?? 0
    }

    func awardCount() async throws -> Int {
        try await connection.query("SELECT count(*)::bigint FROM awards", logger: logger).collect().first?.decode(Int.self) ?? 0
    }
}
