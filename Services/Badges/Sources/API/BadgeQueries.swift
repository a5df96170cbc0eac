import BadgesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeRuntime

/// The reads of the public API.
struct BadgeQueries: Sendable {
    let client: PostgresClient
    let catalogue: BadgeCatalogue
    let logger: Logger

    func catalogueView(caller: UUID) async throws -> CatalogueView {
        let users = try await client.query("SELECT count(*) FROM users", logger: logger).collect().first?.decode(Int.self) ?? 0
        let holders = try await holders(of: nil)
        let held = Set(try await awards(of: caller).map(\.badgeID))
        let items = catalogue.badges.map { badge -> BadgeView in
            guard !badge.secret || held.contains(badge.id) else {
                return BadgeView(
                    badgeID: badge.id, title: "Secret badge", description: "Earn it to find out.", icon: "secret", secret: true, bonusPoints: nil,
                    perPeriod: badge.isPerPeriod, levels: [])
            }
            return Self.view(of: badge, holders: holders[badge.id] ?? [:], among: users)
        }
        return CatalogueView(version: catalogue.version, users: users, items: items)
    }

    /// A challenge's own badges, each level's rarity among those who joined it; 404 unless the caller joined it or may
    /// see it (`ChallengeAccess`, an invitation aside: the badge service does not keep invitations).
    /// A challenge published, or a group joined, a moment ago is waited for.
    func challengeCatalogueView(_ challengeID: UUID, caller: UUID) async throws -> CatalogueView {
        let seen = try await CatchUp.standard.value { () -> (version: Int, json: String)? in
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
            // A challenge kept before its visibility was: only those who joined it see its badges until its next version.
            let visible = visibility.flatMap(Visibility.init(rawValue:)).map {
                ChallengeAccess.canSee(.init(visibility: $0, isOwner: ownerID == caller, isGroupMember: inGroup))
            } ?? false
            return joined || visible ? (version, json) : nil
        }
        guard let (version, json) = seen else { throw Problem.notFound("No such challenge, or not one whose badges you may see.") }
        let own = try PostgresBadgeStore.challengeBadges(challengeID, json: json)
        let ids = own.badges.map(\.id)
        // Those who joined it, and any holder not (yet) known to have joined: rarity never exceeds 100 %.
        let users = try await client.query(
            """
            SELECT count(*) FROM (
                SELECT user_id FROM participants WHERE challenge_id = \(challengeID)
                UNION SELECT user_id FROM awards WHERE badge_id = ANY(\(ids))) AS counted
            """, logger: logger
        ).collect().first?.decode(Int.self) ?? 0
        let holders = try await holders(of: ids)
        return CatalogueView(
            version: version, users: users, challengeID: challengeID,
            items: own.badges.map { Self.view(of: $0, holders: holders[$0.id] ?? [:], among: users) })
    }

    /// Users holding each level of each badge (of `badgeIDs`, or of every badge), in any period.
    private func holders(of badgeIDs: [String]?) async throws -> [String: [Int: Int]] {
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

    private static func view(of badge: Badge, holders: [Int: Int], among users: Int) -> BadgeView {
        let levels = badge.levels.map { level in
            let count = holders[level.level] ?? 0
            return LevelView(
                level: level.level, title: level.title, threshold: level.threshold, holders: count,
                rarityPercent: users > 0 ? (Double(count) * 1000 / Double(users)).rounded() / 10 : 0)
        }
        return BadgeView(
            badgeID: badge.id, title: badge.title, description: badge.description, icon: badge.icon, secret: badge.secret,
            bonusPoints: badge.bonusPoints, perPeriod: badge.isPerPeriod, levels: levels)
    }

    /// The caller's badges earned, and the next level of each badge still to earn: the catalogue's (secret ones only
    /// once earned), then the own badges of the challenges the caller joined.
    func mine(caller: UUID) async throws -> MyBadgesView {
        let earned = try await awards(of: caller)
        var facts: [Fact: Int] = [:]
        for try await (name, scope, value) in try await client.query(
            "SELECT name, scope, value FROM facts WHERE user_id = \(caller)", logger: logger
        ).decode((String, String, Int).self) {
            facts[Fact(name: name, scope: scope)] = value
        }
        let heldLevels = Dictionary(earned.map { ($0.badgeID, $0.level) }, uniquingKeysWith: max)
        var badges = catalogue.badges.filter { !$0.secret || heldLevels[$0.id] != nil }
        for try await (challengeID, json) in try await client.query(
            """
            SELECT c.challenge_id, c.badges::text FROM participants p JOIN challenges c USING (challenge_id)
            WHERE p.user_id = \(caller) AND NOT c.deleted AND jsonb_array_length(c.badges) > 0 ORDER BY c.challenge_id
            """, logger: logger
        ).decode((UUID, String).self) {
            badges += try PostgresBadgeStore.challengeBadges(challengeID, json: json).badges
        }
        let locked = badges.compactMap { badge -> LockedBadgeView? in
            let value: Int
            switch badge.rule {
            case .count, .streak: value = badge.rule.fact.flatMap { facts[$0] } ?? 0
            case .allOf(let parts): value = parts.filter { heldLevels[$0] != nil }.count
            case .weeklyChallenge, .weeklyGoal, .firstPlace: value = 0
            }
            guard let next = Awarding.progress(of: badge, value: value, heldLevels: heldLevels[badge.id] ?? 0) else { return nil }
            return LockedBadgeView(
                badgeID: badge.id, challengeID: BadgeCatalogue.challenge(ofBadge: badge.id), title: badge.title, description: badge.description,
                icon: badge.icon, level: next.level.level, levelTitle: next.level.title, current: next.current, target: next.target)
        }
        return MyBadgesView(earned: earned, locked: locked)
    }

    /// Another user's badges, if the caller may see their profile: themselves, a friend, or a member of one of their groups.
    /// An account, friendship or group joined a moment ago is waited for.
    func user(_ userID: UUID, caller: UUID) async throws -> UserBadgesView {
        let (low, high) = userID.key < caller.key ? (userID, caller) : (caller, userID)
        let visible = try await CatchUp.standard.until {
            try await client.query(
                """
                SELECT 1 FROM users WHERE user_id = \(userID) AND (
                    \(userID) = \(caller)
                    OR EXISTS (SELECT 1 FROM friendships WHERE user_low = \(low) AND user_high = \(high))
                    OR EXISTS (SELECT 1 FROM group_members a JOIN group_members b USING (group_id) WHERE a.user_id = \(userID) AND b.user_id = \(caller)))
                """, logger: logger
            ).collect().isEmpty == false
        }
        guard visible else { throw Problem.notFound("No such user, or not one whose badges you may see.") }
        return UserBadgesView(userID: userID, earned: try await awards(of: userID))
    }

    func export(userID: UUID) async throws -> BadgesExport {
        let facts = try await client.query(
            "SELECT name, scope, value FROM facts WHERE user_id = \(userID) ORDER BY name, scope", logger: logger
        ).collect().map { row in
            let (name, scope, value) = try row.decode((String, String, Int).self)
            return BadgesExport.FactRow(name: name, scope: scope, value: value)
        }
        let joined = try await client.query(
            "SELECT challenge_id FROM participants WHERE user_id = \(userID) ORDER BY challenge_id", logger: logger
        ).collect().map { try $0.decode(UUID.self) }
        return BadgesExport(facts: facts, challengesJoined: joined, badges: try await awards(of: userID))
    }

    private func awards(of userID: UUID) async throws -> [EarnedBadgeView] {
        let rows = try await client.query(
            "SELECT badge_id, level, title, period, awarded_at FROM awards WHERE user_id = \(userID) ORDER BY awarded_at DESC, badge_id, level",
            logger: logger
        ).collect().map { try $0.decode((String, Int, String, String, Date).self) }
        let own = try await challengeBadges(Array(Set(rows.compactMap { BadgeCatalogue.challenge(ofBadge: $0.0) })))
        return rows.map { row in
            let (badgeID, level, title, period, earnedAt) = row
            let badge = catalogue.badge(badgeID) ?? own[badgeID]
            return EarnedBadgeView(
                badgeID: badgeID, challengeID: BadgeCatalogue.challenge(ofBadge: badgeID), level: level, title: title,
                icon: badge?.icon ?? "medal", period: period, earnedAt: earnedAt, bonusPoints: badge?.bonusPoints)
        }
    }

    /// The own badges of these challenges, by badge id.
    private func challengeBadges(_ challengeIDs: [UUID]) async throws -> [String: Badge] {
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
