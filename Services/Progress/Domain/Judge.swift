import Foundation
import SurgeContracts

/// The verdict on one period (a day, or a week for weekly streaks) once its check-in window closed.
public struct Judgement: Sendable, Equatable {
    /// The day judged, or the last day of the week judged.
    public var date: LocalDate
    public var outcome: PeriodOutcome
    public var missedTaskIDs: [String]
    public var streakChange: StreakChange?
    public var previousStreak: Int
    public var ended: AttemptEnd?
    public var reason: String?
    public var completionBonus: Int
}

/// Judges an attempt's periods in order. Pure: what it needs about the past is in `AttemptState`, and it reads only
/// the day records of the week and month the judged period ends.
public enum Judge {
    /// The last day of the next period to judge, or nil when nothing is left (the attempt's last day is judged).
    public static func nextPeriodEnd(_ state: AttemptState, startedOn: LocalDate, endOn: LocalDate?, period: StreakPeriod) -> LocalDate? {
        // Date arithmetic saturates at the last representable date: once that is judged, nothing is left (rather
        // than the same day again, forever).
        if let judged = state.judgedThrough, judged >= .latest { return nil }
        let first = state.judgedThrough.map { $0.adding(days: 1) } ?? startedOn
        if let endOn, first > endOn { return nil }
        switch period {
        case .day:
            return first
        case .week:
            let sunday = first.startOfWeek.adding(days: 6)
            return endOn.map { min($0, sunday) } ?? sunday
        }
    }


    public static func judge(
        periodEnding date: LocalDate, startedOn: LocalDate, endOn: LocalDate?, state: inout AttemptState, timeline: DefinitionTimeline,
        records: [LocalDate: DayRecord], dailyGoal: Int
    ) -> Judgement {
        let definition = timeline.version(on: date)
        let rules = definition.rules
        let period = rules.streak.period
        let timeOff = state.timeOff(definition)
        let days = period == .day ? [date] : timeOff.counting(WeekGoal.days(of: date.startOfWeek, startedOn: startedOn, endOn: endOn))
        let hadActivity = days.contains { records[$0]?.hasActivity ?? false }

        var missed: [String] = []
        var completed: Bool?
        // Time off: a paused day, or a week without a day that counts.
        var paused = false
        switch period {
        case .day:
            paused = timeOff.isOff(date)
            if !paused {
                completed = Requirements.isComplete(records[date], definition: definition, date: date, dailyGoal: dailyGoal)
                missed = Requirements.missedTasks(records[date], definition: definition, date: date, dailyGoal: dailyGoal).map(\.taskID)
            }
            // A week's or month's requirement is checked on its last day over its days that counted, even when
            // that last day is off: time off excuses days, not the rest of the period.
            let failedPeriodTasks = periodTasksFailing(
                on: date, startedOn: startedOn, endOn: endOn, definition: definition, timeOff: timeOff, records: records, dailyGoal: dailyGoal)
            if !failedPeriodTasks.isEmpty {
                missed += failedPeriodTasks
                completed = false
                paused = false
            }
        case .week:
            paused = days.isEmpty
            if !paused {
                let met = WeekGoal.isMet(days, records: records, definition: definition, dailyGoal: dailyGoal)
                completed = met
                if !met { missed = definition.tasks.map(\.taskID) }
            }
        }

        refreshFreezes(&state, month: date, perMonth: rules.streak.freezesPerMonth)
        let previous = state.currentStreak
        var outcome: PeriodOutcome
        var change: StreakChange?
        switch completed {
        case nil where paused:
            outcome = .paused
            state.periodsPaused += 1
        case nil:
            outcome = .rest
        case true?:
            outcome = .completed
            state.currentStreak += 1
            state.bestStreak = max(state.bestStreak, state.currentStreak)
            state.periodsCompleted += 1
            change = .extended
        case false?:
            if hadActivity && state.freezesLeft > 0 && freezeSavesSomething(state, definition: definition) {
                outcome = .frozen
                state.freezesLeft -= 1
                state.periodsFrozen += 1
                change = .frozen
            } else if hadActivity && period == .week && rules.streak.activityKeepsWeeklyStreak {
                outcome = .kept
            } else {
                outcome = .missed
                state.periodsMissed += 1
                state.currentStreak = 0
                change = previous > 0 ? .broken : nil
            }
        }
        state.judgedThrough = date

        var ended: AttemptEnd?
        var reason: String?
        if outcome == .missed, definition.kind != .competition {
            switch rules.failure.mode {
            case .strict:
                ended = .failed
                reason = failureReason(missed, definition: definition, date: date, dayNumber: timeOff.dayNumber(of: date, startedOn: startedOn), allowed: nil)
            case .tolerant:
                if state.periodsMissed > (rules.failure.allowedMissedDays ?? 0) {
                    ended = .failed
                    reason = failureReason(
                        missed, definition: definition, date: date, dayNumber: timeOff.dayNumber(of: date, startedOn: startedOn),
                        allowed: rules.failure.allowedMissedDays)
                }
            case .none:
                break
            }
        }
        var bonus = 0
        if ended == nil, let endOn, date >= endOn {
            ended = .completed
            // A weekly challenge's bonus is earned week by week, when each week's goal is reached.
            bonus = definition.kind == .weekly ? 0 : (rules.points.completionBonus ?? 0)
            state.points += bonus
        }
        if let ended {
            state.status = ended == .failed ? .failed : .completed
            state.endedOn = date
            state.failureReason = reason
            state.missedTaskIDs = ended == .failed ? missed : []
        }
        return Judgement(
            date: date, outcome: outcome, missedTaskIDs: missed, streakChange: change, previousStreak: previous, ended: ended,
            reason: reason, completionBonus: bonus)
    }

    /// Week and month requirements (N times a week, weekly, monthly) whose period ends on `date` unmet.
    static func periodTasksFailing(
        on date: LocalDate, startedOn: LocalDate, endOn: LocalDate?, definition: JudgingDefinition, timeOff: TimeOff,
        records: [LocalDate: DayRecord], dailyGoal: Int
    ) -> [String] {
        let attemptEnds = endOn == date
        return Requirements.periodTasks(definition).filter { task in
            let first: LocalDate
            switch task.cadence.kind {
            case .timesPerWeek, .weekly:
                guard date.weekday == .sunday || attemptEnds else { return false }
                first = max(date.startOfWeek, startedOn)
            case .monthly:
                guard date.adding(days: 1).day == 1 || attemptEnds else { return false }
                first = max(date.startOfMonth, startedOn)
            default:
                return false
            }
            guard first <= date else { return false }
            // A period entirely off asks for nothing; a partly paused one asks for its share, as a partial first one.
            let days = timeOff.counting((0...first.days(until: date)).map { first.adding(days: $0) })
            guard !days.isEmpty else { return false }
            return !PeriodRequirement.isMet(
                task, over: days, records: records, dailyGoal: dailyGoal, goalDays: days.count,
                cappedOnly: WeekGoal.countsCappedOnly(definition))
        }.map(\.taskID)
    }

    /// A new month grants the rule's freezes again (001 CHAL-03: the counter resets on the 1st).
    static func refreshFreezes(_ state: inout AttemptState, month date: LocalDate, perMonth: Int) {
        let month = String(date.description.prefix(7))
        if state.freezeMonth != month {
            state.freezeMonth = month
            state.freezesLeft = perMonth
        }
    }

    /// The freezes the judge will have for the period ending `periodEnd`: what is left of its month's, or the rule's
    /// full number when that month has not been judged yet.
    public static func freezesLeft(_ state: AttemptState, forPeriodEnding periodEnd: LocalDate, perMonth: Int) -> Int {
        var state = state
        refreshFreezes(&state, month: periodEnd, perMonth: perMonth)
        return state.freezesLeft
    }

    /// A freeze is spent only where a miss would cost something: a streak to keep, or a miss that counts toward
    /// failing the attempt (strict or tolerant rules; a competition never fails).
    static func freezeSavesSomething(_ state: AttemptState, definition: JudgingDefinition) -> Bool {
        state.currentStreak > 0 || (definition.kind != .competition && definition.rules.failure.mode != .none)
    }

    static func failureReason(_ missed: [String], definition: JudgingDefinition, date: LocalDate, dayNumber day: Int, allowed: Int?) -> String {
        let titles = missed.compactMap { id in definition.tasks.first { $0.taskID == id }?.title }.map { "'\($0)'" }
        let what = titles.isEmpty ? "the requirements" : titles.joined(separator: ", ")
        if let allowed {
            return "Missed \(what) on day \(day) (\(date)): more than the \(allowed) missed days the rules allow."
        }
        return "Missed \(what) on day \(day) (\(date)). Any miss restarts the challenge at day 1."
    }
}
