import BadgesDomain
import Foundation
import Logging
import PostgresNIO

/// What the backfill reads and records besides the awards (`PostgresBadgeStore`), in the caller's transaction: the
/// catalogue as last backfilled, and who might qualify for a badge.
struct BackfillStore {
    let connection: PostgresConnection
    let logger: Logger

    /// Waits until no other transaction backfills, and keeps others waiting until this one ends.
    func lock() async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(hashtext('surge-badges-backfill'))", logger: logger)
    }

    /// The fingerprint of each badge of the catalogue last backfilled, by badge id.
    func recordedFingerprints() async throws -> [String: String] {
        var recorded: [String: String] = [:]
        for try await (id, fingerprint) in try await connection.query("SELECT badge_id, fingerprint FROM catalogue_badges", logger: logger)
            .decode((String, String).self)
        {
            recorded[id] = fingerprint
        }
        return recorded
    }

    /// Records the badges as backfilled, in place of those recorded before.
    func record(_ fingerprints: [(badgeID: String, fingerprint: String)]) async throws {
        try await connection.query("DELETE FROM catalogue_badges", logger: logger)
        for (badgeID, fingerprint) in fingerprints {
            try await connection.query(
                "INSERT INTO catalogue_badges (badge_id, fingerprint) VALUES (\(badgeID), \(fingerprint))", logger: logger)
        }
    }

    /// The user's value of the fact; 0 when they have none.
    func value(of fact: Fact, for userID: UUID) async throws -> Int {
        try await connection.query(
            "SELECT value FROM facts WHERE user_id = \(userID) AND name = \(fact.name) AND scope = \(fact.scope)", logger: logger
        ).collect().first?.decode(Int.self) ?? 0
    }

    /// Who might qualify: users with the badge's fact at its first threshold, or holding every part of a composite.
    func candidates(for badge: Badge) async throws -> [UUID] {
        let query: PostgresQuery
        switch badge.rule {
        case .count, .streak:
            guard let fact = badge.rule.fact else { return [] }
            query = """
                SELECT f.user_id FROM facts f JOIN users u USING (user_id)
                WHERE f.name = \(fact.name) AND f.scope = \(fact.scope) AND f.value >= \(badge.levels[0].threshold) ORDER BY f.user_id
                """
        case .allOf(let parts):
            query = """
                SELECT user_id FROM awards WHERE badge_id = ANY(\(parts)) GROUP BY user_id
                HAVING count(DISTINCT badge_id) = \(parts.count) ORDER BY user_id
                """
        case .weeklyChallenge, .weeklyGoal, .firstPlace:
            return []
        }
        return try await connection.query(query, logger: logger).collect().map { try $0.decode(UUID.self) }
    }
}
