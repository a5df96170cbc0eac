import SurgeContracts

/// What a definition asks for, day by day and period by period.
public enum Requirements {
    /// Tasks judged day by day: every-day tasks, and weekday tasks on their weekdays.
    public static func dayTasks(_ definition: JudgingDefinition, on date: LocalDate) -> [ChallengeTask] {
        definition.tasks.filter { task in
            switch task.cadence.kind {
            case .daily: true
            case .weekdays: task.cadence.weekdays?.contains(date.weekday) ?? false
            case .timesPerWeek, .weekly, .monthly: false
            }
        }
    }

    /// Tasks judged over a week or a month rather than a day.
    public static func periodTasks(_ definition: JudgingDefinition) -> [ChallengeTask] {
        definition.tasks.filter { [.timesPerWeek, .weekly, .monthly].contains($0.cadence.kind) }
    }

    /// The amount that completes a quantity task once (for a daily task, a day; for a weekly one, a week).
    public static func target(of task: ChallengeTask, dailyGoal: Int) -> Double? {
        guard task.kind == .quantity else { return nil }
        if let multiple = task.targetFromDailyGoal { return multiple * Double(dailyGoal) }
        return task.target
    }

    /// Whether a task's progress on one day satisfies it for that day.
    public static func isSatisfied(_ task: ChallengeTask, _ progress: TaskProgress?, dailyGoal: Int) -> Bool {
        guard let progress else { return false }
        switch task.kind {
        case .checkbox, .photo: return progress.done
        case .quantity:
            guard let target = target(of: task, dailyGoal: dailyGoal) else { return progress.quantity > 0 }
            return progress.quantity >= target
        }
    }

    /// Whether every task the day requires is done; nil when the day requires nothing (a rest day).
    public static func isComplete(_ record: DayRecord?, definition: JudgingDefinition, date: LocalDate, dailyGoal: Int) -> Bool? {
        let required = dayTasks(definition, on: date)
        guard !required.isEmpty else { return nil }
        return required.allSatisfy { isSatisfied($0, record?.tasks[$0.taskID], dailyGoal: dailyGoal) }
    }

    /// Required tasks of the day that are not done.
    public static func missedTasks(_ record: DayRecord?, definition: JudgingDefinition, date: LocalDate, dailyGoal: Int) -> [ChallengeTask] {
        dayTasks(definition, on: date).filter { !isSatisfied($0, record?.tasks[$0.taskID], dailyGoal: dailyGoal) }
    }
}
