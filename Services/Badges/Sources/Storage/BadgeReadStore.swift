import BadgesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts

/// What the public API reads (`BadgeQueries`), over the pool.
struct BadgeReadStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// A challenge not deleted, as one caller may see it.
    struct ChallengeSeen: Sendable {
        var version: Int
        /// Its own badges as kept (`PostgresBadgeStore.challengeBadges(_:json:)` reads them).
        var badgesJSON: String
        /// Nil for a challenge kept before its visibility was.
        var visibility: Visibility?
        var ownerID: UUID?
        var joined: Bool
        var isGroupMember: Bool
    }

    func userCount() async throws -> Int {
        try await client.query("SELECT count(*) FROM users", logger: logger).collect().first?.decode(Int.self) ?? 0
    }

    func challenge(_ challengeID: UUID, seenBy caller: UUID) async throws -> ChallengeSeen? {
        let row = try await client.query(
            """
            SELECT c.version, c.badges::text, c.visibility, c.owner_id,
                EXISTS (SELECT 1 FROM participants p WHERE p.challenge_id = c.challenge_id AND p.user_id = \(caller)),
                EXISTS (SELECT 1 FROM group_members g WHERE g.group_id = c.group_id AND g.user_id = \(caller))
            FROM challenges c WHERE c.challenge_id = \(challengeID) AND NOT c.deleted
            """, logger: logger
        ).collect().first
        guard let row else { return nil }
        let (version, json, visibility, ownerID, joined, inGroup) = try row.decode((Int, String, String?, UUID?, Bool, Bool).self)
        return ChallengeSeen(
            version: version, badgesJSON: json, visibility: visibility.flatMap(Visibility.init(rawValue:)), ownerID: ownerID, joined: joined,
            isGroupMember: inGroup)
    }

    /// Users among whom a challenge's own badges are rare: those who joined it, and any holder not (yet) known to have
    /// joined, so rarity never exceeds 100 %.
    func userCount(ofChallenge challengeID: UUID, holdersOf badgeIDs: [String]) async throws -> Int {
        try await client.query(
            """
            SELECT count(*) FROM (
                SELECT user_id FROM participants WHERE challenge_id = \(challengeID)
                UNION SELECT user_id FROM awards WHERE badge_id = ANY(\(badgeIDs))) AS counted
            """, logger: logger
        ).collect().first?.decode(Int.self) ?? 0
    }

    /// Users holding each level of each badge (of `badgeIDs`, or of every badge), in any period.
    func holders(of badgeIDs: [String]?) async throws -> [String: [Int: Int]] {
        let query: PostgresQuery =
            if let badgeIDs {
                "SELECT badge_id, level, count(DISTINCT user_id) FROM awards WHERE badge_id = ANY(\(badgeIDs)) GROUP BY badge_id, level"
            } else {
                "SELECT badge_id, level, count(DISTINCT user_id) FROM awards GROUP BY badge_id, level"
            }
        var holders: [String: [Int: Int]] = [:]
        for try await (badge, level, count) in try await client.query(query, logger: logger).decode((String, Int, Int).self) {
            holders[badge, default: [:]][level] = count
        }
        return holders
    }

    func facts(of userID: UUID) async throws -> [Fact: Int] {
        var facts: [Fact: Int] = [:]
        for try await (name, scope, value) in try await client.query(
            "SELECT name, scope, value FROM facts WHERE user_id = \(userID)", logger: logger
        ).decode((String, String, Int).self) {
            facts[Fact(name: name, scope: scope)] = value
        }
        return facts
    }

    /// The own badges of the challenges the user joined, deleted ones aside, in challenge order.
    func badgesOfChallengesJoined(by userID: UUID) async throws -> [Badge] {
        var badges: [Badge] = []
        for try await (challengeID, json) in try await client.query(
            """
            SELECT c.challenge_id, c.badges::text FROM participants p JOIN challenges c USING (challenge_id)
            WHERE p.user_id = \(userID) AND NOT c.deleted AND jsonb_array_length(c.badges) > 0 ORDER BY c.challenge_id
            """, logger: logger
        ).decode((UUID, String).self) {
            badges += try PostgresBadgeStore.challengeBadges(challengeID, json: json).badges
        }
        return badges
    }

    /// Whether the user is known and the caller may see their profile: themselves, a friend, or a member of one of
    /// their groups.
    func maySee(_ userID: UUID, caller: UUID) async throws -> Bool {
        let (low, high) = userID.key < caller.key ? (userID, caller) : (caller, userID)
        return try await client.query(
            """
            SELECT 1 FROM users WHERE user_id = \(userID) AND (
                \(userID) = \(caller)
                OR EXISTS (SELECT 1 FROM friendships WHERE user_low = \(low) AND user_high = \(high))
                OR EXISTS (SELECT 1 FROM group_members a JOIN group_members b USING (group_id) WHERE a.user_id = \(userID) AND b.user_id = \(caller)))
            """, logger: logger
        ).collect().isEmpty == false
    }

    /// The user's facts, for their data export.
    func factRows(of userID: UUID) async throws -> [BadgesExport.FactRow] {
        try await client.query(
            "SELECT name, scope, value FROM facts WHERE user_id = \(userID) ORDER BY name, scope", logger: logger
        ).collect().map { row in
            let (name, scope, value) = try row.decode((String, String, Int).self)
            return BadgesExport.FactRow(name: name, scope: scope, value: value)
        }
    }

    func challengesJoined(by userID: UUID) async throws -> [UUID] {
        try await client.query(
            "SELECT challenge_id FROM participants WHERE user_id = \(userID) ORDER BY challenge_id", logger: logger
        ).collect().map { try $0.decode(UUID.self) }
    }

    /// The user's awards, the latest first.
    func awards(of userID: UUID) async throws -> [(badgeID: String, level: Int, title: String, period: String, awardedAt: Date)] {
        try await client.query(
            "SELECT badge_id, level, title, period, awarded_at FROM awards WHERE user_id = \(userID) ORDER BY awarded_at DESC, badge_id, level",
            logger: logger
        ).collect().map { try $0.decode((String, Int, String, String, Date).self) }
    }

    /// The own badges of these challenges, by badge id.
    func challengeBadges(_ challengeIDs: [UUID]) async throws -> [String: Badge] {
        guard !challengeIDs.isEmpty else { return [:] }
        var badges: [String: Badge] = [:]
        for try await (challengeID, json) in try await client.query(
            "SELECT challenge_id, badges::text FROM challenges WHERE challenge_id = ANY(\(challengeIDs))", logger: logger
        ).decode((UUID, String).self) {
            for badge in try PostgresBadgeStore.challengeBadges(challengeID, json: json).badges {
                badges[badge.id] = badge
            }
        }
        return badges
    }
}
