import SurgeContracts

/// Whether one task's requirement is met over a span of days (a week, a month, or the part of one inside the
/// attempt): the rule shared by weekly goals and by N-times-a-week, weekly and monthly tasks.
public enum PeriodRequirement {
    /// - Parameters:
    ///   - goalDays: for every-day tasks, how many days' worth the span asks for.
    ///   - cappedOnly: count only the repetitions within the anti-cheat cap (001: excess is "not counted toward totals").
    public static func isMet(
        _ task: ChallengeTask, over days: [LocalDate], records: [LocalDate: DayRecord], dailyGoal: Int, goalDays: Int, cappedOnly: Bool
    ) -> Bool {
        let progress = days.compactMap { records[$0]?.tasks[task.taskID] }
        let doneDays = progress.filter(\.hasActivity).count
        let total = progress.reduce(0) { $0 + (cappedOnly ? $1.rewardedQuantity : $1.quantity) }
        switch task.cadence.kind {
        case .daily:
            if task.kind == .quantity, let target = Requirements.target(of: task, dailyGoal: dailyGoal) {
                return total >= target * Double(goalDays)
            }
            return doneDays >= goalDays
        case .weekdays:
            return days.filter { task.cadence.weekdays?.contains($0.weekday) ?? false }
                .allSatisfy { Requirements.isSatisfied(task, records[$0]?.tasks[task.taskID], dailyGoal: dailyGoal) }
        case .timesPerWeek:
            return doneDays >= min(task.cadence.timesPerWeek ?? 1, days.count)
        case .weekly, .monthly:
            if task.kind == .quantity, let target = Requirements.target(of: task, dailyGoal: dailyGoal) { return total >= target }
            return doneDays >= 1
        }
    }
}
