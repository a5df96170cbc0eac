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
        if let target = target(of: task, over: days, dailyGoal: dailyGoal, goalDays: goalDays) {
            return progress.reduce(0) { $0 + (cappedOnly ? $1.rewardedQuantity : $1.quantity) } >= target
        }
        switch task.cadence.kind {
        case .daily:
            return doneDays >= goalDays
        case .weekdays:
            return days.filter { task.cadence.weekdays?.contains($0.weekday) ?? false }
                .allSatisfy { Requirements.isSatisfied(task, records[$0]?.tasks[task.taskID], dailyGoal: dailyGoal) }
        case .timesPerWeek:
            return doneDays >= min(task.cadence.timesPerWeek ?? 1, days.count)
        case .weekly, .monthly:
            return doneDays >= 1
        }
    }

    /// The quantity a quantity task asks for over the span, or nil when the span is judged by days done. Every-day
    /// tasks ask for `goalDays` days' worth; weekly and monthly ones for the share of their target that the span's
    /// days are of the whole week or month (a partial first or last period asks for no more than it has days).
    public static func target(of task: ChallengeTask, over days: [LocalDate], dailyGoal: Int, goalDays: Int) -> Double? {
        guard task.kind == .quantity, let first = days.first, let target = Requirements.target(of: task, dailyGoal: dailyGoal) else { return nil }
        switch task.cadence.kind {
        case .daily:
            return target * Double(goalDays)
        case .weekly:
            return min(target, target * Double(days.count) / 7)
        case .monthly:
            return min(target, target * Double(days.count) / Double(LocalDate.daysIn(month: first.month, year: first.year)))
        case .weekdays, .timesPerWeek:
            return nil
        }
    }
}
