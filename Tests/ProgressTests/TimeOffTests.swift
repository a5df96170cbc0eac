import Foundation
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

@testable import ProgressService

@Suite("Time off: pauses, vacations, rest weekdays and skip days", .tags(.unit), .kind(.unit))
struct TimeOffTests {
    static let start = LocalDate("2026-11-02")!  // a Monday
    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!

    static func definition(
        kind: ChallengeKind = .habit, pause: PauseRule? = nil, streak: StreakRule = .init(), failure: FailureRule = .init(mode: .none),
        tasks: [ChallengeTask] = [ChallengeTask(taskID: "walk", title: "Walk", kind: .checkbox)], duration: Int? = nil, grace: Int = 0
    ) -> JudgingDefinition {
        JudgingDefinition(
            challengeID: UUID(), version: 1, effectiveFrom: nil, kind: kind, name: "Walking", visibility: .public, ownerID: nil, groupID: nil,
            durationDays: duration, tasks: tasks, rules: ChallengeRules(failure: failure, streak: streak, checkInGraceMinutes: grace, pause: pause))
    }

    static func done(_ dates: [LocalDate], task: String = "walk") -> [LocalDate: DayRecord] {
        var records: [LocalDate: DayRecord] = [:]
        for date in dates {
            var progress = TaskProgress()
            progress.done = true
            records[date] = DayRecord(date: date, tasks: [task: progress])
        }
        return records
    }

    /// Judges every day (or week) through `last` and returns the outcomes in order.
    static func judgeAll(
        _ definition: JudgingDefinition, state: inout AttemptState, records: [LocalDate: DayRecord], through last: LocalDate, endOn: LocalDate? = nil
    ) -> [PeriodOutcome] {
        let timeline = DefinitionTimeline([definition])!
        var outcomes: [PeriodOutcome] = []
        while state.status == .active,
            let next = Judge.nextPeriodEnd(state, startedOn: start, endOn: endOn, period: definition.rules.streak.period), next <= last
        {
            outcomes.append(
                Judge.judge(periodEnding: next, startedOn: start, endOn: endOn, state: &state, timeline: timeline, records: records, dailyGoal: 20).outcome)
        }
        return outcomes
    }

    static func pause(_ from: String, _ through: String?, kind: PauseKind = .pause) -> AttemptPause {
        AttemptPause(pauseID: UUID(), kind: kind, from: LocalDate(from)!, through: through.map { LocalDate($0)! })
    }

    @Test("a 30-day habit with a 5-day vacation in the middle keeps its streak; the day number waits and the end does not move")
    func vacationKeepsStreak() {
        let definition = Self.definition(duration: 30)
        var state = AttemptState()
        state.pauses = [Self.pause("2026-11-14", "2026-11-18", kind: .vacation)]
        let vacation = (12...16).map { Self.start.adding(days: $0) }
        let active = (0..<30).map { Self.start.adding(days: $0) }.filter { !vacation.contains($0) }
        let endOn = Self.start.adding(days: 29)
        let outcomes = Self.judgeAll(definition, state: &state, records: Self.done(active), through: endOn, endOn: endOn)
        #expect(outcomes.count == 30)
        #expect(outcomes.filter { $0 == .paused }.count == 5)
        #expect(state.currentStreak == 25 && state.bestStreak == 25 && state.periodsMissed == 0 && state.periodsPaused == 5)
        #expect(state.status == .completed && state.endedOn == endOn)
        let timeOff = state.timeOff(definition)
        #expect(timeOff.dayNumber(of: Self.start.adding(days: 11), startedOn: Self.start) == 12)
        #expect(timeOff.dayNumber(of: Self.start.adding(days: 14), startedOn: Self.start) == 12)
        #expect(timeOff.dayNumber(of: Self.start.adding(days: 17), startedOn: Self.start) == 13)
        #expect(timeOff.dayNumber(of: endOn, startedOn: Self.start) == 25)
    }

    @Test("a paused day is never missed, even by a strict challenge; a competition's pause changes no verdict")
    func pausedDaysAreNotMissed() {
        var strict = AttemptState()
        strict.pauses = [Self.pause("2026-11-03", "2026-11-03")]
        let allowed = Self.definition(kind: .curated, pause: PauseRule(mode: .pausesStreak), failure: .init(mode: .strict), duration: 10)
        let outcomes = Self.judgeAll(allowed, state: &strict, records: Self.done([Self.start, Self.start.adding(days: 2)]), through: Self.start.adding(days: 2))
        #expect(outcomes == [.completed, .paused, .completed])
        #expect(strict.status == .active && strict.currentStreak == 2)

        var competition = AttemptState()
        competition.pauses = [Self.pause("2026-11-03", "2026-11-03")]
        let race = Self.definition(kind: .competition)
        #expect(Self.judgeAll(race, state: &competition, records: Self.done([Self.start]), through: Self.start.adding(days: 1)) == [.completed, .missed])
    }

    @Test("rest weekdays count like paused days; a week's requirement asks for its days that counted, even when its last day is off")
    func restWeekdaysAndPeriodTasks() {
        let tasks = [
            ChallengeTask(taskID: "walk", title: "Walk", kind: .checkbox),
            ChallengeTask(taskID: "call", title: "Call", kind: .checkbox, cadence: Cadence(kind: .timesPerWeek, timesPerWeek: 3)),
        ]
        let definition = Self.definition(pause: PauseRule(mode: .pausesStreak, restWeekdays: [.sunday]), tasks: tasks)
        // Monday to Saturday walked; the calls fall short (one), so the Sunday off is missed for the week's requirement.
        var records = Self.done((0..<6).map { Self.start.adding(days: $0) })
        var call = TaskProgress()
        call.done = true
        records[Self.start]?.tasks["call"] = call
        var state = AttemptState()
        let outcomes = Self.judgeAll(definition, state: &state, records: records, through: Self.start.adding(days: 6))
        #expect(outcomes == Array(repeating: .completed, count: 6) + [.missed])

        // With a whole week off, the week asks for nothing.
        var off = AttemptState()
        off.pauses = [Self.pause("2026-11-02", "2026-11-08")]
        #expect(Self.judgeAll(definition, state: &off, records: [:], through: Self.start.adding(days: 6)) == Array(repeating: .paused, count: 7))
    }

    @Test("weekly streaks: a week entirely off is skipped; a partly paused one asks for its days that counted, as a partial first week")
    func weeklyGoals() {
        let task = ChallengeTask(taskID: "pushups", title: "Push-ups", kind: .quantity, target: 10)
        let definition = Self.definition(
            kind: .weekly, pause: PauseRule(mode: .pausesStreak), streak: .init(period: .week, weeklyGoalDays: 5), tasks: [task])
        var records: [LocalDate: DayRecord] = [:]
        // Week 1: three days of 10 while four days are paused; week 2: entirely paused; week 3: three days only.
        for offset in [0, 1, 2, 14, 15, 16] {
            var progress = TaskProgress()
            progress.quantity = 10
            records[Self.start.adding(days: offset)] = DayRecord(date: Self.start.adding(days: offset), tasks: ["pushups": progress])
        }
        var state = AttemptState()
        state.pauses = [Self.pause("2026-11-05", "2026-11-15")]
        let outcomes = Self.judgeAll(definition, state: &state, records: records, through: Self.start.adding(days: 20))
        #expect(outcomes == [.completed, .paused, .missed])
        #expect(WeekGoal.goalDays(definition, days: state.timeOff(definition).counting((0..<7).map { Self.start.adding(days: $0) })) == 3)
    }

    @Test("pauses are refused by the rules, after the grace window, on judged days, when overlapping, too long or over budget")
    func refusals() throws {
        let now = Self.rome.start(of: LocalDate("2026-11-10")!).addingTimeInterval(3600)  // 01:00 on Tuesday 10th
        let today = LocalDate("2026-11-10")!
        func attempt(_ definition: JudgingDefinition, state: AttemptState = AttemptState(), endOn: LocalDate? = nil) -> PausePolicy.Attempt {
            PausePolicy.Attempt(state: state, startedOn: Self.start, endOn: endOn, definition: definition)
        }
        func pause(_ request: PauseRequest, _ attempt: PausePolicy.Attempt, grace: Int) -> Result<AttemptPause, PauseRefusal> {
            Result { () throws(PauseRefusal) in
                try PausePolicy.pause(
                    request, attempt: attempt, today: today, now: now, pauseID: UUID(),
                    closes: { CheckInWindow.closes($0, calendar: Self.rome, graceMinutes: grace) })
            }
        }
        let hard = Self.definition(kind: .curated, failure: .init(mode: .strict), duration: 75)
        guard case .failure(.notAllowed(let rule)) = pause(PauseRequest(kind: .pause, from: today, days: 3), attempt(hard), grace: 0) else {
            Issue.record("75 Hard must refuse a pause")
            return
        }
        #expect(rule.contains("notAllowed"))

        let habit = Self.definition(pause: PauseRule(mode: .pausesStreak, maxDaysPerPause: 7, pausesPerMonth: 2), grace: 120)
        let yesterday = PauseRequest(kind: .pause, from: today.adding(days: -1), days: 2)
        // Within the two hours of grace yesterday can still be taken off; without grace it cannot.
        let saved = try pause(yesterday, attempt(habit), grace: 120).get()
        #expect(saved.from == today.adding(days: -1) && saved.through == today)
        #expect(pause(yesterday, attempt(habit), grace: 0) == .failure(.tooLate(today.adding(days: -1), closedAt: Self.rome.start(of: today))))
        var judged = AttemptState()
        judged.judgedThrough = today.adding(days: -1)
        judged.judgedThroughClosedAt = now
        if case .failure(.tooLate) = pause(yesterday, attempt(habit, state: judged), grace: 120) {} else { Issue.record("a judged day stays judged") }

        #expect(pause(PauseRequest(kind: .pause, from: today, days: 8), attempt(habit), grace: 120) == .failure(.tooLong(maximum: 7)))
        var paused = AttemptState()
        paused.pauses = [saved]
        if case .failure(.overlaps(let clash)) = pause(PauseRequest(kind: .pause, from: today, days: 1), attempt(habit, state: paused), grace: 120) {
            #expect(clash == saved)
        } else {
            Issue.record("overlapping pauses must be refused")
        }
        paused.pauses.append(Self.pause("2026-11-20", "2026-11-21"))
        if case .failure(.limitReached(let rule)) = pause(PauseRequest(kind: .pause, from: LocalDate("2026-11-25")!, days: 1), attempt(habit, state: paused), grace: 120) {
            #expect(rule.contains("pausesPerMonth"))
        } else {
            Issue.record("a third pause in a month must be refused")
        }
        // Until resumed, under a maximum, lasts the maximum; a fixed-length attempt's pause ends with it.
        #expect(try pause(PauseRequest(kind: .pause, from: today, days: nil), attempt(habit), grace: 0).get().through == today.adding(days: 6))
        #expect(try pause(PauseRequest(kind: .pause, from: today, days: 5), attempt(habit, endOn: today.adding(days: 1)), grace: 0).get().through == today.adding(days: 1))
        if case .failure(.outsideAttempt(let field, _)) = pause(PauseRequest(kind: .pause, from: LocalDate("2026-11-01")!, days: 1), attempt(habit), grace: 0) {
            #expect(field == "from")
        } else {
            Issue.record("a pause before the start must be refused")
        }
    }

    @Test("skip days: a monthly budget spent on the day itself; resume ends a pause today or cancels one to come")
    func skipDaysAndResume() throws {
        let today = LocalDate("2026-11-10")!
        let now = Self.rome.start(of: today).addingTimeInterval(3600)
        let habit = Self.definition(pause: PauseRule(mode: .pausesStreak, skipDaysPerMonth: 1))
        var state = AttemptState()
        func skip(on date: LocalDate) throws(PauseRefusal) -> AttemptPause {
            try PausePolicy.pause(
                PauseRequest(kind: .skipDay, from: date, days: 1), attempt: .init(state: state, startedOn: Self.start, endOn: nil, definition: habit),
                today: today, now: now, pauseID: UUID(), closes: { CheckInWindow.closes($0, calendar: Self.rome, graceMinutes: 0) })
        }
        #expect(PausePolicy.skipDaysLeft(state, rule: habit.pauseRule, today: today) == 1)
        state.pauses.append(try skip(on: today))
        #expect(PausePolicy.skipDaysLeft(state, rule: habit.pauseRule, today: today) == 0)
        #expect(throws: PauseRefusal.self) { try skip(on: today.adding(days: 1)) }
        #expect(state.timeOff(habit).isOff(today))
        #expect(throws: PauseRefusal.notPaused) { try PausePolicy.resume(&state, today: today) }

        state.pauses.append(Self.pause("2026-11-05", nil))
        let resumed = try PausePolicy.resume(&state, today: today)
        #expect(resumed.after?.through == today.adding(days: -1))
        state.pauses.append(Self.pause("2026-11-20", "2026-11-22"))
        let cancelled = try PausePolicy.resume(&state, today: today)
        #expect(cancelled.after == nil && cancelled.before.from == LocalDate("2026-11-20")!)
        #expect(!state.timeOff(habit).isOff(LocalDate("2026-11-21")!))
    }
}
