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
        var holders: [String: [Int: Int]] = [:]
        for try await (badge, level, count) in try await client.query(
            "SELECT badge_id, level, count(DISTINCT user_id) FROM awards GROUP BY badge_id, level", logger: logger
        ).decode((String, Int, Int).self) {
            holders[badge, default: [:]][level] = count
        }
        let held = Set(try await awards(of: caller).map(\.badgeID))
        let items = catalogue.badges.map { badge -> BadgeView in
            guard !badge.secret || held.contains(badge.id) else {
                return BadgeView(
                    badgeID: badge.id, title: "Secret badge", description: "Earn it to find out.", icon: "secret", secret: true, bonusPoints: nil,
                    perPeriod: badge.isPerPeriod, levels: [])
            }
            let levels = badge.levels.map { level in
                let count = holders[badge.id]?[level.level] ?? 0
                return LevelView(
                    level: level.level, title: level.title, threshold: level.threshold, holders: count,
                    rarityPercent: users > 0 ? (Double(count) * 1000 / Double(users)).rounded() / 10 : 0)
            }
            return BadgeView(
                badgeID: badge.id, title: badge.title, description: badge.description, icon: badge.icon, secret: badge.secret,
                bonusPoints: badge.bonusPoints, perPeriod: badge.isPerPeriod, levels: levels)
        }
        return CatalogueView(version: catalogue.version, users: users, items: items)
    }

    func mine(caller: UUID) async throws -> MyBadgesView {
        let earned = try await awards(of: caller)
        var facts: [Fact: Int] = [:]
        for try await (name, scope, value) in try await client.query(
            "SELECT name, scope, value FROM facts WHERE user_id = \(caller)", logger: logger
        ).decode((String, String, Int).self) {
            facts[Fact(name: name, scope: scope)] = value
        }
        let heldLevels = Dictionary(earned.map { ($0.badgeID, $0.level) }, uniquingKeysWith: max)
        var locked: [LockedBadgeView] = []
        for badge in catalogue.badges where !badge.secret || heldLevels[badge.id] != nil {
            let value: Int
            switch badge.rule {
            case .count, .streak: value = badge.rule.fact.flatMap { facts[$0] } ?? 0
            case .allOf(let parts): value = parts.filter { heldLevels[$0] != nil }.count
            case .weeklyChallenge, .weeklyGoal, .firstPlace: value = 0
            }
            guard let next = Awarding.progress(of: badge, value: value, heldLevels: heldLevels[badge.id] ?? 0) else { continue }
            locked.append(LockedBadgeView(
                badgeID: badge.id, title: badge.title, description: badge.description, icon: badge.icon, level: next.level.level,
                levelTitle: next.level.title, current: next.current, target: next.target))
        }
        return MyBadgesView(earned: earned, locked: locked)
    }

    /// Another user's badges, if the caller may see their profile: themselves, a friend, or a member of one of their groups.
    func user(_ userID: UUID, caller: UUID) async throws -> UserBadgesView {
        let (low, high) = userID.key < caller.key ? (userID, caller) : (caller, userID)
        let visible = try await client.query(
            """
            SELECT 1 FROM users WHERE user_id = \(userID) AND (
                \(userID) = \(caller)
                OR EXISTS (SELECT 1 FROM friendships WHERE user_low = \(low) AND user_high = \(high))
                OR EXISTS (SELECT 1 FROM group_members a JOIN group_members b USING (group_id) WHERE a.user_id = \(userID) AND b.user_id = \(caller)))
            """, logger: logger
        ).collect().isEmpty == false
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
        return BadgesExport(facts: facts, badges: try await awards(of: userID))
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
                badgeID: badgeID, level: level, title: title, icon: badge?.icon ?? "medal", period: period, earnedAt: earnedAt,
                bonusPoints: badge?.bonusPoints)
        }
    }

    /// The own badges of these challenges, by badge id.
    private func challengeBadges(_ challengeIDs: [UUID]) async throws -> [String: Badge] {
        guard !challengeIDs.isEmpty else { return [:] }
        var badges: [String: Badge] = [:]
        for try await (challengeID, json) in try await client.query(
            "SELECT challenge_id, badges::text FROM challenges WHERE challenge_id = ANY(\(challengeIDs))", logger: logger
        ).decode((UUID, String).self) {
            for badge in try BadgeStore.challengeBadges(challengeID, json: json).badges {
                badges[badge.id] = badge
            }
        }
        return badges
    }
}
