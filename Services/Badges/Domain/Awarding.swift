import Foundation
import SurgeContracts

/// One level of one badge, earned once per period ("" for badges earned once ever).
public struct Award: Sendable, Hashable {
    public var badgeID: String
    public var level: Int
    public var period: String
    /// What the user sees: the level's title, or the badge's with its period ("Weekly Challenge 2026-11-16").
    public var title: String

    public init(badgeID: String, level: Int, period: String, title: String) {
        self.badgeID = badgeID
        self.level = level
        self.period = period
        self.title = title
    }
}

/// Which awards a change earns. Awards are only ever added: a count that an undone check-in lowers, or a streak
/// that breaks, never takes a badge back.
public enum Awarding {
    /// Every level of every badge measured by `fact` whose threshold `value` reaches (already held ones included:
    /// storing an award is idempotent).
    public static func reached(_ catalogue: BadgeCatalogue, fact: Fact, value: Int) -> [Award] {
        catalogue.badges.filter { $0.rule.fact == fact }.flatMap { badge in
            badge.levels.filter { $0.threshold <= value }.map { Award(badgeID: badge.id, level: $0.level, period: "", title: $0.title) }
        }
    }

    /// A weekly challenge completed, or a week's goal reached (`rule`), in the week that begins on `monday`.
    public static func weekly(_ catalogue: BadgeCatalogue, _ rule: Rule, week monday: LocalDate) -> [Award] {
        catalogue.badges.filter { $0.rule == rule }.map {
            Award(badgeID: $0.id, level: 1, period: monday.description, title: "\($0.levels[0].title) \(monday)")
        }
    }

    /// A winner of a group board's closed window (`2026-W47`, `2026-11`).
    public static func firstPlace(_ catalogue: BadgeCatalogue, window kind: Rule.WindowKind, key: String) -> [Award] {
        catalogue.badges.filter { $0.rule == .firstPlace(kind) }.map {
            Award(badgeID: $0.id, level: 1, period: key, title: "\($0.levels[0].title) \(key)")
        }
    }

    /// Composites whose every part is in `held` (badge ids the user holds at any level).
    public static func composites(_ catalogue: BadgeCatalogue, held: Set<String>) -> [Award] {
        catalogue.badges.compactMap { badge in
            guard case .allOf(let parts) = badge.rule, parts.allSatisfy(held.contains) else { return nil }
            return Award(badgeID: badge.id, level: 1, period: "", title: badge.levels[0].title)
        }
    }

    /// How far a user is from a badge's next level: `current` of `target` ("7 of 10"); nil once every level is held.
    public static func progress(of badge: Badge, value: Int, heldLevels: Int) -> (level: Badge.Level, current: Int, target: Int)? {
        guard heldLevels < badge.levels.count else { return nil }
        let next = badge.levels[heldLevels]
        return (next, min(value, next.threshold), next.threshold)
    }

    /// The Monday of `date`'s ISO week: a weekly challenge's period.
    public static func week(of date: LocalDate) -> LocalDate { date.startOfWeek }
}
