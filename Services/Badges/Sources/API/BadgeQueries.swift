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

    private var store: BadgeReadStore { BadgeReadStore(client: client, logger: logger) }

    func catalogueView(caller: UUID) async throws -> CatalogueView {
        let users = try await store.userCount()
        let holders = try await store.holders(of: nil)
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
            guard let challenge = try await store.challenge(challengeID, seenBy: caller) else { return nil }
            // A challenge kept before its visibility was: only those who joined it see its badges until its next version.
            let visible = challenge.visibility.map {
                ChallengeAccess.canSee(.init(visibility: $0, isOwner: challenge.ownerID == caller, isGroupMember: challenge.isGroupMember))
            } ?? false
            return challenge.joined || visible ? (challenge.version, challenge.badgesJSON) : nil
        }
        guard let (version, json) = seen else { throw Problem.notFound("No such challenge, or not one whose badges you may see.") }
        let own = try PostgresBadgeStore.challengeBadges(challengeID, json: json)
        let ids = own.badges.map(\.id)
        let users = try await store.userCount(ofChallenge: challengeID, holdersOf: ids)
        let holders = try await store.holders(of: ids)
        return CatalogueView(
            version: version, users: users, challengeID: challengeID,
            items: own.badges.map { Self.view(of: $0, holders: holders[$0.id] ?? [:], among: users) })
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
        let facts = try await store.facts(of: caller)
        let heldLevels = Dictionary(earned.map { ($0.badgeID, $0.level) }, uniquingKeysWith: max)
        var badges = catalogue.badges.filter { !$0.secret || heldLevels[$0.id] != nil }
        badges += try await store.badgesOfChallengesJoined(by: caller)
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
        let visible = try await CatchUp.standard.until { try await store.maySee(userID, caller: caller) }
        guard visible else { throw Problem.notFound("No such user, or not one whose badges you may see.") }
        return UserBadgesView(userID: userID, earned: try await awards(of: userID))
    }

    func export(userID: UUID) async throws -> BadgesExport {
        let facts = try await store.factRows(of: userID)
        let joined = try await store.challengesJoined(by: userID)
        return BadgesExport(facts: facts, challengesJoined: joined, badges: try await awards(of: userID))
    }

    private func awards(of userID: UUID) async throws -> [EarnedBadgeView] {
        let rows = try await store.awards(of: userID)
        let own = try await store.challengeBadges(Array(Set(rows.compactMap { BadgeCatalogue.challenge(ofBadge: $0.badgeID) })))
        return rows.map { row in
            let (badgeID, level, title, period, earnedAt) = row
            let badge = catalogue.badge(badgeID) ?? own[badgeID]
            return EarnedBadgeView(
                badgeID: badgeID, challengeID: BadgeCatalogue.challenge(ofBadge: badgeID), level: level, title: title,
                icon: badge?.icon ?? "medal", period: period, earnedAt: earnedAt, bonusPoints: badge?.bonusPoints)
        }
    }
}
