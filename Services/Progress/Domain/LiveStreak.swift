import SurgeContracts

/// The streak as it stands now rather than as last judged: the judged streak plus the open periods (days not judged
/// yet, or this week for weekly streaks) that are already complete, so ticking a day's last task shows, and publishes,
/// the new streak at once; an open day before today left incomplete breaks it. The judgement makes it permanent.
public struct LiveStreak: Equatable, Sendable {
    public var current: Int
    /// The open periods already complete, counted in `current`.
    public var openCompleted: Int

    /// `openRecords` must hold the records from the last judged day (or this week's Monday, if earlier) through today.
    public init(
        _ state: AttemptState, startedOn: LocalDate, endsOn: LocalDate?, timeline: DefinitionTimeline, today: LocalDate, dailyGoal: Int,
        openRecords: [LocalDate: DayRecord]
    ) {
        current = state.currentStreak
        openCompleted = 0
        guard state.status == .active else { return }
        let lastDay = min(today, endsOn ?? today)
        let definition = timeline.version(on: lastDay)
        switch definition.rules.streak.period {
        case .day:
            let first = state.judgedThrough.map { $0.adding(days: 1) } ?? startedOn
            guard first <= lastDay else { return }
            for offset in 0...first.days(until: lastDay) {
                let date = first.adding(days: offset)
                let version = timeline.version(on: date)
                if state.timeOff(version).isOff(date) { continue }
                switch Requirements.isComplete(openRecords[date], definition: version, date: date, dailyGoal: dailyGoal) {
                case true?:
                    openCompleted += 1
                    current += 1
                case false? where date < today:
                    current = 0
                default:
                    break
                }
            }
        case .week:
            let days = state.timeOff(definition).counting(WeekGoal.days(of: today.startOfWeek, startedOn: startedOn, endOn: endsOn))
            if WeekGoal.isMet(days, records: openRecords, definition: definition, dailyGoal: dailyGoal) {
                openCompleted = 1
                current += 1
            }
        }
    }
}
