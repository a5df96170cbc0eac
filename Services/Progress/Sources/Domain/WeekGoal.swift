import SurgeContracts

/// Whether a Monday-to-Sunday week met its goal. Only the days of the week inside the attempt count, and a partial
/// week asks for no more than it has days.
public enum WeekGoal {
    public static func isMet(
        weekStart: LocalDate, coveredDays: [LocalDate], records: [LocalDate: DayRecord], definition: ChallengeDefinition,
        dailyGoal: Int
    ) -> Bool {
        let goalDays = min(definition.rules.streak.weeklyGoalDays ?? 7, coveredDays.count)
        let tasks = definition.tasks.filter { $0.cadence.kind != .monthly }
        guard !tasks.isEmpty, !coveredDays.isEmpty else { return false }
        return tasks.allSatisfy { task in
            let progress = coveredDays.compactMap { records[$0]?.tasks[task.taskID] }
            let doneDays = progress.filter { $0.done || $0.quantity > 0 }.count
            let total = progress.reduce(0) { $0 + $1.quantity }
            switch task.cadence.kind {
            case .daily:
                if task.kind == .quantity, let target = Requirements.target(of: task, dailyGoal: dailyGoal) {
                    return total >= target * Double(goalDays)
                }
                return doneDays >= goalDays
            case .weekdays:
                let days = coveredDays.filter { task.cadence.weekdays?.contains($0.weekday) ?? false }
                return days.allSatisfy { Requirements.isSatisfied(task, records[$0]?.tasks[task.taskID], dailyGoal: dailyGoal) }
            case .timesPerWeek:
                return doneDays >= min(task.cadence.timesPerWeek ?? 1, coveredDays.count)
            case .weekly:
                if task.kind == .quantity, let target = Requirements.target(of: task, dailyGoal: dailyGoal) { return total >= target }
                return doneDays >= 1
            case .monthly:
                return true
            }
        }
    }

    /// Sums and counts for a week of one quantity task: what a weekly challenge's progress bar shows.
    public static func total(of taskID: String, days: [LocalDate], records: [LocalDate: DayRecord]) -> Double {
        days.compactMap { records[$0]?.tasks[taskID]?.quantity }.reduce(0, +)
    }
}
