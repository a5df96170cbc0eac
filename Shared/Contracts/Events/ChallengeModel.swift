import Foundation

// The definition of anything a person can commit to. One model serves every app: what differs between 75 Hard, a
// water competition, a hobby and a household chore is data (tasks, cadences, rules, details), not code paths.

public enum ChallengeKind: String, Codable, Sendable, JSONSchemaEnum {
    /// A curated library challenge (75 Hard, 21-Day Meditation...).
    case curated
    /// A user-created competition with a unit, a time limit and a ranking by total.
    case competition
    /// A personal habit or hobby; never fails.
    case habit
    /// A household chore with an assignee, a due date and a recurrence.
    case chore
    /// "Complete X this week", X derived from the user's daily goal.
    case weekly
}

public enum Difficulty: String, Codable, Sendable, JSONSchemaEnum {
    case beginner, moderate, hard, extreme
}

public enum Visibility: String, Codable, Sendable, JSONSchemaEnum {
    /// In the library, for everyone.
    case curated
    /// Created by a user, discoverable by anyone.
    case `public`
    /// The owner and invitees only.
    case `private`
    /// The members of `groupID` only.
    case group
}

public enum TaskKind: String, Codable, Sendable, JSONSchemaEnum {
    /// Done or not done.
    case checkbox
    /// A logged amount in `unit`, summed per period and compared with `target`.
    case quantity
    /// A photo as proof.
    case photo
}

public enum CadenceKind: String, Codable, Sendable, JSONSchemaEnum {
    /// Every day.
    case daily
    /// On the listed weekdays.
    case weekdays
    /// On `timesPerWeek` different days of each Monday-Sunday week.
    case timesPerWeek
    /// Once in each Monday-Sunday week.
    case weekly
    /// Once in each calendar month.
    case monthly
}

/// When a task is due. Weeks run Monday to Sunday; days and months are the judged person's (or group's) own.
public struct Cadence: Codable, Sendable, Equatable {
    public var kind: CadenceKind
    /// For `weekdays`.
    public var weekdays: [Weekday]?
    /// For `timesPerWeek`, 1...7.
    public var timesPerWeek: Int?

    public init(kind: CadenceKind, weekdays: [Weekday]? = nil, timesPerWeek: Int? = nil) {
        self.kind = kind
        self.weekdays = weekdays
        self.timesPerWeek = timesPerWeek
    }

    public static let daily = Cadence(kind: .daily)
}

/// One requirement: "drink 3.8 litres", "read 10 pages", "progress photo".
public struct ChallengeTask: Codable, Sendable, Equatable {
    /// Stable within the definition across versions: `[a-z0-9-]`, at most 40 characters.
    public var taskID: String
    public var title: String
    public var details: String?
    public var kind: TaskKind
    /// For quantity tasks: the amount that completes the task for its period.
    public var target: Double?
    /// For quantity tasks: the target as a multiple of the user's daily goal (a weekly challenge's 7 x daily goal).
    public var targetFromDailyGoal: Double?
    /// For quantity tasks: a known unit (`litres`, `push-ups`...) or a custom one.
    public var unit: String?
    public var cadence: Cadence
    /// Points for completing the task once, overriding the rule's `pointsPerTask` (a chore's custom points).
    public var points: Int?

    public init(
        taskID: String, title: String, details: String? = nil, kind: TaskKind, target: Double? = nil,
        targetFromDailyGoal: Double? = nil, unit: String? = nil, cadence: Cadence = .daily, points: Int? = nil
    ) {
        self.taskID = taskID
        self.title = title
        self.details = details
        self.kind = kind
        self.target = target
        self.targetFromDailyGoal = targetFromDailyGoal
        self.unit = unit
        self.cadence = cadence
        self.points = points
    }
}

public enum FailureMode: String, Codable, Sendable, JSONSchemaEnum {
    /// Any missed requirement fails the attempt; the person restarts at day 1 (75 Hard).
    case strict
    /// Up to `allowedMissedDays` missed days; one more fails the attempt.
    case tolerant
    /// Never fails; a miss only breaks the streak (habits).
    case none
}

public struct FailureRule: Codable, Sendable, Equatable {
    public var mode: FailureMode
    public var allowedMissedDays: Int?

    public init(mode: FailureMode, allowedMissedDays: Int? = nil) {
        self.mode = mode
        self.allowedMissedDays = allowedMissedDays
    }
}

public enum StreakPeriod: String, Codable, Sendable, JSONSchemaEnum {
    case day, week
}

public struct StreakRule: Codable, Sendable, Equatable {
    /// What one streak step is: a completed day, or a week whose goal was met.
    public var period: StreakPeriod
    /// Freezes granted on the 1st of each month; a freeze keeps the streak through one missed period that had some
    /// activity (001 CHAL-03). 0 disables freezes.
    public var freezesPerMonth: Int
    /// For weekly streaks: any activity in the week keeps the streak even below the goal (001 WEEKLY-05).
    public var activityKeepsWeeklyStreak: Bool
    /// For weekly streaks: how many days' worth of each daily task make the week's goal (001 WEEKLY-01: 5). All 7
    /// when absent.
    public var weeklyGoalDays: Int?

    public init(period: StreakPeriod = .day, freezesPerMonth: Int = 0, activityKeepsWeeklyStreak: Bool = false, weeklyGoalDays: Int? = nil) {
        self.period = period
        self.freezesPerMonth = freezesPerMonth
        self.activityKeepsWeeklyStreak = activityKeepsWeeklyStreak
        self.weeklyGoalDays = weeklyGoalDays
    }
}

public enum PointsKind: String, Codable, Sendable, JSONSchemaEnum {
    case none
    /// Each completed task earns its `points`, or the rule's `pointsPerTask`.
    case perTask
    /// 001's series formula for logged repetitions.
    case series
}

/// A multiplier that applies from a streak length on.
public struct StreakMultiplier: Codable, Sendable, Equatable {
    public var fromStreak: Int
    public var multiplier: Double

    public init(fromStreak: Int, multiplier: Double) {
        self.fromStreak = fromStreak
        self.multiplier = multiplier
    }
}

/// The anti-cheat cap: repetitions above `dailyGoal x multiplier` for the user's level are logged but earn nothing.
public struct CapBand: Codable, Sendable, Equatable {
    public var fromLevel: Int
    public var multiplierOfDailyGoal: Double

    public init(fromLevel: Int, multiplierOfDailyGoal: Double) {
        self.fromLevel = fromLevel
        self.multiplierOfDailyGoal = multiplierOfDailyGoal
    }
}

/// 001's formula: points per series = base x (reps x repMultiplier + seriesNumber x seriesMultiplier) x streak multiplier.
public struct SeriesFormula: Codable, Sendable, Equatable {
    public var basePoints: Double
    public var repMultiplier: Double
    public var seriesMultiplier: Double
    public var streakMultipliers: [StreakMultiplier]
    public var capBands: [CapBand]
    /// Total points needed to reach level 2, 3, ... (level 1 needs none).
    public var levelThresholds: [Int]

    public init(
        basePoints: Double, repMultiplier: Double, seriesMultiplier: Double, streakMultipliers: [StreakMultiplier],
        capBands: [CapBand], levelThresholds: [Int]
    ) {
        self.basePoints = basePoints
        self.repMultiplier = repMultiplier
        self.seriesMultiplier = seriesMultiplier
        self.streakMultipliers = streakMultipliers
        self.capBands = capBands
        self.levelThresholds = levelThresholds
    }
}

public struct PointsRule: Codable, Sendable, Equatable {
    public var kind: PointsKind
    public var pointsPerTask: Int?
    public var series: SeriesFormula?
    /// Awarded when a week's goal is reached (001 WEEKLY-03: 500).
    public var weeklyGoalBonus: Int?
    /// Awarded when the challenge is completed (001 CHAL-02: 200).
    public var completionBonus: Int?

    public init(kind: PointsKind, pointsPerTask: Int? = nil, series: SeriesFormula? = nil, weeklyGoalBonus: Int? = nil, completionBonus: Int? = nil) {
        self.kind = kind
        self.pointsPerTask = pointsPerTask
        self.series = series
        self.weeklyGoalBonus = weeklyGoalBonus
        self.completionBonus = completionBonus
    }

    public static let none = PointsRule(kind: .none)
}

public enum PauseMode: String, Codable, Sendable, JSONSchemaEnum {
    /// No pauses, rest weekdays or skip days: the rules are strict (75 Hard, medication).
    case notAllowed
    /// Paused days are neither completed nor missed: the streak waits, the day number does not advance.
    case pausesStreak
    /// The time limit does not move and every day counts as usual; a pause only silences reminders (competitions).
    case remindersOnly
}

/// Time off: whether and how much a participant may pause, and planned rest days (issue 16).
public struct PauseRule: Codable, Sendable, Equatable {
    public var mode: PauseMode
    /// The longest pause, in days; a pause "until resumed" ends after this many. Unlimited when absent.
    public var maxDaysPerPause: Int?
    /// Pauses that may start in one local month. Unlimited when absent.
    public var pausesPerMonth: Int?
    /// Pauses in one attempt. Unlimited when absent.
    public var pausesPerAttempt: Int?
    /// Weekdays on which nothing is asked ("not on Sundays"): they count like paused days.
    public var restWeekdays: [Weekday]?
    /// Skip days a participant may spend each local month, each on the day itself: they count like paused days.
    public var skipDaysPerMonth: Int?

    public init(
        mode: PauseMode, maxDaysPerPause: Int? = nil, pausesPerMonth: Int? = nil, pausesPerAttempt: Int? = nil,
        restWeekdays: [Weekday]? = nil, skipDaysPerMonth: Int? = nil
    ) {
        self.mode = mode
        self.maxDaysPerPause = maxDaysPerPause
        self.pausesPerMonth = pausesPerMonth
        self.pausesPerAttempt = pausesPerAttempt
        self.restWeekdays = restWeekdays
        self.skipDaysPerMonth = skipDaysPerMonth
    }

    public static let notAllowed = PauseRule(mode: .notAllowed)

    /// The rule a definition without one (published before pauses existed) gets: habits and weekly challenges may
    /// pause freely, a competition's pause only silences reminders, curated challenges and chores may not pause.
    public static func `default`(for kind: ChallengeKind) -> PauseRule {
        switch kind {
        case .habit, .weekly: PauseRule(mode: .pausesStreak)
        case .competition: PauseRule(mode: .remindersOnly)
        case .curated, .chore: .notAllowed
        }
    }
}

public struct ChallengeRules: Codable, Sendable, Equatable {
    public var failure: FailureRule
    public var streak: StreakRule
    public var points: PointsRule
    /// How long after a local day ends a check-in for that day is still accepted (offline clients syncing late). The
    /// day is judged when the window closes.
    public var checkInGraceMinutes: Int
    /// Pauses, rest weekdays and skip days; `PauseRule.default(for:)` the kind when absent.
    public var pause: PauseRule?

    public init(
        failure: FailureRule, streak: StreakRule = StreakRule(), points: PointsRule = .none, checkInGraceMinutes: Int = 0, pause: PauseRule? = nil
    ) {
        self.failure = failure
        self.streak = streak
        self.points = points
        self.checkInGraceMinutes = checkInGraceMinutes
        self.pause = pause
    }
}

public enum RecurrenceKind: String, Codable, Sendable, JSONSchemaEnum {
    case none, daily, weekly, monthly
}

/// A chore's repetition: weekly on given weekdays, monthly on a day of the month (clamped to short months).
public struct ChoreRecurrence: Codable, Sendable, Equatable {
    public var kind: RecurrenceKind
    public var weekdays: [Weekday]?
    public var dayOfMonth: Int?

    public init(kind: RecurrenceKind, weekdays: [Weekday]? = nil, dayOfMonth: Int? = nil) {
        self.kind = kind
        self.weekdays = weekdays
        self.dayOfMonth = dayOfMonth
    }
}

public struct ChoreDetails: Codable, Sendable, Equatable {
    public var assigneeID: UUID?
    /// The first due date, in the household's time zone.
    public var firstDueOn: LocalDate
    /// Due time on each due date; end of day when absent.
    public var dueTime: LocalTime?
    public var recurrence: ChoreRecurrence
    /// Points for doing the chore once (the same as its one task's `points`); absent in definitions published
    /// before it was carried here.
    public var points: Int?
    /// How many minutes before its due time the assignee is reminded, besides the reminder at the due time: 60 when
    /// absent, 0 for none. Only for a chore with a `dueTime`.
    public var reminderLeadMinutes: Int?

    public init(
        assigneeID: UUID?, firstDueOn: LocalDate, dueTime: LocalTime?, recurrence: ChoreRecurrence, points: Int? = nil,
        reminderLeadMinutes: Int? = nil
    ) {
        self.assigneeID = assigneeID
        self.firstDueOn = firstDueOn
        self.dueTime = dueTime
        self.recurrence = recurrence
        self.points = points
        self.reminderLeadMinutes = reminderLeadMinutes
    }
}

public struct HabitDetails: Codable, Sendable, Equatable {
    /// `#RRGGBB`.
    public var colour: String?
    public var notes: String?
    public var priority: Int?
    public var reminderTime: LocalTime?

    public init(colour: String?, notes: String?, priority: Int?, reminderTime: LocalTime?) {
        self.colour = colour
        self.notes = notes
        self.priority = priority
        self.reminderTime = reminderTime
    }
}

/// A competition's time limit: from `startsAt` to `endsAt`, stated in `timeZone`.
public struct CompetitionDetails: Codable, Sendable, Equatable {
    public var startsAt: Date
    public var endsAt: Date
    public var timeZone: String
    /// What the ranking sums, e.g. `litres`.
    public var unit: String

    public init(startsAt: Date, endsAt: Date, timeZone: String, unit: String) {
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.timeZone = timeZone
        self.unit = unit
    }
}

/// A badge a challenge names of its own (a competition's winner, a streak on this challenge), awarded by the badge
/// service beside its catalogue's, always about this challenge.
public struct ChallengeBadge: Codable, Sendable, Equatable {
    public static let maximumCount = 10
    public static let idPattern = "^[a-z0-9][a-z0-9-]{0,39}$"
    public static let titleLength = 100
    public static let descriptionLength = 500
    public static let thresholds = 1...1000

    /// Unique within the challenge: lowercase letters, digits and dashes.
    public var id: String
    public var title: String
    public var description: String?
    /// A name the apps map to artwork; default `medal`.
    public var icon: String?
    public var rule: ChallengeBadgeRule

    public init(id: String, title: String, description: String? = nil, icon: String? = nil, rule: ChallengeBadgeRule) {
        self.id = id
        self.title = title
        self.description = description
        self.icon = icon
        self.rule = rule
    }
}

/// What earns a challenge's own badge, by the badge catalogue's rule kinds, about this challenge only.
public struct ChallengeBadgeRule: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, JSONSchemaEnum {
        /// The challenge completed to its last day (not for chores, which never end).
        case challengeCompleted
        /// A streak on this challenge reaching `threshold` (days, or weeks for a weekly streak).
        case streak
        /// First on the challenge's board when one of its windows (`window`: week or month) closes; competitions only.
        case firstPlace
    }

    public enum Window: String, Codable, Sendable, JSONSchemaEnum {
        case week, month
    }

    public var kind: Kind
    /// `streak` only: the streak that earns it.
    public var threshold: Int?
    /// `firstPlace` only; default `week`.
    public var window: Window?

    public init(kind: Kind, threshold: Int? = nil, window: Window? = nil) {
        self.kind = kind
        self.threshold = threshold
        self.window = window
    }
}

/// One version of a definition, whole: what consumers keep instead of calling the challenges service.
public struct ChallengeDefinition: Codable, Sendable, Equatable {
    public var challengeID: UUID
    public var version: Int
    /// The first local date this version judges; earlier days keep the version that was in force then. Absent on
    /// version 1, which judges from the start.
    public var effectiveFrom: LocalDate?
    public var kind: ChallengeKind
    public var name: String
    public var description: String
    public var category: String
    public var difficulty: Difficulty
    public var visibility: Visibility
    public var ownerID: UUID?
    public var groupID: UUID?
    /// Absent for open-ended habits, chores and weekly challenges.
    public var durationDays: Int?
    public var estimatedDailyMinutes: Int?
    public var tasks: [ChallengeTask]
    public var rules: ChallengeRules
    public var chore: ChoreDetails?
    public var habit: HabitDetails?
    public var competition: CompetitionDetails?
    /// Badges of the challenge's own, beside the badge catalogue's; absent when it names none.
    public var badges: [ChallengeBadge]?

    public init(
        challengeID: UUID, version: Int, effectiveFrom: LocalDate?, kind: ChallengeKind, name: String, description: String,
        category: String, difficulty: Difficulty, visibility: Visibility, ownerID: UUID?, groupID: UUID?, durationDays: Int?,
        estimatedDailyMinutes: Int?, tasks: [ChallengeTask], rules: ChallengeRules, chore: ChoreDetails? = nil,
        habit: HabitDetails? = nil, competition: CompetitionDetails? = nil, badges: [ChallengeBadge]? = nil
    ) {
        self.challengeID = challengeID
        self.version = version
        self.effectiveFrom = effectiveFrom
        self.kind = kind
        self.name = name
        self.description = description
        self.category = category
        self.difficulty = difficulty
        self.visibility = visibility
        self.ownerID = ownerID
        self.groupID = groupID
        self.durationDays = durationDays
        self.estimatedDailyMinutes = estimatedDailyMinutes
        self.tasks = tasks
        self.rules = rules
        self.chore = chore
        self.habit = habit
        self.competition = competition
        self.badges = badges
    }

    /// The pause rule in force: the definition's own, or its kind's default.
    public var pauseRule: PauseRule { rules.pause ?? .default(for: kind) }

    /// The group's, owner's or (for curated challenges) the challenge's own id: the Kafka key of its events.
    public var partitionKey: String { (groupID ?? ownerID ?? challengeID).key }
}
