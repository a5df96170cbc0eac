import Foundation
import SurgeContracts

/// The badges Surge awards, as data: loaded at start-up from JSON (the built-in `BadgeCatalogue.standard`, or a file
/// an operator points `BADGE_CATALOGUE_FILE` at), validated whole, so a broken catalogue stops the service with one
/// line naming the rule and is never half-loaded.
public struct BadgeCatalogue: Sendable, Equatable {
    public var version: Int
    public var badges: [Badge]

    public func badge(_ id: String) -> Badge? { badges.first { $0.id == id } }

    /// Parses and validates a catalogue document.
    public static func load(_ data: Data) throws(CatalogueError) -> BadgeCatalogue {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch {
            throw CatalogueError(badge: nil, "is not a catalogue document: \(Self.describe(error))")
        }
        var badges: [Badge] = []
        var seen: Set<String> = []
        for (index, entry) in document.badges.enumerated() {
            let name = entry.id ?? "#\(index + 1)"
            let badge = try Badge(entry, named: name)
            guard seen.insert(badge.id).inserted else { throw CatalogueError(badge: name, "is defined twice") }
            badges.append(badge)
        }
        let catalogue = BadgeCatalogue(version: document.version, badges: badges)
        try catalogue.validateComposites()
        return catalogue
    }

    private func validateComposites() throws(CatalogueError) {
        for badge in badges {
            guard case .allOf(let parts) = badge.rule else { continue }
            for part in parts {
                guard let other = self.badge(part) else { throw CatalogueError(badge: badge.id, "lists an unknown badge \(part)") }
                if case .allOf = other.rule { throw CatalogueError(badge: badge.id, "lists \(part), another composite") }
            }
        }
    }

    private static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return "\(error)" }
        switch decoding {
        case .keyNotFound(let key, let context): return "\((context.codingPath + [key]).map(\.stringValue).joined(separator: ".")) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    /// The document as written: loose, so that validation can name what is wrong.
    struct Document: Decodable {
        var version: Int
        var badges: [Entry]
    }

    struct Entry: Decodable {
        var id: String?
        var title: String?
        var description: String?
        var icon: String?
        var secret: Bool?
        var bonusPoints: Int?
        var levels: [LevelEntry]?
        var rule: RuleEntry?
    }

    struct LevelEntry: Decodable {
        var title: String
        var threshold: Int
    }

    struct RuleEntry: Decodable {
        var kind: String
        var of: String?
        var challengeKind: String?
        var challengeID: String?
        var window: String?
        var badges: [String]?
    }
}

/// A broken catalogue: which badge, and what is wrong with it.
public struct CatalogueError: Error, Equatable, CustomStringConvertible {
    public var badge: String?
    public var reason: String

    public init(badge: String?, _ reason: String) {
        self.badge = badge
        self.reason = reason
    }

    public var description: String { badge.map { "badge catalogue: badge \($0) \(reason)" } ?? "badge catalogue \(reason)" }
}

public struct Badge: Sendable, Equatable {
    /// A slug, stable across releases: awards are kept under it.
    public var id: String
    public var title: String
    public var description: String
    public var icon: String
    /// Hidden from the catalogue and the locked list until earned.
    public var secret: Bool
    /// Bonus points that come with it (shown; progress books them as its own ledger row).
    public var bonusPoints: Int?
    /// One or more levels (bronze, silver, gold), thresholds strictly increasing.
    public var levels: [Level]
    public var rule: Rule

    public struct Level: Sendable, Equatable {
        /// 1, 2, 3...
        public var level: Int
        public var title: String
        public var threshold: Int
    }

    /// Earned once per period: a week's badge is earned again the next week.
    public var isPerPeriod: Bool {
        switch rule {
        case .weeklyChallenge, .weeklyGoal, .firstPlace: true
        case .count, .streak, .allOf: false
        }
    }

    init(_ entry: BadgeCatalogue.Entry, named name: String) throws(CatalogueError) {
        guard let id = entry.id, id.range(of: "^[a-z0-9][a-z0-9-]{0,63}$", options: .regularExpression) != nil else {
            throw CatalogueError(badge: name, "needs an id of lowercase letters, digits and dashes (at most 64)")
        }
        guard let title = entry.title, !title.trimmingCharacters(in: .whitespaces).isEmpty else { throw CatalogueError(badge: id, "needs a title") }
        guard let rule = entry.rule else { throw CatalogueError(badge: id, "needs a rule") }
        guard let levels = entry.levels, !levels.isEmpty else { throw CatalogueError(badge: id, "needs at least one level") }
        self.id = id
        self.title = title
        self.description = entry.description ?? ""
        self.icon = entry.icon ?? "medal"
        self.secret = entry.secret ?? false
        if let bonus = entry.bonusPoints, !(1...1000).contains(bonus) { throw CatalogueError(badge: id, "has bonusPoints outside 1...1000") }
        self.bonusPoints = entry.bonusPoints
        self.rule = try Rule(rule, badge: id)
        var previous = 0
        self.levels = []
        for (index, level) in levels.enumerated() {
            guard level.threshold > previous else {
                throw CatalogueError(badge: id, "has level \(index + 1) out of order: its threshold \(level.threshold) must be above \(previous)")
            }
            previous = level.threshold
            self.levels.append(Level(level: index + 1, title: level.title, threshold: level.threshold))
        }
        switch self.rule {
        case .allOf(let parts):
            guard levels.count == 1, levels[0].threshold == parts.count else {
                throw CatalogueError(badge: id, "is a composite of \(parts.count) badges: it has one level whose threshold is \(parts.count)")
            }
        case .weeklyChallenge, .weeklyGoal, .firstPlace:
            guard levels.count == 1, levels[0].threshold == 1 else { throw CatalogueError(badge: id, "is earned per period: one level, threshold 1") }
        case .count, .streak:
            break
        }
    }
}

/// What earns a badge.
public enum Rule: Sendable, Equatable {
    /// How many of something the user did, optionally in one kind of challenge or one challenge.
    case count(Measure, Scope)
    /// A streak reaching each level's threshold, optionally in one kind of challenge or one challenge.
    case streak(Scope)
    /// A weekly challenge completed: one badge per week ("Weekly Challenge 2026-11-16").
    case weeklyChallenge
    /// A week's goal reached (progress's weekly-goal bonus): one badge per week.
    case weeklyGoal
    /// First place on a group's board when its window closes: one per window.
    case firstPlace(WindowKind)
    /// Every one of the listed badges earned (at any level).
    case allOf([String])

    public enum Measure: String, Sendable, CaseIterable {
        case chores
        case checkIns = "check-ins"
        case challengesCompleted = "challenges-completed"
        case daysCompleted = "days-completed"
    }

    public enum WindowKind: String, Sendable {
        case week, month
    }

    /// Where a count or streak is taken: everywhere, in one kind of challenge, or in one challenge.
    public enum Scope: Sendable, Equatable, Hashable {
        case everywhere
        case kind(ChallengeKind)
        case challenge(UUID)

        /// As kept with the user's facts.
        public var key: String {
            switch self {
            case .everywhere: ""
            case .kind(let kind): "kind:\(kind.rawValue)"
            case .challenge(let id): "challenge:\(id.key)"
            }
        }
    }

    /// The fact whose value the levels' thresholds are compared with.
    public var fact: Fact? {
        switch self {
        case .count(let measure, let scope): Fact(name: measure.rawValue, scope: scope.key)
        case .streak(let scope): Fact(name: Fact.streak, scope: scope.key)
        case .weeklyChallenge, .weeklyGoal, .firstPlace, .allOf: nil
        }
    }

    init(_ entry: BadgeCatalogue.RuleEntry, badge: String) throws(CatalogueError) {
        func scope() throws(CatalogueError) -> Scope {
            switch (entry.challengeKind, entry.challengeID) {
            case (nil, nil): return .everywhere
            case (let kind?, nil):
                guard let kind = ChallengeKind(rawValue: kind) else { throw CatalogueError(badge: badge, "names an unknown challengeKind \(kind)") }
                return .kind(kind)
            case (nil, let id?):
                guard let id = UUID(uuidString: id) else { throw CatalogueError(badge: badge, "names a challengeID that is not a UUID: \(id)") }
                return .challenge(id)
            case (.some, .some): throw CatalogueError(badge: badge, "names both a challengeKind and a challengeID: pick one")
            }
        }
        switch entry.kind {
        case "count":
            guard let of = entry.of, let measure = Measure(rawValue: of) else {
                throw CatalogueError(badge: badge, "counts \(entry.of ?? "nothing"): of must be one of \(Measure.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self = .count(measure, try scope())
        case "challengeCompleted":
            guard entry.challengeID != nil || entry.challengeKind != nil else {
                throw CatalogueError(badge: badge, "is challengeCompleted without a challengeID or challengeKind (use count of challenges-completed)")
            }
            self = .count(.challengesCompleted, try scope())
        case "streak": self = .streak(try scope())
        case "weeklyChallenge": self = .weeklyChallenge
        case "weeklyGoal": self = .weeklyGoal
        case "firstPlace":
            guard let window = WindowKind(rawValue: entry.window ?? "week") else { throw CatalogueError(badge: badge, "names a window other than week or month") }
            self = .firstPlace(window)
        case "allOf":
            guard let parts = entry.badges, !parts.isEmpty, Set(parts).count == parts.count, !parts.contains(badge) else {
                throw CatalogueError(badge: badge, "is allOf without a list of distinct other badges")
            }
            self = .allOf(parts)
        default:
            throw CatalogueError(badge: badge, "has a rule of unknown kind \(entry.kind) (count, challengeCompleted, streak, weeklyChallenge, weeklyGoal, firstPlace, allOf)")
        }
    }
}

/// A number kept per user and scope, compared with badge thresholds: counts only grow, a streak fact is the best
/// streak seen.
public struct Fact: Hashable, Sendable {
    public static let streak = "streak"

    public var name: String
    public var scope: String

    public init(name: String, scope: String) {
        self.name = name
        self.scope = scope
    }

    /// The facts one occurrence touches: everywhere, in its kind of challenge, and in its challenge.
    public static func scopes(_ name: String, kind: ChallengeKind?, challengeID: UUID?) -> [Fact] {
        var facts = [Fact(name: name, scope: Rule.Scope.everywhere.key)]
        if let kind { facts.append(Fact(name: name, scope: Rule.Scope.kind(kind).key)) }
        if let challengeID { facts.append(Fact(name: name, scope: Rule.Scope.challenge(challengeID).key)) }
        return facts
    }
}

/// A challenge's own badges (`ChallengeDefinition.badges`): catalogue badges about that challenge only, kept under
/// ids no catalogue badge can take (a catalogue id has no colon). The challenges service validated them.
extension BadgeCatalogue {
    public init(challengeID: UUID, badges: [ChallengeBadge]) {
        self.init(version: 0, badges: badges.map { Badge($0, of: challengeID) })
    }

    /// The challenge a challenge's own badge belongs to; nil for a catalogue badge.
    public static func challenge(ofBadge badgeID: String) -> UUID? {
        let parts = badgeID.split(separator: ":")
        guard parts.count == 3, parts[0] == "challenge" else { return nil }
        return UUID(uuidString: String(parts[1]))
    }
}

extension Badge {
    init(_ badge: ChallengeBadge, of challengeID: UUID) {
        let scope = Rule.Scope.challenge(challengeID)
        let threshold: Int
        switch badge.rule.kind {
        case .challengeCompleted:
            rule = .count(.challengesCompleted, scope)
            threshold = 1
        case .streak:
            rule = .streak(scope)
            threshold = badge.rule.threshold ?? 1
        case .firstPlace:
            rule = .firstPlace(badge.rule.window == .month ? .month : .week)
            threshold = 1
        }
        id = "challenge:\(challengeID.key):\(badge.id)"
        title = badge.title
        description = badge.description ?? ""
        icon = badge.icon ?? "medal"
        secret = false
        bonusPoints = nil
        levels = [Level(level: 1, title: badge.title, threshold: threshold)]
    }
}
