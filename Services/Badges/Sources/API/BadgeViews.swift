import Foundation
import Hummingbird
import SurgeRuntime

/// The catalogue as a client shows it, or one challenge's own badges.
struct CatalogueView: ResponseCodable {
    /// The catalogue's version, or the challenge definition's.
    var version: Int
    /// Users the rarity is counted among: every user, or those who joined the challenge.
    var users: Int
    /// The challenge whose own badges these are; absent for the catalogue.
    var challengeID: UUID?
    var items: [BadgeView]
}

struct BadgeView: Codable, Sendable {
    var badgeID: String
    var title: String
    var description: String
    var icon: String
    /// A secret badge the caller has not earned: no title, description or levels.
    var secret: Bool
    var bonusPoints: Int?
    /// Earned once per week or window ("Weekly Challenge 2026-11-16"), rather than once ever.
    var perPeriod: Bool
    var levels: [LevelView]
}

struct LevelView: Codable, Sendable {
    var level: Int
    var title: String
    var threshold: Int
    /// Users holding this level (in any period).
    var holders: Int
    /// `holders` as a share of all users, in percent with one decimal.
    var rarityPercent: Double
}

struct EarnedBadgeView: Codable, Sendable {
    var badgeID: String
    /// The challenge a challenge's own badge belongs to; absent for the catalogue's.
    var challengeID: UUID?
    var level: Int
    var title: String
    var icon: String
    /// "" for a badge earned once ever; the week's Monday or the board window otherwise.
    var period: String
    var earnedAt: Date
    var bonusPoints: Int?
}

struct LockedBadgeView: Codable, Sendable {
    var badgeID: String
    /// The challenge a challenge's own badge belongs to; absent for the catalogue's.
    var challengeID: UUID?
    var title: String
    var description: String
    var icon: String
    /// The next level to earn and its title.
    var level: Int
    var levelTitle: String
    /// Progress towards it: `current` of `target` (7 of 10).
    var current: Int
    var target: Int
}

struct MyBadgesView: ResponseCodable {
    var earned: [EarnedBadgeView]
    var locked: [LockedBadgeView]
}

struct UserBadgesView: ResponseCodable {
    var userID: UUID
    var earned: [EarnedBadgeView]
}

/// The caller's part of the data export: facts kept, challenges joined and badges earned.
struct BadgesExport: ResponseCodable {
    struct FactRow: Codable, Sendable {
        var name: String
        var scope: String
        var value: Int
    }

    var facts: [FactRow]
    var challengesJoined: [UUID]
    var badges: [EarnedBadgeView]
}
