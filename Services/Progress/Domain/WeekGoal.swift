import SurgeContracts

/// Whether a Monday-to-Sunday week met its goal. Only the days of the week inside the attempt count, and a partial
/// week asks for no more days' worth than it has days.
public enum WeekGoal {
    public static func isMet(_ days: [LocalDate], records: [LocalDate: DayRecord], definition: JudgingDefinition, dailyGoal: Int) -> Bool {
        let tasks = definition.tasks.filter { $0.cadence.kind != .monthly }
        guard !tasks.isEmpty, !days.isEmpty else { return false }
        return tasks.allSatisfy {
            PeriodRequirement.isMet(
                $0, over: days, records: records, dailyGoal: dailyGoal, goalDays: goalDays(definition, days: days),
                cappedOnly: countsCappedOnly(definition))
        }
    }

    /// How many days' worth of every-day tasks the week asks for: the rule's weekly goal days, at most the week's
    /// days inside the attempt.
    public static func goalDays(_ definition: JudgingDefinition, days: [LocalDate]) -> Int {
        min(definition.rules.streak.weeklyGoalDays ?? 7, days.count)
    }

    /// The days of the week starting `weekStart` that belong to an attempt from `startedOn` to `endOn`.
    public static func days(of weekStart: LocalDate, startedOn: LocalDate, endOn: LocalDate?) -> [LocalDate] {
        (0..<7).map { weekStart.adding(days: $0) }.filter { day in day >= startedOn && (endOn.map { day <= $0 } ?? true) }
    }

    /// The week's logged total of one quantity task (the weekly progress bar).
    public static func total(of taskID: String, days: [LocalDate], records: [LocalDate: DayRecord], cappedOnly: Bool) -> Double {
        days.compactMap { records[$0]?.tasks[taskID] }.reduce(0) { $0 + (cappedOnly ? $1.rewardedQuantity : $1.quantity) }
    }

    /// Under the series rule, repetitions beyond the daily cap count toward nothing.
    public static func countsCappedOnly(_ definition: JudgingDefinition) -> Bool {
        definition.rules.points.kind == .series
    }
}

/// Where a weekly-streak attempt stands in the week starting `weekStart` (001's weekly goal and Sunday summary).
public struct WeekProgress: Equatable, Sendable {
    public var weekStart: LocalDate
    /// The unit, target and done amount of the challenge's quantity task, if it has one.
    public var unit: String?
    public var target: Double?
    public var done: Double
    public var goalMet: Bool
    /// Daily goals to offer when the week ends.
    public var suggestedDailyGoals: [Int]

    /// After a met week: keep the goal, or raise it 10 % or 20 %.
    public static let raisedGoalFactors = [1.0, 1.1, 1.2]
    /// After a missed week: lower the goal 10 %, 20 % or 30 %.
    public static let loweredGoalFactors = [0.9, 0.8, 0.7]

    /// The week's progress from its day records; only the week's days inside the attempt and not off count.
    public init(
        weekStart: LocalDate, startedOn: LocalDate, endOn: LocalDate?, timeOff: TimeOff, records: [LocalDate: DayRecord],
        definition: JudgingDefinition, dailyGoal: Int
    ) {
        let days = timeOff.counting(WeekGoal.days(of: weekStart, startedOn: startedOn, endOn: endOn))
        let task = definition.tasks.first { $0.kind == .quantity }
        self.weekStart = weekStart
        goalMet = WeekGoal.isMet(days, records: records, definition: definition, dailyGoal: dailyGoal)
        unit = task?.unit
        done = task.map { WeekGoal.total(of: $0.taskID, days: days, records: records, cappedOnly: WeekGoal.countsCappedOnly(definition)) } ?? 0
        target = task.flatMap {
            PeriodRequirement.target(of: $0, over: days, dailyGoal: dailyGoal, goalDays: WeekGoal.goalDays(definition, days: days))
        }
        suggestedDailyGoals = (goalMet ? Self.raisedGoalFactors : Self.loweredGoalFactors).map { max(1, Int((Double(dailyGoal) * $0).rounded())) }
    }

    /// The done amount as a whole percentage of the target, rounded down.
    public var percent: Int? {
        target.map { $0 > 0 ? Int((done / $0 * 100).rounded(.down)) : 0 }
    }
}
