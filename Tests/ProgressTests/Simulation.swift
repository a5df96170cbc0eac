import Foundation
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport

@testable import ProgressService

/// One check-in as a client made it: what, for when, and when it reached the server.
struct SimulatedCheckIn {
    var taskID: String
    var action: CheckIn.Action
    var happenedAt: Date
    var arrivesAt: Date
    var order: Int
}

/// The attempt as the service would keep it: check-ins applied one by one as they arrive, periods judged as their
/// windows close. Uses the same domain code as the service.
struct IncrementalRun {
    var state = AttemptState()
    var records: [LocalDate: DayRecord] = [:]
    var ledger = 0
    var accepted: [SimulatedCheckIn] = []
    var refused = 0
    var superseded = 0

    static func run(
        timeline: DefinitionTimeline, startedOn: LocalDate, endOn: LocalDate?, calendar: LocalCalendar, checkIns: [SimulatedCheckIn],
        until end: Date, dailyGoal: Int
    ) -> IncrementalRun {
        var run = IncrementalRun()
        let grace = timeline.latest.rules.checkInGraceMinutes
        let period = timeline.latest.rules.streak.period
        var pending = checkIns.sorted { ($0.arrivesAt, $0.order) < ($1.arrivesAt, $1.order) }[...]
        func judgeDue(before instant: Date) {
            while run.state.status == .active,
                let next = Judge.nextPeriodEnd(run.state, startedOn: startedOn, endOn: endOn, period: period),
                CheckInWindow.closes(next, calendar: calendar, graceMinutes: grace) <= instant
            {
                let judgement = Judge.judge(
                    periodEnding: next, startedOn: startedOn, endOn: endOn, state: &run.state, timeline: timeline, records: run.records,
                    dailyGoal: dailyGoal)
                run.ledger += judgement.completionBonus
            }
        }
        while let checkIn = pending.first {
            pending = pending.dropFirst()
            judgeDue(before: checkIn.arrivesAt)
            guard run.state.status == .active else { continue }
            let date = calendar.date(at: checkIn.happenedAt)
            if CheckInWindow.check(
                date: date, happenedAt: checkIn.happenedAt, now: checkIn.arrivesAt, startedOn: startedOn, endOn: endOn,
                calendar: calendar, graceMinutes: grace) != nil
            {
                run.refused += 1
                continue
            }
            var record = run.records[date] ?? DayRecord(date: date)
            let context = CheckInEngine.Context(definition: timeline.version(on: date), dailyGoal: dailyGoal, streak: run.state.currentStreak, levelPoints: run.ledger)
            guard let result = try? CheckInEngine.apply(CheckIn(taskID: checkIn.taskID, action: checkIn.action, happenedAt: checkIn.happenedAt), to: &record, context: context)
            else { continue }
            run.records[date] = record
            run.ledger += result.pointsDelta
            run.state.points += result.pointsDelta
            if result.applied { run.accepted.append(checkIn) } else { run.superseded += 1 }
        }
        judgeDue(before: end)
        return run
    }
}

/// The same attempt recomputed from scratch: final day states from the accepted check-ins, then every day judged by
/// the rules as written, with none of the engine's code.
struct FromScratch {
    var currentStreak = 0
    var bestStreak = 0
    var completed = 0
    var points = 0
    var failed = false
    var finished = false

    static func recompute(
        definition: ChallengeDefinition, startedOn: LocalDate, lastDay: LocalDate, endOn: LocalDate?, accepted: [SimulatedCheckIn],
        calendar: LocalCalendar, dailyGoal: Int
    ) -> FromScratch {
        // Final state per day and task: ticks by the latest happenedAt (ties: the later arrival), quantities summed.
        var done: [LocalDate: [String: (Date, Int, Bool)]] = [:]
        var amounts: [LocalDate: [String: Double]] = [:]
        for (arrival, checkIn) in accepted.enumerated() {
            let date = calendar.date(at: checkIn.happenedAt)
            switch checkIn.action {
            case .setDone(let value):
                let current = done[date]?[checkIn.taskID]
                if current == nil || (checkIn.happenedAt, arrival) >= (current!.0, current!.1) {
                    done[date, default: [:]][checkIn.taskID] = (checkIn.happenedAt, arrival, value)
                }
            case .log(let quantity, _):
                amounts[date, default: [:]][checkIn.taskID, default: 0] += quantity
            default:
                break
            }
        }
        func satisfied(_ task: ChallengeTask, on date: LocalDate) -> Bool {
            switch task.kind {
            case .quantity:
                let target = task.targetFromDailyGoal.map { $0 * Double(dailyGoal) } ?? task.target ?? 0
                return (amounts[date]?[task.taskID] ?? 0) >= max(target, Double.leastNonzeroMagnitude)
            default:
                return done[date]?[task.taskID]?.2 ?? false
            }
        }
        func active(_ task: ChallengeTask, on date: LocalDate) -> Bool {
            (done[date]?[task.taskID]?.2 ?? false) || (amounts[date]?[task.taskID] ?? 0) > 0
        }
        var result = FromScratch()
        let rules = definition.rules
        // Points are credited on check-in, so every day with accepted check-ins counts, judged or not.
        if rules.points.kind == .perTask {
            for date in Set(done.keys).union(amounts.keys) {
                for task in definition.tasks where satisfied(task, on: date) {
                    result.points += task.points ?? rules.points.pointsPerTask ?? 0
                }
            }
        }
        guard lastDay >= startedOn else { return result }
        var freezes = 0
        var month = ""
        var misses = 0
        var date = startedOn
        while date <= lastDay {
            let periodEnd: LocalDate
            switch rules.streak.period {
            case .day: periodEnd = date
            case .week: periodEnd = min(date.startOfWeek.adding(days: 6), endOn ?? .init(year: 9999, month: 12, day: 31)!)
            }
            if periodEnd > lastDay { break }
            let days = (0...date.days(until: periodEnd)).map { date.adding(days: $0) }
            let monthKey = String(periodEnd.description.prefix(7))
            if monthKey != month {
                month = monthKey
                freezes = rules.streak.freezesPerMonth
            }
            let activity = days.contains { day in definition.tasks.contains { active($0, on: day) } }
            var outcome: PeriodOutcome
            switch rules.streak.period {
            case .day:
                let required = definition.tasks.filter {
                    $0.cadence.kind == .daily || ($0.cadence.kind == .weekdays && ($0.cadence.weekdays ?? []).contains(date.weekday))
                }
                var periodFailed = false
                for task in definition.tasks where task.cadence.kind == .timesPerWeek && (date.weekday == .sunday || date == endOn) {
                    let from = max(date.startOfWeek, startedOn)
                    let week = (0...from.days(until: date)).map { from.adding(days: $0) }
                    if week.filter({ active(task, on: $0) }).count < min(task.cadence.timesPerWeek ?? 1, week.count) { periodFailed = true }
                }
                if periodFailed {
                    outcome = .missed
                } else if required.isEmpty {
                    outcome = .rest
                } else {
                    outcome = required.allSatisfy { satisfied($0, on: date) } ? .completed : .missed
                }
            case .week:
                let goalDays = min(rules.streak.weeklyGoalDays ?? 7, days.count)
                let met = definition.tasks.allSatisfy { task in
                    let target = task.targetFromDailyGoal.map { $0 * Double(dailyGoal) } ?? task.target ?? 0
                    let total = days.reduce(0) { $0 + (amounts[$1]?[task.taskID] ?? 0) }
                    return total >= target * Double(goalDays)
                }
                outcome = met ? .completed : .missed
            }
            if outcome == .missed && activity && freezes > 0 {
                freezes -= 1
                outcome = .frozen
            } else if outcome == .missed && activity && rules.streak.period == .week && rules.streak.activityKeepsWeeklyStreak {
                outcome = .kept
            }
            switch outcome {
            case .completed:
                result.currentStreak += 1
                result.completed += 1
                result.bestStreak = max(result.bestStreak, result.currentStreak)
            case .missed:
                result.currentStreak = 0
                misses += 1
            default:
                break
            }
            if outcome == .missed {
                if rules.failure.mode == .strict || (rules.failure.mode == .tolerant && misses > (rules.failure.allowedMissedDays ?? 0)) {
                    result.failed = true
                    return result
                }
            }
            if let endOn, periodEnd >= endOn {
                result.finished = true
                result.points += rules.points.completionBonus ?? 0
                return result
            }
            date = periodEnd.adding(days: 1)
        }
        return result
    }
}
