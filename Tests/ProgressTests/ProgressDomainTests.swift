import Foundation
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ProgressService

@Suite("Progress domain rules", .tags(.unit), .kind(.unit))
struct ProgressDomainTests {
    static let pushUps = SeriesFormula(
        basePoints: 10, repMultiplier: 0.3, seriesMultiplier: 0.8,
        streakMultipliers: [.init(fromStreak: 0, multiplier: 1), .init(fromStreak: 4, multiplier: 1.5)],
        capBands: [.init(fromLevel: 1, multiplierOfDailyGoal: 1.5), .init(fromLevel: 4, multiplierOfDailyGoal: 2), .init(fromLevel: 5, multiplierOfDailyGoal: 2.5)],
        levelThresholds: [100, 300, 600, 1000])

    static func definition(
        tasks: [ChallengeTask], failure: FailureRule = .init(mode: .none), streak: StreakRule = .init(), points: PointsRule = .none,
        duration: Int? = nil, kind: ChallengeKind = .habit
    ) -> JudgingDefinition {
        JudgingDefinition(
            challengeID: UUID(), version: 1, effectiveFrom: nil, kind: kind, name: "D", visibility: .public, ownerID: nil, groupID: nil,
            durationDays: duration, tasks: tasks, rules: ChallengeRules(failure: failure, streak: streak, points: points))
    }

    @Test("001's series formula: base x (reps x 0.3 + series x 0.8) x streak multiplier")
    func seriesPoints() {
        #expect(Points.series(Self.pushUps, reps: 5, seriesNumber: 5, streak: 0) == 55)
        #expect(Points.series(Self.pushUps, reps: 10, seriesNumber: 10, streak: 0) == 110)
        #expect(Points.series(Self.pushUps, reps: 10, seriesNumber: 10, streak: 4) == 165)
        #expect(Points.series(Self.pushUps, reps: 1, seriesNumber: 1, streak: 0) == 11)
    }

    @Test("levels from total points, and the cap bands: levels 1-3 x1.5, level 4 x2.0, level 5+ x2.5")
    func levelsAndCaps() {
        #expect(Points.level(points: 0, thresholds: Self.pushUps.levelThresholds) == 1)
        #expect(Points.level(points: 299, thresholds: Self.pushUps.levelThresholds) == 2)
        #expect(Points.level(points: 600, thresholds: Self.pushUps.levelThresholds) == 4)
        #expect(Points.level(points: 5000, thresholds: Self.pushUps.levelThresholds) == 5)
        let caps = (1...6).map { Points.dailyCap(dailyGoal: 100, level: $0, bands: Self.pushUps.capBands) }
        #expect(caps == [150, 150, 150, 200, 250, 250])
        #expect(Points.dailyCap(dailyGoal: 100, level: 1, bands: []) == nil)
    }

    /// A push-up challenge rewarded by series, with a daily goal of 20, on its first day.
    static func pushUpContext() -> CheckInEngine.Context {
        let task = ChallengeTask(taskID: "pushups", title: "Push-ups", kind: .quantity, target: 20, unit: "push-ups")
        let definition = definition(tasks: [task], points: PointsRule(kind: .series, series: pushUps))
        return CheckInEngine.Context(definition: definition, dailyGoal: 20, streak: 0, levelPoints: 0)
    }

    @Test("push-ups beyond the daily cap are logged and shown, not rewarded")
    func antiCheatCap() throws {
        var record = DayRecord(date: LocalDate("2026-11-20")!)
        let context = Self.pushUpContext()
        let first = try CheckInEngine.apply(CheckIn(taskID: "pushups", action: .log(quantity: 25, series: 5), happenedAt: Date()), to: &record, context: context)
        #expect(first.rewardedQuantity == 25)
        #expect(first.excess == nil)
        #expect(first.pointsDelta == Points.series(Self.pushUps, reps: 25, seriesNumber: 5, streak: 0))
        let second = try CheckInEngine.apply(CheckIn(taskID: "pushups", action: .log(quantity: 10, series: 5), happenedAt: Date()), to: &record, context: context)
        #expect(second.rewardedQuantity == 5)
        #expect(second.excess == 5)
        let third = try CheckInEngine.apply(CheckIn(taskID: "pushups", action: .log(quantity: 10, series: 5), happenedAt: Date()), to: &record, context: context)
        #expect(third.pointsDelta == 0)
        #expect(third.excess == 10)
        #expect(record.tasks["pushups"]?.quantity == 45)
        #expect(record.tasks["pushups"]?.rewardedQuantity == 30)
        let removed = try CheckInEngine.apply(
            CheckIn(taskID: "pushups", action: .removeLog(quantity: 25, rewardedQuantity: 25, points: first.pointsDelta), happenedAt: Date()),
            to: &record, context: context)
        #expect(removed.pointsDelta == -first.pointsDelta)
        #expect(record.tasks["pushups"]?.quantity == 20)
    }

    @Test("the series number cannot carry repetitions past the cap, and an absurd one is refused")
    func seriesBounds() throws {
        var record = DayRecord(date: LocalDate("2026-11-20")!)
        let context = Self.pushUpContext()
        let inflated = try CheckInEngine.apply(CheckIn(taskID: "pushups", action: .log(quantity: 2, series: 9_000), happenedAt: Date()), to: &record, context: context)
        #expect(inflated.pointsDelta == Points.series(Self.pushUps, reps: 2, seriesNumber: 2, streak: 0))
        #expect(Points.series(Self.pushUps, reps: 1_000_000, seriesNumber: 1_000_000, streak: 100) <= Int(Points.maximumAward))
        for series in [0, -5, 10_001, Int.max] {
            #expect(throws: ProgressError.self) {
                try CheckInEngine.apply(CheckIn(taskID: "pushups", action: .log(quantity: 1, series: series), happenedAt: Date()), to: &record, context: context)
            }
        }
        let beyondCap = try CheckInEngine.apply(CheckIn(taskID: "pushups", action: .log(quantity: 1_000_000, series: nil), happenedAt: Date()), to: &record, context: context)
        #expect(beyondCap.rewardedQuantity == 28)
        #expect(beyondCap.pointsDelta == Points.series(Self.pushUps, reps: 28, seriesNumber: 28, streak: 0))
    }

    @Test("a late photo or untick loses to a newer change of the same task")
    func latestChangeWins() throws {
        let definition = Self.definition(tasks: [ChallengeTask(taskID: "photo", title: "Photo", kind: .photo)])
        var record = DayRecord(date: LocalDate("2026-11-20")!)
        let context = CheckInEngine.Context(definition: definition, dailyGoal: 20, streak: 0, levelPoints: 0)
        let now = Date()
        let photo = UUID()
        _ = try CheckInEngine.apply(CheckIn(taskID: "photo", action: .photo(photo), happenedAt: now), to: &record, context: context)
        let stale = try CheckInEngine.apply(CheckIn(taskID: "photo", action: .setDone(false), happenedAt: now.addingTimeInterval(-60)), to: &record, context: context)
        #expect(!stale.applied)
        #expect(record.tasks["photo"]?.photoID == photo)
        let olderPhoto = try CheckInEngine.apply(CheckIn(taskID: "photo", action: .photo(UUID()), happenedAt: now.addingTimeInterval(-30)), to: &record, context: context)
        #expect(!olderPhoto.applied)
        #expect(record.tasks["photo"]?.photoID == photo)
    }

    @Test("the judged days are closed; a move east does not close the day in progress before its judgement")
    func closedDaysAndMoves() {
        let tokyo = LocalCalendar(zoneNamed: "Asia/Tokyo")!
        let day = LocalDate("2026-11-18")!
        let newYorkMidnight = LocalCalendar(zoneNamed: "America/New_York")!.end(of: day)
        let now = tokyo.end(of: day).addingTimeInterval(3600)
        #expect(CheckInWindow.check(date: day, happenedAt: now.addingTimeInterval(-7200), now: now, startedOn: day, endOn: nil, calendar: tokyo, graceMinutes: 0)
            == .tooLate(closedAt: tokyo.end(of: day)))
        #expect(CheckInWindow.check(date: day, happenedAt: now.addingTimeInterval(-7200), now: now, startedOn: day, endOn: nil, calendar: tokyo, graceMinutes: 0,
                                    closesNoEarlierThan: newYorkMidnight) == nil)
        #expect(CheckInWindow.check(date: day, happenedAt: now.addingTimeInterval(-7200), now: now, startedOn: day, endOn: nil, calendar: tokyo, graceMinutes: 600,
                                    judgedThrough: day) != nil)
    }

    @Test("check-ins of the wrong shape are refused with the field named")
    func wrongShapes() {
        let definition = Self.definition(tasks: [ChallengeTask(taskID: "read", title: "Read", kind: .checkbox)])
        var record = DayRecord(date: LocalDate("2026-11-20")!)
        let context = CheckInEngine.Context(definition: definition, dailyGoal: 20, streak: 0, levelPoints: 0)
        #expect(throws: ProgressError.self) { try CheckInEngine.apply(CheckIn(taskID: "nope", action: .setDone(true), happenedAt: Date()), to: &record, context: context) }
        #expect(throws: ProgressError.self) { try CheckInEngine.apply(CheckIn(taskID: "read", action: .log(quantity: 3, series: nil), happenedAt: Date()), to: &record, context: context) }
        let quantity = Self.definition(tasks: [ChallengeTask(taskID: "water", title: "Water", kind: .quantity, target: 2, unit: "litres")])
        let quantityContext = CheckInEngine.Context(definition: quantity, dailyGoal: 20, streak: 0, levelPoints: 0)
        #expect(throws: ProgressError.self) { try CheckInEngine.apply(CheckIn(taskID: "water", action: .log(quantity: -1, series: nil), happenedAt: Date()), to: &record, context: quantityContext) }
        #expect(throws: ProgressError.self) { try CheckInEngine.apply(CheckIn(taskID: "water", action: .log(quantity: 0, series: nil), happenedAt: Date()), to: &record, context: quantityContext) }
    }

    @Test("a tolerant challenge fails on the miss after the allowed ones; a freeze saves a day with some activity")
    func tolerantAndFreezes() {
        let tasks = [ChallengeTask(taskID: "a", title: "A", kind: .checkbox), ChallengeTask(taskID: "b", title: "B", kind: .checkbox)]
        let definition = Self.definition(tasks: tasks, failure: .init(mode: .tolerant, allowedMissedDays: 1), streak: .init(freezesPerMonth: 1), duration: 10)
        let timeline = DefinitionTimeline([definition])!
        let start = LocalDate("2026-11-01")!
        var state = AttemptState()
        var records: [LocalDate: DayRecord] = [:]
        func day(_ offset: Int, _ done: [String]) -> Judgement {
            let date = start.adding(days: offset)
            var record = DayRecord(date: date)
            for id in done { var p = TaskProgress(); p.done = true; record.tasks[id] = p }
            records[date] = record
            return Judge.judge(periodEnding: date, startedOn: start, endOn: start.adding(days: 9), state: &state, timeline: timeline, records: records, dailyGoal: 20)
        }
        #expect(day(0, ["a", "b"]).outcome == .completed)
        let frozen = day(1, ["a"])
        #expect(frozen.outcome == .frozen)
        #expect(frozen.streakChange == .frozen)
        #expect(state.currentStreak == 1)
        #expect(state.freezesLeft == 0)
        let firstMiss = day(2, ["a"])
        #expect(firstMiss.outcome == .missed && firstMiss.ended == nil)
        #expect(state.currentStreak == 0)
        let secondMiss = day(3, [])
        #expect(secondMiss.ended == .failed)
        #expect(secondMiss.reason?.contains("more than the 1 missed days") == true)
        #expect(state.status == .failed)
    }

    @Test("weekly and monthly quantity targets ask a partial first or last period for its share only")
    func partialPeriodTargets() {
        let run = ChallengeTask(taskID: "run", title: "Run", kind: .quantity, target: 70, unit: "km", cadence: Cadence(kind: .weekly))
        let read = ChallengeTask(taskID: "read", title: "Read", kind: .quantity, target: 300, unit: "pages", cadence: Cadence(kind: .monthly))
        let stretch = ChallengeTask(taskID: "stretch", title: "Stretch", kind: .checkbox, cadence: Cadence(kind: .weekly))
        let water = ChallengeTask(taskID: "water", title: "Water", kind: .quantity, target: 2, unit: "l")
        let saturday = LocalDate("2026-11-21")!
        let weekend = [saturday, saturday.adding(days: 1)]
        let november = (0..<30).map { LocalDate("2026-11-01")!.adding(days: $0) }
        let february = (0..<28).map { LocalDate("2026-02-01")!.adding(days: $0) }
        let target = { (task: ChallengeTask, days: [LocalDate]) in PeriodRequirement.target(of: task, over: days, dailyGoal: 20, goalDays: days.count) }
        #expect(target(run, weekend) == 20)
        #expect(target(run, (0..<7).map { saturday.adding(days: $0 - 5) }) == 70)
        #expect(target(read, Array(november.suffix(10))) == 100)
        #expect(target(read, november) == 300)
        #expect(target(read, Array(february.prefix(7))) == 75)
        #expect(target(stretch, weekend) == nil)
        #expect(target(water, weekend) == 4)

        func logged(_ amounts: [Double]) -> [LocalDate: DayRecord] {
            Dictionary(uniqueKeysWithValues: zip(weekend, amounts).map { date, amount in
                var record = DayRecord(date: date)
                var progress = TaskProgress()
                progress.quantity = amount
                progress.rewardedQuantity = amount
                record.tasks["run"] = progress
                return (date, record)
            })
        }
        let met = { (records: [LocalDate: DayRecord]) in
            PeriodRequirement.isMet(run, over: weekend, records: records, dailyGoal: 20, goalDays: 2, cappedOnly: false)
        }
        #expect(met(logged([12, 8])))
        #expect(!met(logged([12, 7.5])))
    }

    @Test("N-times-a-week and weekday tasks are judged on their own terms")
    func periodTasks() {
        let definition = Self.definition(
            tasks: [
                ChallengeTask(taskID: "gym", title: "Gym", kind: .checkbox, cadence: Cadence(kind: .timesPerWeek, timesPerWeek: 2)),
                ChallengeTask(taskID: "yoga", title: "Yoga", kind: .checkbox, cadence: Cadence(kind: .weekdays, weekdays: [.tuesday])),
            ],
            failure: .init(mode: .strict))
        let timeline = DefinitionTimeline([definition])!
        let monday = LocalDate("2026-11-16")!
        var state = AttemptState()
        var records: [LocalDate: DayRecord] = [:]
        var outcomes: [PeriodOutcome] = []
        for offset in 0..<7 {
            let date = monday.adding(days: offset)
            var record = DayRecord(date: date)
            if offset == 1 { var p = TaskProgress(); p.done = true; record.tasks["yoga"] = p }
            if offset == 2 || offset == 5 { var p = TaskProgress(); p.done = true; record.tasks["gym"] = p }
            records[date] = record
            outcomes.append(Judge.judge(periodEnding: date, startedOn: monday, endOn: nil, state: &state, timeline: timeline, records: records, dailyGoal: 20).outcome)
        }
        #expect(outcomes == [.rest, .completed, .rest, .rest, .rest, .rest, .rest])
        #expect(state.status == .active)

        var failing = AttemptState()
        var sparse: [LocalDate: DayRecord] = [:]
        var yoga = DayRecord(date: monday.adding(days: 1))
        var done = TaskProgress()
        done.done = true
        yoga.tasks["yoga"] = done
        sparse[yoga.date] = yoga
        var last: Judgement?
        for offset in 0..<7 {
            last = Judge.judge(periodEnding: monday.adding(days: offset), startedOn: monday, endOn: nil, state: &failing, timeline: timeline, records: sparse, dailyGoal: 20)
            if failing.status != .active { break }
        }
        #expect(last?.date == monday.adding(days: 6))
        #expect(last?.ended == .failed)
        #expect(last?.missedTaskIDs == ["gym"])
    }

    @Test("a weekly streak: goal met extends, activity below goal uses a freeze and then keeps the streak, an empty week breaks it")
    func weeklyStreaks() {
        let task = ChallengeTask(taskID: "pushups", title: "Push-ups", kind: .quantity, targetFromDailyGoal: 1, unit: "push-ups")
        let definition = Self.definition(
            tasks: [task], streak: .init(period: .week, freezesPerMonth: 1, activityKeepsWeeklyStreak: true, weeklyGoalDays: 5))
        let timeline = DefinitionTimeline([definition])!
        let start = LocalDate("2026-11-02")!
        var state = AttemptState()
        var records: [LocalDate: DayRecord] = [:]
        func week(_ index: Int, total: Double) -> Judgement {
            let day = start.adding(days: 7 * index + 2)
            var progress = TaskProgress()
            progress.quantity = total
            records[day] = DayRecord(date: day, tasks: ["pushups": progress])
            let sunday = Judge.nextPeriodEnd(state, startedOn: start, endOn: nil, period: .week)!
            #expect(sunday.weekday == .sunday)
            return Judge.judge(periodEnding: sunday, startedOn: start, endOn: nil, state: &state, timeline: timeline, records: records, dailyGoal: 20)
        }
        #expect(week(0, total: 100).outcome == .completed)
        #expect(week(1, total: 40).outcome == .frozen)
        #expect(week(2, total: 40).outcome == .kept)
        #expect(state.currentStreak == 1)
        #expect(week(3, total: 100).outcome == .completed)
        #expect(state.currentStreak == 2)
        #expect(week(4, total: 0).outcome == .missed)
        #expect(state.currentStreak == 0)
        #expect(state.bestStreak == 2)
        // A week joined on its Sunday asks for one day's worth.
        let sunday = start.adding(days: 6)
        var oneDay = TaskProgress()
        oneDay.quantity = 20
        #expect(WeekGoal.isMet(WeekGoal.days(of: start, startedOn: sunday, endOn: nil), records: [sunday: DayRecord(date: sunday, tasks: ["pushups": oneDay])], definition: definition, dailyGoal: 20))
    }

    @Test("a week's progress: done against the target of its counted days, and daily goals to offer: up after a met week, down after a missed one")
    func weekProgress() {
        let task = ChallengeTask(taskID: "pushups", title: "Push-ups", kind: .quantity, targetFromDailyGoal: 1, unit: "push-ups")
        let definition = Self.definition(
            tasks: [task], streak: .init(period: .week, freezesPerMonth: 1, activityKeepsWeeklyStreak: true, weeklyGoalDays: 5))
        let monday = LocalDate("2026-11-02")!
        func progress(_ total: Double, startedOn: LocalDate = monday) -> WeekProgress {
            var logged = TaskProgress()
            logged.quantity = total
            let day = monday.adding(days: 6)
            return WeekProgress(
                weekStart: monday, startedOn: startedOn, endOn: nil, timeOff: TimeOff(pauses: [], rule: definition.pauseRule),
                records: [day: DayRecord(date: day, tasks: ["pushups": logged])], definition: definition, dailyGoal: 20)
        }
        let met = progress(100)
        #expect(met.goalMet && met.target == 100 && met.done == 100 && met.percent == 100 && met.unit == "push-ups")
        #expect(met.suggestedDailyGoals == [20, 22, 24])
        let missed = progress(45)
        #expect(!missed.goalMet && missed.percent == 45)
        #expect(missed.suggestedDailyGoals == [18, 16, 14])
        // Joined on the Sunday: one day's worth is the target.
        #expect(progress(20, startedOn: monday.adding(days: 6)).target == 20)
    }

    @Test("each check-in action knows its log name, its columns and whether it takes progress back")
    func checkInActions() {
        let photo = UUID()
        let actions: [(CheckIn.Action, name: String, takesBack: Bool, done: Bool?, quantity: Double?, photoID: UUID?)] = [
            (.setDone(true), "done", false, true, nil, nil),
            (.setDone(false), "undone", true, false, nil, nil),
            (.log(quantity: 12, series: nil), "logged", false, nil, 12, nil),
            (.removeLog(quantity: 12, rewardedQuantity: 10, points: 3), "removed", true, nil, 12, nil),
            (.photo(photo), "photo", false, nil, nil, photo),
        ]
        for (action, name, takesBack, done, quantity, photoID) in actions {
            #expect(action.logName(applied: true) == name)
            #expect(action.takesBack == takesBack)
            #expect(action.done == done && action.quantity == quantity && action.photoID == photoID)
        }
        #expect(CheckIn.Action.setDone(true).logName(applied: false) == "superseded")
    }

    @Test("chores recur: weekly on given days, monthly clamped to short months, daily, and none")
    func choreRecurrence() {
        let weekly = ChoreRecurrence(kind: .weekly, weekdays: [.monday, .thursday])
        let monday = LocalDate("2026-11-16")!
        #expect(ChoreSchedule.nextDue(after: monday, completedOn: monday, recurrence: weekly, anchorDay: 16) == LocalDate("2026-11-19"))
        #expect(ChoreSchedule.nextDue(after: monday, completedOn: LocalDate("2026-11-14")!, recurrence: weekly, anchorDay: 16) == LocalDate("2026-11-19"))
        #expect(ChoreSchedule.nextDue(after: monday, completedOn: LocalDate("2026-11-20")!, recurrence: weekly, anchorDay: 16) == LocalDate("2026-11-23"))
        let monthly = ChoreRecurrence(kind: .monthly, dayOfMonth: 31)
        #expect(ChoreSchedule.nextDue(after: LocalDate("2026-01-31")!, completedOn: LocalDate("2026-01-31")!, recurrence: monthly, anchorDay: 31) == LocalDate("2026-02-28"))
        #expect(ChoreSchedule.nextDue(after: LocalDate("2028-01-31")!, completedOn: LocalDate("2028-01-31")!, recurrence: monthly, anchorDay: 31) == LocalDate("2028-02-29"))
        // Without a day of month, a chore first due on the 31st keeps to the last day of short months, then the 31st.
        let anchored = ChoreRecurrence(kind: .monthly)
        #expect(ChoreSchedule.nextDue(after: LocalDate("2026-01-31")!, completedOn: LocalDate("2026-01-31")!, recurrence: anchored, anchorDay: 31) == LocalDate("2026-02-28"))
        #expect(ChoreSchedule.nextDue(after: LocalDate("2026-02-28")!, completedOn: LocalDate("2026-02-28")!, recurrence: anchored, anchorDay: 31) == LocalDate("2026-03-31"))
        #expect(ChoreSchedule.nextDue(after: monday, completedOn: LocalDate("2026-11-19")!, recurrence: ChoreRecurrence(kind: .daily), anchorDay: 16) == LocalDate("2026-11-20"))
        #expect(ChoreSchedule.nextDue(after: monday, completedOn: monday, recurrence: ChoreRecurrence(kind: .none), anchorDay: 16) == nil)
        let berlin = LocalCalendar(zoneNamed: "Europe/Berlin")!
        #expect(ChoreSchedule.dueAt(monday, dueTime: nil, calendar: berlin) == berlin.end(of: monday))
    }

    @Test("a chore with a due time is reminded its lead time before it: an hour unless it says otherwise, none for 0 or without a due time")
    func choreReminderLead() {
        let due = Date(timeIntervalSince1970: 1_800_000_000)
        let chore = { (time: LocalTime?, lead: Int?) in
            ChoreDetails(assigneeID: nil, firstDueOn: LocalDate("2026-11-16")!, dueTime: time, recurrence: ChoreRecurrence(kind: .none), reminderLeadMinutes: lead)
        }
        let six = LocalTime(hour: 18, minute: 0)!
        #expect(ChoreSchedule.remindAt(due, chore: chore(six, nil)) == due.addingTimeInterval(-3600))
        #expect(ChoreSchedule.remindAt(due, chore: chore(six, 15)) == due.addingTimeInterval(-900))
        #expect(ChoreSchedule.remindAt(due, chore: chore(six, 0)) == nil)
        #expect(ChoreSchedule.remindAt(due, chore: chore(nil, nil)) == nil)
    }

    @Test("photos must be an allowed image type whose bytes match, within the size limit")
    func photos() throws {
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3])
        #expect(try PhotoRules.validate(jpeg, contentType: "image/jpeg", maxBytes: 100) == "image/jpeg")
        #expect(throws: ProgressError.invalidFields([FieldError(field: "body", message: "is not a image/png image")])) {
            try PhotoRules.validate(jpeg, contentType: "image/png", maxBytes: 100)
        }
        #expect(throws: ProgressError.unsupportedPhotoType) { try PhotoRules.validate(jpeg, contentType: "application/pdf", maxBytes: 100) }
        #expect(throws: ProgressError.photoTooLarge(limit: 3)) { try PhotoRules.validate(jpeg, contentType: "image/jpeg", maxBytes: 3) }
        #expect(throws: ProgressError.invalidFields([FieldError(field: "body", message: "must contain the photo")])) {
            try PhotoRules.validate(Data(), contentType: "image/jpeg", maxBytes: 100)
        }
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0])
        #expect(try PhotoRules.validate(png, contentType: "image/png; charset=binary", maxBytes: 100) == "image/png")
    }

    @Test("photo refusals are answered with the problem documents the API has always sent")
    func photoProblems() {
        #expect(
            ProgressProblems.problem(for: .unsupportedPhotoType)
                == Problem(
                    slug: "unsupported-media-type", title: "Unsupported media type", status: .unsupportedMediaType,
                    detail: "Send the photo as one of image/jpeg, image/png, image/heic, image/webp."))
        #expect(ProgressProblems.problem(for: .photoTooLarge(limit: 3)) == Problem.tooLarge(limit: 3))
        #expect(
            ProgressProblems.problem(for: .invalidFields([FieldError(field: "body", message: "must contain the photo")]))
                == Problem.validation(field: "body", "must contain the photo"))
    }

    @Test("the check-in window: open until the day's end plus grace, never for future or out-of-attempt days")
    func window() {
        let calendar = LocalCalendar(zoneNamed: "Europe/Rome")!
        let day = LocalDate("2026-03-28")!
        let start = LocalDate("2026-03-01")!
        let endOfDay = calendar.end(of: day)
        func check(_ now: Date, _ date: LocalDate = day, happened: Date? = nil, grace: Int = 60) -> CheckInWindow.Refusal? {
            CheckInWindow.check(date: date, happenedAt: happened ?? now, now: now, startedOn: start, endOn: LocalDate("2026-03-30"), calendar: calendar, graceMinutes: grace)
        }
        #expect(check(endOfDay.addingTimeInterval(-60)) == nil)
        #expect(check(endOfDay.addingTimeInterval(59 * 60), happened: endOfDay.addingTimeInterval(-60)) == nil)
        #expect(check(endOfDay.addingTimeInterval(61 * 60), happened: endOfDay.addingTimeInterval(-60)) == .tooLate(closedAt: endOfDay.addingTimeInterval(3600)))
        #expect(check(endOfDay.addingTimeInterval(-3600), LocalDate("2026-03-29")!) == .inFuture)
        #expect(check(endOfDay, LocalDate("2026-02-28")!, happened: endOfDay) == .beforeStart)
        // The spring-forward day in Rome is 23 hours long.
        #expect(calendar.end(of: LocalDate("2026-03-29")!).timeIntervalSince(calendar.start(of: LocalDate("2026-03-29")!)) == 23 * 3600)
    }

    @Test("a judged day is refused with the instant its window closed, even when the current zone's window would still be open")
    func judgedDayNamesItsClose() {
        // Judged at Tokyo's midnight, then the member moved to New York, where the day is still under way.
        let tokyo = LocalCalendar(zoneNamed: "Asia/Tokyo")!
        let newYork = LocalCalendar(zoneNamed: "America/New_York")!
        let day = LocalDate("2026-11-16")!
        let closedInTokyo = tokyo.end(of: day)
        let now = closedInTokyo.addingTimeInterval(3600)
        #expect(newYork.date(at: now) == day)
        let refusal = CheckInWindow.check(
            date: day, happenedAt: now, now: now, startedOn: day, endOn: nil, calendar: newYork, graceMinutes: 0, judgedThrough: day,
            judgedThroughClosedAt: closedInTokyo)
        #expect(refusal == .tooLate(closedAt: closedInTokyo))
        // Without the recorded close (attempts judged before it was kept), never later than now.
        let legacy = CheckInWindow.check(
            date: day, happenedAt: now, now: now, startedOn: day, endOn: nil, calendar: newYork, graceMinutes: 0, judgedThrough: day)
        #expect(legacy == .tooLate(closedAt: now))
    }

    @Test("a definition's version is chosen by the day judged")
    func versionsByDay() {
        var first = Self.definition(tasks: [ChallengeTask(taskID: "a", title: "A", kind: .checkbox)])
        var second = first
        second.version = 2
        second.effectiveFrom = LocalDate("2026-11-20")
        second.tasks.append(ChallengeTask(taskID: "b", title: "B", kind: .checkbox))
        first.version = 1
        let timeline = DefinitionTimeline([second, first])!
        #expect(timeline.version(on: LocalDate("2026-11-19")!).version == 1)
        #expect(timeline.version(on: LocalDate("2026-11-20")!).version == 2)
        #expect(Requirements.dayTasks(timeline.version(on: LocalDate("2026-11-25")!), on: LocalDate("2026-11-25")!).count == 2)
    }
}
