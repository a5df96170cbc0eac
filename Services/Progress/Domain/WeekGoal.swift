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
