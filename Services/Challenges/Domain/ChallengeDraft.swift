import Foundation
import SurgeCalendar
import SurgeContracts

/// What a client sends to create a competition, habit, chore or weekly challenge: a `ChallengeVersion` without
/// ids, versions and ownership, with kind-specific defaults for what it leaves out. Field names are the definition's,
/// so a problem's field path (`tasks[2].target`, `rules.points.series.basePoints`) names the same place in both.
/// Its JSON is one object: the kind, the name and the fields (`draft.category` reads `draft.fields.category`).
@dynamicMemberLookup
public struct ChallengeDraft: Sendable, Equatable {
    public var kind: ChallengeKind
    public var name: String
    public var fields = DraftFields()

    public subscript<Value>(dynamicMember field: WritableKeyPath<DraftFields, Value>) -> Value {
        get { fields[keyPath: field] }
        set { fields[keyPath: field] = newValue }
    }

    /// The group's members the draft names besides its author: a chore's assignee.
    public var namedMembers: Set<UUID> { Set([fields.chore?.assigneeID].compactMap { $0 }) }
}

/// Every field of a draft but the kind and the name: what a draft may leave to its kind's defaults, and what an edit
/// (`ChallengePatch`) may replace.
public struct DraftFields: Codable, Sendable, Equatable {
    public var description: String?
    /// Default: the kind's own (`competition`, `habit`, `chores`, `weekly`).
    public var category: String?
    /// Default: `beginner` for habits and chores, `moderate` otherwise.
    public var difficulty: Difficulty?
    /// Default: `group` for chores, `private` otherwise.
    public var visibility: Visibility?
    /// The household of a chore, or the group a `group`-visible definition belongs to.
    public var groupID: UUID?
    /// 1-365; absent for open-ended habits, chores and weekly challenges. Derived from the time limit for
    /// competitions.
    public var durationDays: Int?
    public var estimatedDailyMinutes: Int?
    /// Default for habits: one daily checkbox; for competitions: one quantity task in the competition's unit.
    /// Chores omit it: their one checkbox task is made from the name, description and `chore.points`.
    public var tasks: [TaskDraft]?
    public var rules: RulesDraft?
    public var chore: ChoreDraft?
    public var habit: HabitDetails?
    public var competition: CompetitionDetails?
    /// Badges of the challenge's own (a competition's winner, a streak on it), beside the badge catalogue's. An edit
    /// replaces them (`[]` removes them).
    public var badges: [ChallengeBadge]?
}

extension ChallengeDraft: Codable {
    private enum CodingKeys: String, CodingKey { case kind, name }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            kind: try container.decode(ChallengeKind.self, forKey: .kind), name: try container.decode(String.self, forKey: .name),
            fields: try DraftFields(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(name, forKey: .name)
        try fields.encode(to: encoder)
    }
}

/// A task as a client writes it: `ChallengeTask` with the cadence defaulting to daily.
public struct TaskDraft: Codable, Sendable, Equatable {
    public var taskID: String
    public var title: String
    public var details: String?
    public var kind: TaskKind
    public var target: Double?
    public var targetFromDailyGoal: Double?
    public var unit: String?
    public var cadence: Cadence?
    public var points: Int?
}

extension TaskDraft {
    public init(_ task: ChallengeTask) {
        self.init(
            taskID: task.taskID, title: task.title, details: task.details, kind: task.kind, target: task.target,
            targetFromDailyGoal: task.targetFromDailyGoal, unit: task.unit, cadence: task.cadence, points: task.points)
    }
}

/// Rules as a client writes them; each part defaults by kind.
public struct RulesDraft: Codable, Sendable, Equatable {
    public var failure: FailureRule?
    public var streak: StreakRule?
    public var points: PointsRule?
    public var checkInGraceMinutes: Int?
    /// Time off; the kind's default (`PauseRule.default(for:)`) when absent.
    public var pause: PauseRule?
}

extension RulesDraft {
    public init(_ rules: ChallengeRules) {
        self.init(
            failure: rules.failure, streak: rules.streak, points: rules.points, checkInGraceMinutes: rules.checkInGraceMinutes, pause: rules.pause)
    }
}

/// A chore as a client writes it (004): the household's assignee, first due date and time, recurrence, points.
public struct ChoreDraft: Codable, Sendable, Equatable {
    public var assigneeID: UUID?
    public var firstDueOn: LocalDate
    public var dueTime: LocalTime?
    public var recurrence: ChoreRecurrence
    /// Points for doing the chore once; default 1.
    public var points: Int?
    /// Minutes before the due time the assignee is reminded, besides at the due time; default 60, 0 for none. Only
    /// with a `dueTime`.
    public var reminderLeadMinutes: Int?
}

extension ChallengeDraft {
    /// The draft that builds `definition` again: what an edit starts from.
    public init(_ definition: ChallengeVersion) {
        let isChore = definition.kind == .chore
        let fields = DraftFields(
            description: definition.description, category: definition.category, difficulty: definition.difficulty,
            visibility: definition.visibility, groupID: definition.groupID,
            durationDays: definition.kind == .competition ? nil : definition.durationDays,
            estimatedDailyMinutes: definition.estimatedDailyMinutes,
            tasks: isChore ? nil : definition.tasks.map(TaskDraft.init),
            rules: RulesDraft(definition.rules),
            chore: definition.chore.map { chore in
                ChoreDraft(
                    assigneeID: chore.assigneeID, firstDueOn: chore.firstDueOn, dueTime: chore.dueTime, recurrence: chore.recurrence,
                    points: definition.tasks.first?.points, reminderLeadMinutes: chore.reminderLeadMinutes)
            },
            habit: definition.habit, competition: definition.competition, badges: definition.badges)
        self.init(kind: definition.kind, name: definition.name, fields: fields)
    }

    // MARK: Defaults by kind

    var resolvedDescription: String { (fields.description ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }

    var resolvedCategory: String {
        if let category = fields.category { return category.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() }
        switch kind {
        case .curated: return "general"
        case .competition: return "competition"
        case .habit: return "habit"
        case .chore: return "chores"
        case .weekly: return "weekly"
        }
    }

    var resolvedDifficulty: Difficulty {
        fields.difficulty ?? ([.habit, .chore].contains(kind) ? .beginner : .moderate)
    }

    var resolvedVisibility: Visibility {
        if let visibility = fields.visibility { return visibility }
        switch kind {
        case .curated: return .curated
        case .chore: return .group
        case .competition, .habit, .weekly: return .private
        }
    }

    /// Competitions last as many local days as their time limit touches; the rest say so themselves.
    var resolvedDurationDays: Int? {
        guard kind == .competition, let competition = fields.competition, let days = CompetitionWindow.days(competition) else {
            return fields.durationDays
        }
        return days
    }

    var resolvedRules: ChallengeRules {
        let rules = fields.rules
        let failure = rules?.failure ?? FailureRule(mode: .none)
        let streak = rules?.streak ?? StreakRule(period: kind == .weekly ? .week : .day)
        let points = rules?.points ?? (kind == .chore ? PointsRule(kind: .perTask) : .none)
        // Habits are offline-first (003): a day's completion may sync up to a day late.
        let grace = rules?.checkInGraceMinutes ?? (kind == .habit ? 1440 : 0)
        // Absent, the kind's default applies (`ChallengeDefinition.pauseRule`), so definitions from before pauses
        // existed read the same.
        return ChallengeRules(failure: failure, streak: streak, points: points, checkInGraceMinutes: grace, pause: rules?.pause)
    }

    var resolvedTasks: [ChallengeTask] {
        let name = self.name.trimmingCharacters(in: .whitespacesAndNewlines)
        if kind == .chore, let chore = fields.chore {
            let details = resolvedDescription.isEmpty ? nil : resolvedDescription
            return [
                ChallengeTask(
                    taskID: "chore", title: name, details: details, kind: .checkbox, cadence: chore.recurrence.cadence,
                    points: chore.points ?? 1)
            ]
        }
        if let tasks = fields.tasks {
            return tasks.map { task in
                ChallengeTask(
                    taskID: task.taskID, title: task.title.trimmingCharacters(in: .whitespacesAndNewlines),
                    details: task.details?.trimmingCharacters(in: .whitespacesAndNewlines), kind: task.kind, target: task.target,
                    targetFromDailyGoal: task.targetFromDailyGoal, unit: task.unit.map(Units.canonical), cadence: task.cadence ?? .daily,
                    points: task.points)
            }
        }
        switch kind {
        case .habit:
            return [ChallengeTask(taskID: "done", title: name, kind: .checkbox, cadence: .daily)]
        case .competition:
            return [ChallengeTask(taskID: "total", title: name, kind: .quantity, unit: fields.competition.map { Units.canonical($0.unit) }, cadence: .daily)]
        default:
            return []
        }
    }

    /// The definition this draft describes. Call after `validate` found nothing.
    public func definition(challengeID: UUID, version: Int, effectiveFrom: LocalDate?, ownerID: UUID?) -> ChallengeVersion {
        var competition = fields.competition
        if let unit = competition?.unit { competition?.unit = Units.canonical(unit) }
        return ChallengeVersion(
            challengeID: challengeID, version: version, effectiveFrom: effectiveFrom, kind: kind,
            name: name.trimmingCharacters(in: .whitespacesAndNewlines), description: resolvedDescription, category: resolvedCategory,
            difficulty: resolvedDifficulty, visibility: resolvedVisibility, ownerID: ownerID, groupID: fields.groupID,
            durationDays: resolvedDurationDays, estimatedDailyMinutes: fields.estimatedDailyMinutes, tasks: resolvedTasks,
            rules: resolvedRules,
            chore: fields.chore.map {
                ChoreDetails(
                    assigneeID: $0.assigneeID, firstDueOn: $0.firstDueOn, dueTime: $0.dueTime, recurrence: $0.recurrence,
                    points: resolvedTasks.first?.points, reminderLeadMinutes: $0.reminderLeadMinutes)
            },
            habit: fields.habit, competition: competition,
            badges: fields.badges.flatMap { $0.isEmpty ? nil : $0.map(Self.trimmed) })
    }

    private static func trimmed(_ badge: ChallengeBadge) -> ChallengeBadge {
        var badge = badge
        badge.title = badge.title.trimmingCharacters(in: .whitespacesAndNewlines)
        badge.description = badge.description?.trimmingCharacters(in: .whitespacesAndNewlines)
        return badge
    }
}

extension ChoreRecurrence {
    /// The cadence of a chore's task, for consumers that read tasks only. A one-off chore (`none`) stays due every
    /// day until done (004: overdue chores remain available); `chore.firstDueOn` says when it is first due.
    var cadence: Cadence {
        switch kind {
        case .none, .daily: return .daily
        case .weekly:
            if let weekdays, !weekdays.isEmpty { return Cadence(kind: .weekdays, weekdays: weekdays.sorted()) }
            return Cadence(kind: .weekly)
        case .monthly: return Cadence(kind: .monthly)
        }
    }
}

/// A competition's time limit in local days.
enum CompetitionWindow {
    static let maximumSeconds: TimeInterval = 366 * 86_400

    /// How many days the window lasts in the competition's zone, a part day counting as a whole (a week from Monday
    /// 09:00 is 7); nil if the window or zone is invalid.
    static func days(_ competition: CompetitionDetails) -> Int? {
        guard competition.startsAt < competition.endsAt, let calendar = LocalCalendar(zoneNamed: competition.timeZone) else { return nil }
        return calendar.wholeDays(from: competition.startsAt, to: competition.endsAt)
    }
}
