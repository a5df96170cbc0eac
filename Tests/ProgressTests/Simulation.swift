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

/// Time off a client asked for: a pause from a day relative to its arrival's local date, a skip day, or a resume.
struct SimulatedPause {
    enum Action {
        case pause(fromOffset: Int, days: Int?)
        case skipDay
        case resume
    }

    var action: Action
    var arrivesAt: Date
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
    /// Check-ins refused because their day was off.
    var refusedOff = 0
    var pausesTaken = 0
    var pausesRefused = 0
    var retroactivePauses = 0
    var resumes = 0

    static func run(
        timeline: DefinitionTimeline, startedOn: LocalDate, endOn: LocalDate?, calendar: LocalCalendar, checkIns: [SimulatedCheckIn],
        pauses: [SimulatedPause] = [], until end: Date, dailyGoal: Int
    ) -> IncrementalRun {
        var run = IncrementalRun()
        let grace = timeline.latest.rules.checkInGraceMinutes
        let period = timeline.latest.rules.streak.period
        var pending = checkIns.sorted { ($0.arrivesAt, $0.order) < ($1.arrivesAt, $1.order) }[...]
        var pendingPauses = pauses.sorted { $0.arrivesAt < $1.arrivesAt }[...]
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
        func apply(_ pause: SimulatedPause) {
            judgeDue(before: pause.arrivesAt)
            guard run.state.status == .active else { return }
            let today = calendar.date(at: pause.arrivesAt)
            let request: PauseRequest
            switch pause.action {
            case .resume:
                if (try? PausePolicy.resume(&run.state, today: today)) != nil { run.resumes += 1 }
                return
            case .skipDay:
                request = PauseRequest(kind: .skipDay, from: today, days: 1)
            case .pause(let offset, let days):
                request = PauseRequest(kind: .pause, from: today.adding(days: offset), days: days)
            }
            do {
                let taken = try PausePolicy.pause(
                    request, attempt: .init(state: run.state, startedOn: startedOn, endOn: endOn, definition: timeline.version(on: request.from)),
                    today: today, now: pause.arrivesAt, pauseID: UUID(), closes: { CheckInWindow.closes($0, calendar: calendar, graceMinutes: grace) })
                run.state.pauses.append(taken)
                run.pausesTaken += 1
                if taken.from < today { run.retroactivePauses += 1 }
            } catch {
                run.pausesRefused += 1
            }
        }
        while let checkIn = pending.first {
            while let pause = pendingPauses.first, pause.arrivesAt <= checkIn.arrivesAt {
                pendingPauses = pendingPauses.dropFirst()
                apply(pause)
            }
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
            if run.state.timeOff(timeline.version(on: date)).isOff(date) {
                run.refusedOff += 1
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
        pendingPauses.forEach(apply)
        judgeDue(before: end)
        return run
    }
}

/// The same attempt recomputed from scratch: final day states from the accepted check-ins, then every day judged by
/// the rules as written, with none of the engine's code. `pauses` are the attempt's time off as it ended (a resume
/// only ever shortens a pause to days not yet judged, so they name exactly the days judged as off).
struct FromScratch {
    var currentStreak = 0
    var bestStreak = 0
    var completed = 0
    var paused = 0
    var points = 0
    var failed = false
    var finished = false

    static func recompute(
        definition: JudgingDefinition, startedOn: LocalDate, lastDay: LocalDate, endOn: LocalDate?, accepted: [SimulatedCheckIn],
        pauses: [AttemptPause] = [], calendar: LocalCalendar, dailyGoal: Int
    ) -> FromScratch {
        let pauseRule = definition.pauseRule
        func off(_ date: LocalDate) -> Bool {
            guard pauseRule.mode == .pausesStreak else { return false }
            return (pauseRule.restWeekdays ?? []).contains(date.weekday)
                || pauses.contains { date >= $0.from && date <= ($0.through ?? .latest) }
        }
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
            let calendarDays = (0...date.days(until: periodEnd)).map { date.adding(days: $0) }
            let days = rules.streak.period == .day ? calendarDays : calendarDays.filter { !off($0) }
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
                    let week = (0...from.days(until: date)).map { from.adding(days: $0) }.filter { !off($0) }
                    if !week.isEmpty, week.filter({ active(task, on: $0) }).count < min(task.cadence.timesPerWeek ?? 1, week.count) { periodFailed = true }
                }
                if periodFailed {
                    outcome = .missed
                } else if off(date) {
                    outcome = .paused
                } else if required.isEmpty {
                    outcome = .rest
                } else {
                    outcome = required.allSatisfy { satisfied($0, on: date) } ? .completed : .missed
                }
            case .week where days.isEmpty:
                outcome = .paused
            case .week:
                let goalDays = min(rules.streak.weeklyGoalDays ?? 7, days.count)
                let met = definition.tasks.allSatisfy { task in
                    let target = task.targetFromDailyGoal.map { $0 * Double(dailyGoal) } ?? task.target ?? 0
                    let total = days.reduce(0) { $0 + (amounts[$1]?[task.taskID] ?? 0) }
                    return total >= target * Double(goalDays)
                }
                outcome = met ? .completed : .missed
            }
            // A freeze is spent only where the miss would cost a streak, or count toward failing the attempt.
            let missCosts = result.currentStreak > 0 || (definition.kind != .competition && rules.failure.mode != .none)
            if outcome == .missed && activity && freezes > 0 && missCosts {
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
            case .paused:
                result.paused += 1
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
