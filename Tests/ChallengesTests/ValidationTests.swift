import Foundation
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ChallengesDomain
@testable import ChallengesService

/// One broken rule: the draft breaks exactly it, and the problem names exactly `field`.
struct BrokenRule: Sendable, CustomTestStringConvertible {
    let rule: String
    let field: String
    let draft: ChallengeDraft
    var context: DraftContext = Fixtures.user

    var testDescription: String { "\(rule) → \(field)" }

    static func with(_ base: ChallengeDraft, _ change: (inout ChallengeDraft) -> Void) -> ChallengeDraft {
        var draft = base
        change(&draft)
        return draft
    }

    static func series(_ change: (inout SeriesFormula) -> Void) -> ChallengeDraft {
        var series = CuratedContent.pushUpSeries
        change(&series)
        return Fixtures.curated(
            tasks: [TaskDraft(taskID: "reps", title: "Reps", kind: .quantity, target: 20, unit: "push-ups")],
            rules: RulesDraft(failure: FailureRule(mode: .strict), points: PointsRule(kind: .series, series: series)))
    }

    static func points(_ points: PointsRule, tasks: [TaskDraft]? = nil) -> ChallengeDraft {
        Fixtures.curated(tasks: tasks, rules: RulesDraft(failure: FailureRule(mode: .strict), points: points))
    }

    static let long = String(repeating: "x", count: 2001)

    static let all: [BrokenRule] = texts + visibility + durations + tasks + cadences + failures + streaks + pauses + pointRules + chores
        + habits + competitions + weeklies

    static let texts: [BrokenRule] = [
        BrokenRule(rule: "empty name", field: "name", draft: with(Fixtures.habit) { $0.name = "   " }),
        BrokenRule(rule: "name over 100 characters", field: "name", draft: with(Fixtures.habit) { $0.name = String(long.prefix(101)) }),
        BrokenRule(rule: "description over 2000 characters", field: "description", draft: with(Fixtures.habit) { $0.description = long }),
        BrokenRule(rule: "empty category", field: "category", draft: with(Fixtures.habit) { $0.category = " " }),
        BrokenRule(rule: "category over 40 characters", field: "category", draft: with(Fixtures.habit) { $0.category = String(long.prefix(41)) }),
        BrokenRule(rule: "negative daily minutes", field: "estimatedDailyMinutes", draft: with(Fixtures.habit) { $0.estimatedDailyMinutes = -1 }),
        BrokenRule(rule: "more daily minutes than a day has", field: "estimatedDailyMinutes", draft: with(Fixtures.habit) { $0.estimatedDailyMinutes = 1441 }),
    ]

    static let visibility: [BrokenRule] = [
        BrokenRule(
            rule: "a user cannot create curated challenges", field: "kind",
            draft: with(Fixtures.curated()) { $0.visibility = .public }),
        BrokenRule(rule: "curated visibility is for content", field: "visibility", draft: with(Fixtures.competition) { $0.visibility = .curated }),
        BrokenRule(rule: "a curated challenge is curated-visible", field: "visibility", draft: with(Fixtures.curated()) { $0.visibility = .public }, context: .content),
        BrokenRule(rule: "a chore is for its household", field: "visibility", draft: with(Fixtures.chore) { $0.visibility = .private }, context: Fixtures.member),
        BrokenRule(rule: "a habit is private", field: "visibility", draft: with(Fixtures.habit) { $0.visibility = .public }),
        BrokenRule(rule: "a weekly challenge is private", field: "visibility", draft: with(Fixtures.weekly) { $0.visibility = .public }),
        BrokenRule(rule: "group visibility needs a group", field: "groupID", draft: with(Fixtures.competition) { $0.visibility = .group }),
        BrokenRule(rule: "a group id needs group visibility", field: "groupID", draft: with(Fixtures.competition) { $0.groupID = Fixtures.household }),
        BrokenRule(
            rule: "a group the caller is not in", field: "groupID",
            draft: with(Fixtures.competition) {
                $0.visibility = .group
                $0.groupID = Fixtures.household
            }, context: DraftContext(source: .user(Fixtures.caller), groupMembers: [Fixtures.housemate])),
        BrokenRule(
            rule: "an unknown group", field: "groupID",
            draft: with(Fixtures.competition) {
                $0.visibility = .group
                $0.groupID = Fixtures.household
            }),
    ]

    static let durations: [BrokenRule] = [
        BrokenRule(rule: "zero days", field: "durationDays", draft: Fixtures.curated(durationDays: 0), context: .content),
        BrokenRule(rule: "more than 365 days", field: "durationDays", draft: Fixtures.curated(durationDays: 366), context: .content),
        BrokenRule(rule: "a chore is open-ended", field: "durationDays", draft: with(Fixtures.chore) { $0.durationDays = 30 }, context: Fixtures.member),
        BrokenRule(
            rule: "a competition's duration is its time limit", field: "durationDays", draft: with(Fixtures.competition) { $0.durationDays = 10 }),
        BrokenRule(
            rule: "a duration ending after 2200 when started today", field: "durationDays",
            draft: with(Fixtures.habit) { $0.durationDays = 365 }, context: DraftContext(source: .user(Fixtures.caller), today: LocalDate("2200-06-01"))),
        BrokenRule(
            rule: "a weekly challenge ending after 2200 when started today", field: "durationDays",
            draft: with(Fixtures.weekly) { $0.durationDays = 14 }, context: DraftContext(source: .user(Fixtures.caller), today: LocalDate("2200-12-20"))),
    ]

    static let tasks: [BrokenRule] = [
        BrokenRule(rule: "no tasks", field: "tasks", draft: with(Fixtures.habit) { $0.tasks = [] }),
        BrokenRule(
            rule: "more than 20 tasks", field: "tasks",
            draft: with(Fixtures.habit) { $0.tasks = (0..<21).map { Fixtures.task(id: "t\($0)") } }),
        BrokenRule(rule: "task id with capitals and spaces", field: "tasks[0].taskID", draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(id: "Bad ID")] }),
        BrokenRule(rule: "empty task id", field: "tasks[0].taskID", draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(id: "")] }),
        BrokenRule(
            rule: "task id over 40 characters", field: "tasks[0].taskID",
            draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(id: String(repeating: "a", count: 41))] }),
        BrokenRule(
            rule: "duplicate task ids", field: "tasks[2].taskID",
            draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(id: "a"), Fixtures.task(id: "b"), Fixtures.task(id: "a")] }),
        BrokenRule(
            rule: "empty task title", field: "tasks[0].title",
            draft: with(Fixtures.habit) { $0.tasks = [TaskDraft(taskID: "a", title: " ", kind: .checkbox)] }),
        BrokenRule(
            rule: "task details over 500 characters", field: "tasks[0].details",
            draft: with(Fixtures.habit) { $0.tasks = [TaskDraft(taskID: "a", title: "A", details: long, kind: .checkbox)] }),
        BrokenRule(
            rule: "quantity without a unit", field: "tasks[0].unit", draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(.quantity, target: 5)] }),
        BrokenRule(
            rule: "custom unit over 20 characters", field: "tasks[0].unit",
            draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(.quantity, target: 5, unit: "units-of-very-long-name")] }),
        BrokenRule(
            rule: "quantity without a target", field: "tasks[0].target",
            draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(.quantity, unit: "pages")] }),
        BrokenRule(
            rule: "zero target", field: "tasks[0].target",
            draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(.quantity, target: 0, unit: "pages")] }),
        BrokenRule(
            rule: "negative target", field: "tasks[1].target",
            draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(id: "ok"), Fixtures.task(.quantity, target: -3.8, unit: "litres")] }),
        BrokenRule(
            rule: "absurd target", field: "tasks[0].target",
            draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(.quantity, target: 2_000_000, unit: "steps")] }),
        BrokenRule(
            rule: "checkbox with a target", field: "tasks[0].target", draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(.checkbox, target: 3)] }),
        BrokenRule(
            rule: "checkbox with a unit", field: "tasks[0].unit", draft: with(Fixtures.habit) { $0.tasks = [Fixtures.task(.checkbox, unit: "pages")] }),
        BrokenRule(
            rule: "photo with a target from the daily goal", field: "tasks[0].targetFromDailyGoal",
            draft: with(Fixtures.habit) { $0.tasks = [TaskDraft(taskID: "p", title: "Photo", kind: .photo, targetFromDailyGoal: 1)] }),
        BrokenRule(
            rule: "target from the daily goal outside weekly challenges", field: "tasks[0].targetFromDailyGoal",
            draft: with(Fixtures.habit) { $0.tasks = [TaskDraft(taskID: "p", title: "Push-ups", kind: .quantity, targetFromDailyGoal: 1, unit: "push-ups")] }),
        BrokenRule(
            rule: "task points below 1", field: "tasks[0].points",
            draft: points(PointsRule(kind: .perTask), tasks: [TaskDraft(taskID: "a", title: "A", kind: .checkbox, points: 0)]), context: .content),
        BrokenRule(
            rule: "task points without perTask points", field: "tasks[0].points",
            draft: points(.none, tasks: [TaskDraft(taskID: "a", title: "A", kind: .checkbox, points: 5)]), context: .content),
    ]

    static func cadence(_ cadence: Cadence, durationDays: Int? = 30) -> ChallengeDraft {
        // Open-ended definitions cannot fail: give them the none failure mode.
        let rules = durationDays == nil ? RulesDraft(failure: FailureRule(mode: .none)) : nil
        return Fixtures.curated(durationDays: durationDays, tasks: [TaskDraft(taskID: "a", title: "A", kind: .checkbox, cadence: cadence)], rules: rules)
    }

    static let cadences: [BrokenRule] = [
        BrokenRule(rule: "weekdays cadence without weekdays", field: "tasks[0].cadence.weekdays", draft: cadence(Cadence(kind: .weekdays)), context: .content),
        BrokenRule(
            rule: "weekdays cadence with an empty list", field: "tasks[0].cadence.weekdays", draft: cadence(Cadence(kind: .weekdays, weekdays: [])),
            context: .content),
        BrokenRule(
            rule: "a weekday twice", field: "tasks[0].cadence.weekdays", draft: cadence(Cadence(kind: .weekdays, weekdays: [.monday, .monday])),
            context: .content),
        BrokenRule(
            rule: "weekdays on a daily cadence", field: "tasks[0].cadence.weekdays", draft: cadence(Cadence(kind: .daily, weekdays: [.monday])),
            context: .content),
        BrokenRule(rule: "times per week missing", field: "tasks[0].cadence.timesPerWeek", draft: cadence(Cadence(kind: .timesPerWeek)), context: .content),
        BrokenRule(
            rule: "zero times per week", field: "tasks[0].cadence.timesPerWeek", draft: cadence(Cadence(kind: .timesPerWeek, timesPerWeek: 0)),
            context: .content),
        BrokenRule(
            rule: "eight times per week", field: "tasks[0].cadence.timesPerWeek", draft: cadence(Cadence(kind: .timesPerWeek, timesPerWeek: 8)),
            context: .content),
        BrokenRule(
            rule: "times per week on a weekly cadence", field: "tasks[0].cadence.timesPerWeek",
            draft: cadence(Cadence(kind: .weekly, timesPerWeek: 2)), context: .content),
        BrokenRule(
            rule: "weekly cadence in a 5-day challenge", field: "tasks[0].cadence.kind", draft: cadence(Cadence(kind: .weekly), durationDays: 5),
            context: .content),
        BrokenRule(
            rule: "3 times a week in a 6-day challenge", field: "tasks[0].cadence.kind",
            draft: cadence(Cadence(kind: .timesPerWeek, timesPerWeek: 3), durationDays: 6), context: .content),
        BrokenRule(
            rule: "monthly cadence in a 27-day challenge", field: "tasks[0].cadence.kind", draft: cadence(Cadence(kind: .monthly), durationDays: 27),
            context: .content),
        BrokenRule(
            rule: "monthly cadence in a 7-day competition", field: "tasks[0].cadence.kind",
            draft: with(Fixtures.competition) {
                $0.tasks = [TaskDraft(taskID: "water", title: "Water", kind: .quantity, unit: "litres", cadence: Cadence(kind: .monthly))]
            }),
    ]

    static func failure(_ failure: FailureRule, durationDays: Int? = 30) -> ChallengeDraft {
        Fixtures.curated(durationDays: durationDays, rules: RulesDraft(failure: failure))
    }

    static let failures: [BrokenRule] = [
        BrokenRule(
            rule: "a habit cannot fail", field: "rules.failure.mode",
            draft: with(Fixtures.habit) { $0.rules = RulesDraft(failure: FailureRule(mode: .strict)) }),
        BrokenRule(
            rule: "a chore cannot fail", field: "rules.failure.mode",
            draft: with(Fixtures.chore) { $0.rules = RulesDraft(failure: FailureRule(mode: .strict)) }, context: Fixtures.member),
        BrokenRule(
            rule: "an open-ended definition cannot fail", field: "rules.failure.mode", draft: failure(FailureRule(mode: .strict), durationDays: nil),
            context: .content),
        BrokenRule(
            rule: "tolerant without allowed misses", field: "rules.failure.allowedMissedDays", draft: failure(FailureRule(mode: .tolerant)),
            context: .content),
        BrokenRule(
            rule: "tolerant with zero allowed misses", field: "rules.failure.allowedMissedDays",
            draft: failure(FailureRule(mode: .tolerant, allowedMissedDays: 0)), context: .content),
        BrokenRule(
            rule: "tolerant allowing as many misses as days", field: "rules.failure.allowedMissedDays",
            draft: failure(FailureRule(mode: .tolerant, allowedMissedDays: 30)), context: .content),
        BrokenRule(
            rule: "allowed misses on a strict rule", field: "rules.failure.allowedMissedDays",
            draft: failure(FailureRule(mode: .strict, allowedMissedDays: 2)), context: .content),
        BrokenRule(
            rule: "negative grace", field: "rules.checkInGraceMinutes",
            draft: with(Fixtures.habit) { $0.rules = RulesDraft(checkInGraceMinutes: -1) }),
        BrokenRule(
            rule: "grace over two days", field: "rules.checkInGraceMinutes",
            draft: with(Fixtures.habit) { $0.rules = RulesDraft(checkInGraceMinutes: 2881) }),
    ]

    static func pause(_ base: ChallengeDraft, _ rule: PauseRule) -> ChallengeDraft {
        with(base) { $0.rules = RulesDraft(pause: rule) }
    }

    static let pauses: [BrokenRule] = [
        BrokenRule(
            rule: "a competition's time limit does not move", field: "rules.pause.mode",
            draft: pause(Fixtures.competition, PauseRule(mode: .pausesStreak))),
        BrokenRule(rule: "a chore is not paused", field: "rules.pause.mode", draft: pause(Fixtures.chore, PauseRule(mode: .remindersOnly)), context: Fixtures.member),
        BrokenRule(
            rule: "limits without pauses", field: "rules.pause.maxDaysPerPause",
            draft: pause(Fixtures.habit, PauseRule(mode: .notAllowed, maxDaysPerPause: 3))),
        BrokenRule(rule: "a pause of 0 days", field: "rules.pause.maxDaysPerPause", draft: pause(Fixtures.habit, PauseRule(mode: .pausesStreak, maxDaysPerPause: 0))),
        BrokenRule(rule: "32 pauses a month", field: "rules.pause.pausesPerMonth", draft: pause(Fixtures.habit, PauseRule(mode: .pausesStreak, pausesPerMonth: 32))),
        BrokenRule(rule: "11 skip days a month", field: "rules.pause.skipDaysPerMonth", draft: pause(Fixtures.habit, PauseRule(mode: .pausesStreak, skipDaysPerMonth: 11))),
        BrokenRule(
            rule: "skip days that only silence reminders", field: "rules.pause.skipDaysPerMonth",
            draft: pause(Fixtures.competition, PauseRule(mode: .remindersOnly, skipDaysPerMonth: 2))),
        BrokenRule(
            rule: "a repeated rest weekday", field: "rules.pause.restWeekdays",
            draft: pause(Fixtures.habit, PauseRule(mode: .pausesStreak, restWeekdays: [.sunday, .sunday]))),
        BrokenRule(
            rule: "every weekday a rest day", field: "rules.pause.restWeekdays",
            draft: pause(Fixtures.habit, PauseRule(mode: .pausesStreak, restWeekdays: Weekday.allCases))),
    ]

    static let streaks: [BrokenRule] = [
        BrokenRule(
            rule: "five freezes a month", field: "rules.streak.freezesPerMonth",
            draft: with(Fixtures.habit) { $0.rules = RulesDraft(streak: StreakRule(freezesPerMonth: 5)) }),
        BrokenRule(
            rule: "negative freezes", field: "rules.streak.freezesPerMonth",
            draft: with(Fixtures.habit) { $0.rules = RulesDraft(streak: StreakRule(freezesPerMonth: -1)) }),
        BrokenRule(
            rule: "weekly activity rule on a daily streak", field: "rules.streak.activityKeepsWeeklyStreak",
            draft: with(Fixtures.habit) { $0.rules = RulesDraft(streak: StreakRule(period: .day, activityKeepsWeeklyStreak: true)) }),
        BrokenRule(
            rule: "weekly goal days on a daily streak", field: "rules.streak.weeklyGoalDays",
            draft: with(Fixtures.habit) { $0.rules = RulesDraft(streak: StreakRule(period: .day, weeklyGoalDays: 5)) }),
        BrokenRule(
            rule: "a weekly goal of zero days", field: "rules.streak.weeklyGoalDays",
            draft: with(Fixtures.habit) { $0.rules = RulesDraft(streak: StreakRule(period: .week, weeklyGoalDays: 0)) }),
        BrokenRule(
            rule: "a weekly goal of eight days", field: "rules.streak.weeklyGoalDays",
            draft: with(Fixtures.habit) { $0.rules = RulesDraft(streak: StreakRule(period: .week, weeklyGoalDays: 8)) }),
    ]

    static let pointRules: [BrokenRule] = [
        BrokenRule(rule: "per-task points on no points", field: "rules.points.pointsPerTask", draft: points(PointsRule(kind: .none, pointsPerTask: 5)), context: .content),
        BrokenRule(rule: "zero points per task", field: "rules.points.pointsPerTask", draft: points(PointsRule(kind: .perTask, pointsPerTask: 0)), context: .content),
        BrokenRule(
            rule: "more than 100 points a tick", field: "rules.points.pointsPerTask",
            draft: with(Fixtures.habit) { $0.rules = RulesDraft(points: PointsRule(kind: .perTask, pointsPerTask: 101)) }),
        BrokenRule(
            rule: "more than 100 points for one task", field: "tasks[0].points",
            draft: points(PointsRule(kind: .perTask), tasks: [TaskDraft(taskID: "a", title: "A", kind: .checkbox, points: 101)]), context: .content),
        BrokenRule(
            rule: "a completion bonus over 1000", field: "rules.points.completionBonus",
            draft: points(PointsRule(kind: .perTask, pointsPerTask: 10, completionBonus: 1001)), context: .content),
        BrokenRule(
            rule: "a weekly goal bonus over 1000", field: "rules.points.weeklyGoalBonus",
            draft: points(PointsRule(kind: .perTask, pointsPerTask: 10, weeklyGoalBonus: 1001)), context: .content),
        BrokenRule(rule: "base points over 100", field: "rules.points.series.basePoints", draft: series { $0.basePoints = 101 }, context: .content),
        BrokenRule(rule: "a rep multiplier over 10", field: "rules.points.series.repMultiplier", draft: series { $0.repMultiplier = 10.5 }, context: .content),
        BrokenRule(
            rule: "a streak multiplier over 10", field: "rules.points.series.streakMultipliers[1].multiplier",
            draft: series { $0.streakMultipliers[1].multiplier = 11 }, context: .content),
        BrokenRule(
            rule: "a series formula on per-task points", field: "rules.points.series",
            draft: points(PointsRule(kind: .perTask, series: CuratedContent.pushUpSeries)), context: .content),
        BrokenRule(
            rule: "series points without the formula", field: "rules.points.series",
            draft: points(PointsRule(kind: .series), tasks: [TaskDraft(taskID: "r", title: "R", kind: .quantity, target: 5, unit: "reps")]),
            context: .content),
        BrokenRule(
            rule: "series points without a quantity task", field: "rules.points.kind",
            draft: points(PointsRule(kind: .series, series: CuratedContent.pushUpSeries)), context: .content),
        BrokenRule(rule: "zero base points", field: "rules.points.series.basePoints", draft: series { $0.basePoints = 0 }, context: .content),
        BrokenRule(rule: "negative rep multiplier", field: "rules.points.series.repMultiplier", draft: series { $0.repMultiplier = -0.3 }, context: .content),
        BrokenRule(rule: "zero series multiplier", field: "rules.points.series.seriesMultiplier", draft: series { $0.seriesMultiplier = 0 }, context: .content),
        BrokenRule(rule: "no streak multipliers", field: "rules.points.series.streakMultipliers", draft: series { $0.streakMultipliers = [] }, context: .content),
        BrokenRule(
            rule: "streak multipliers not starting at 0", field: "rules.points.series.streakMultipliers[0].fromStreak",
            draft: series { $0.streakMultipliers[0].fromStreak = 1 }, context: .content),
        BrokenRule(
            rule: "streak multipliers not ascending", field: "rules.points.series.streakMultipliers[2].fromStreak",
            draft: series { $0.streakMultipliers[2].fromStreak = 2 }, context: .content),
        BrokenRule(
            rule: "a multiplier below 1", field: "rules.points.series.streakMultipliers[1].multiplier",
            draft: series { $0.streakMultipliers[1].multiplier = 0.9 }, context: .content),
        BrokenRule(rule: "no cap bands", field: "rules.points.series.capBands", draft: series { $0.capBands = [] }, context: .content),
        BrokenRule(
            rule: "cap bands not starting at level 1", field: "rules.points.series.capBands[0].fromLevel",
            draft: series { $0.capBands[0].fromLevel = 2 }, context: .content),
        BrokenRule(
            rule: "cap bands not ascending", field: "rules.points.series.capBands[2].fromLevel",
            draft: series { $0.capBands[2].fromLevel = 4 }, context: .content),
        BrokenRule(
            rule: "a cap of the daily goal itself", field: "rules.points.series.capBands[0].multiplierOfDailyGoal",
            draft: series { $0.capBands[0].multiplierOfDailyGoal = 1 }, context: .content),
        BrokenRule(
            rule: "level thresholds not ascending", field: "rules.points.series.levelThresholds[2]",
            draft: series { $0.levelThresholds[2] = 1500 }, context: .content),
        BrokenRule(
            rule: "a zero level threshold", field: "rules.points.series.levelThresholds[0]",
            draft: series { $0.levelThresholds = [0, 100] }, context: .content),
        BrokenRule(
            rule: "negative completion bonus", field: "rules.points.completionBonus",
            draft: points(PointsRule(kind: .none, completionBonus: -200)), context: .content),
        BrokenRule(
            rule: "negative weekly bonus", field: "rules.points.weeklyGoalBonus",
            draft: points(PointsRule(kind: .none, weeklyGoalBonus: -1)), context: .content),
    ]

    static let chores: [BrokenRule] = [
        BrokenRule(rule: "a chore without its details", field: "chore", draft: with(Fixtures.chore) { $0.chore = nil }, context: Fixtures.member),
        BrokenRule(rule: "a chore without a household", field: "groupID", draft: with(Fixtures.chore) { $0.groupID = nil }, context: Fixtures.member),
        BrokenRule(rule: "zero points", field: "chore.points", draft: with(Fixtures.chore) { $0.chore?.points = 0 }, context: Fixtures.member),
        BrokenRule(
            rule: "an assignee from outside the household", field: "chore.assigneeID",
            draft: with(Fixtures.chore) { $0.chore?.assigneeID = Fixtures.stranger }, context: Fixtures.member),
        BrokenRule(
            rule: "a chore given tasks", field: "tasks", draft: with(Fixtures.chore) { $0.tasks = [Fixtures.task()] }, context: Fixtures.member),
        BrokenRule(
            rule: "weekly without weekdays", field: "chore.recurrence.weekdays",
            draft: with(Fixtures.chore) { $0.chore?.recurrence = ChoreRecurrence(kind: .weekly) }, context: Fixtures.member),
        BrokenRule(
            rule: "weekly with a weekday twice", field: "chore.recurrence.weekdays",
            draft: with(Fixtures.chore) { $0.chore?.recurrence = ChoreRecurrence(kind: .weekly, weekdays: [.friday, .friday]) },
            context: Fixtures.member),
        BrokenRule(
            rule: "weekdays on a daily chore", field: "chore.recurrence.weekdays",
            draft: with(Fixtures.chore) { $0.chore?.recurrence = ChoreRecurrence(kind: .daily, weekdays: [.friday]) }, context: Fixtures.member),
        BrokenRule(
            rule: "the 32nd of the month", field: "chore.recurrence.dayOfMonth",
            draft: with(Fixtures.chore) { $0.chore?.recurrence = ChoreRecurrence(kind: .monthly, dayOfMonth: 32) }, context: Fixtures.member),
        BrokenRule(
            rule: "a day of the month on a weekly chore", field: "chore.recurrence.dayOfMonth",
            draft: with(Fixtures.chore) { $0.chore?.recurrence = ChoreRecurrence(kind: .weekly, weekdays: [.monday], dayOfMonth: 3) },
            context: Fixtures.member),
        BrokenRule(
            rule: "chore details on a habit", field: "chore",
            draft: with(Fixtures.habit) { $0.chore = Fixtures.chore.chore }),
        BrokenRule(
            rule: "first due on 9999-12-31", field: "chore.firstDueOn",
            draft: with(Fixtures.chore) { $0.chore?.firstDueOn = LocalDate("9999-12-31")! }, context: Fixtures.member),
        BrokenRule(
            rule: "first due after 2200", field: "chore.firstDueOn",
            draft: with(Fixtures.chore) { $0.chore?.firstDueOn = LocalDate("2201-01-01")! }, context: Fixtures.member),
        BrokenRule(
            rule: "first due before 1970", field: "chore.firstDueOn",
            draft: with(Fixtures.chore) { $0.chore?.firstDueOn = LocalDate("1969-12-31")! }, context: Fixtures.member),
    ]

    static let habits: [BrokenRule] = [
        BrokenRule(rule: "a colour name", field: "habit.colour", draft: with(Fixtures.habit) { $0.habit?.colour = "red" }),
        BrokenRule(rule: "a colour with a non-hex digit", field: "habit.colour", draft: with(Fixtures.habit) { $0.habit?.colour = "#12345G" }),
        BrokenRule(rule: "a short colour", field: "habit.colour", draft: with(Fixtures.habit) { $0.habit?.colour = "#FFF" }),
        BrokenRule(rule: "priority 0", field: "habit.priority", draft: with(Fixtures.habit) { $0.habit?.priority = 0 }),
        BrokenRule(rule: "priority 6", field: "habit.priority", draft: with(Fixtures.habit) { $0.habit?.priority = 6 }),
        BrokenRule(rule: "notes over 1000 characters", field: "habit.notes", draft: with(Fixtures.habit) { $0.habit?.notes = long }),
        BrokenRule(rule: "habit details on a competition", field: "habit", draft: with(Fixtures.competition) { $0.habit = Fixtures.habit.habit }),
    ]

    static let competitions: [BrokenRule] = [
        BrokenRule(rule: "a competition without a time limit", field: "competition", draft: with(Fixtures.competition) { $0.competition = nil }),
        BrokenRule(
            rule: "ending before it starts", field: "competition.endsAt",
            draft: with(Fixtures.competition) { $0.competition?.endsAt = Fixtures.instant("2026-05-01T00:00:00Z") }),
        BrokenRule(
            rule: "ending when it starts", field: "competition.endsAt",
            draft: with(Fixtures.competition) { $0.competition?.endsAt = Fixtures.competition.competition!.startsAt }),
        BrokenRule(
            rule: "lasting more than 366 days", field: "competition.endsAt",
            draft: with(Fixtures.competition) { $0.competition?.endsAt = Fixtures.instant("2027-06-03T00:00:00Z") }),
        BrokenRule(rule: "a time zone that is not IANA", field: "competition.timeZone", draft: with(Fixtures.competition) { $0.competition?.timeZone = "Mars/Olympus" }),
        BrokenRule(rule: "an offset instead of a zone", field: "competition.timeZone", draft: with(Fixtures.competition) { $0.competition?.timeZone = "GMT+2" }),
        BrokenRule(rule: "an empty unit", field: "competition.unit", draft: with(Fixtures.competition) { $0.competition?.unit = " " }),
        BrokenRule(
            rule: "two quantity tasks", field: "tasks",
            draft: with(Fixtures.competition) {
                $0.tasks = [Fixtures.task(.quantity, id: "a", unit: "litres"), Fixtures.task(.quantity, id: "b", unit: "litres")]
            }),
        BrokenRule(
            rule: "no quantity task", field: "tasks",
            draft: with(Fixtures.competition) { $0.tasks = [Fixtures.task(.photo, id: "proof")] }),
        BrokenRule(
            rule: "a quantity task in another unit", field: "tasks[1].unit",
            draft: with(Fixtures.competition) { $0.tasks = [Fixtures.task(.photo, id: "proof"), Fixtures.task(.quantity, id: "water", unit: "glasses")] }),
        BrokenRule(
            rule: "competition details on a habit", field: "competition",
            draft: with(Fixtures.habit) { $0.competition = Fixtures.competition.competition }),
        // The production crash: 9999-12-31T23:59:59Z is already 10000-01-01 in Rome.
        BrokenRule(
            rule: "ending on 9999-12-31 in Rome", field: "competition.endsAt",
            draft: with(Fixtures.competition) {
                $0.competition?.startsAt = Fixtures.instant("9999-12-25T00:00:00Z")
                $0.competition?.endsAt = Fixtures.instant("9999-12-31T23:59:59Z")
            }),
        BrokenRule(
            rule: "ending on 2200-12-31 in UTC, already 2201 at UTC+14", field: "competition.endsAt",
            draft: with(Fixtures.competition) {
                $0.competition?.startsAt = Fixtures.instant("2200-12-24T00:00:00Z")
                $0.competition?.endsAt = Fixtures.instant("2200-12-31T10:00:00.001Z")
            }),
        BrokenRule(
            rule: "starting at 1970-01-01T00:00Z, still 1969 at UTC-12", field: "competition.startsAt",
            draft: with(Fixtures.competition) {
                $0.competition?.startsAt = Fixtures.instant("1970-01-01T00:00:00Z")
                $0.competition?.endsAt = Fixtures.instant("1970-01-08T00:00:00Z")
            }),
    ]

    static let weeklies: [BrokenRule] = [
        BrokenRule(rule: "a weekly challenge without tasks", field: "tasks", draft: with(Fixtures.weekly) { $0.tasks = nil }),
        BrokenRule(
            rule: "a zero multiple of the daily goal", field: "tasks[0].targetFromDailyGoal",
            draft: with(Fixtures.weekly) { $0.tasks?[0].targetFromDailyGoal = 0 }),
        BrokenRule(
            rule: "both a target and a multiple of the daily goal", field: "tasks[0].target",
            draft: with(Fixtures.weekly) { $0.tasks?[0].target = 100 }),
        BrokenRule(
            rule: "neither a target nor a multiple of the daily goal", field: "tasks[0].target",
            draft: with(Fixtures.weekly) { $0.tasks?[0].targetFromDailyGoal = nil }),
        BrokenRule(rule: "a badge id that is not a slug", field: "badges[0].id", draft: badges([ChallengeBadge(id: "Winner!", title: "Winner", rule: .init(kind: .firstPlace))])),
        BrokenRule(
            rule: "a badge id defined twice", field: "badges[1].id",
            draft: badges([ChallengeBadge(id: "winner", title: "Winner", rule: .init(kind: .firstPlace)), ChallengeBadge(id: "winner", title: "Done", rule: .init(kind: .challengeCompleted))])),
        BrokenRule(rule: "a blank badge title", field: "badges[0].title", draft: badges([ChallengeBadge(id: "winner", title: "  ", rule: .init(kind: .firstPlace))])),
        BrokenRule(rule: "an icon that is not a name", field: "badges[0].icon", draft: badges([ChallengeBadge(id: "winner", title: "Winner", icon: "<svg>", rule: .init(kind: .firstPlace))])),
        BrokenRule(rule: "a streak badge without a threshold", field: "badges[0].rule.threshold", draft: badges([ChallengeBadge(id: "week", title: "Week", rule: .init(kind: .streak))])),
        BrokenRule(rule: "a streak badge's threshold out of range", field: "badges[0].rule.threshold", draft: badges([ChallengeBadge(id: "week", title: "Week", rule: .init(kind: .streak, threshold: 0))])),
        BrokenRule(rule: "a threshold on a completion badge", field: "badges[0].rule.threshold", draft: badges([ChallengeBadge(id: "done", title: "Done", rule: .init(kind: .challengeCompleted, threshold: 3))])),
        BrokenRule(rule: "a window on a streak badge", field: "badges[0].rule.window", draft: badges([ChallengeBadge(id: "week", title: "Week", rule: .init(kind: .streak, threshold: 7, window: .week))])),
        BrokenRule(
            rule: "first place outside a competition", field: "badges[0].rule.kind",
            draft: with(Fixtures.habit) { $0.badges = [ChallengeBadge(id: "winner", title: "Winner", rule: .init(kind: .firstPlace))] }),
        BrokenRule(
            rule: "a completion badge on a chore", field: "badges[0].rule.kind",
            draft: with(Fixtures.chore) { $0.badges = [ChallengeBadge(id: "done", title: "Done", rule: .init(kind: .challengeCompleted))] }, context: Fixtures.member),
        BrokenRule(
            rule: "more than ten badges", field: "badges",
            draft: badges((1...11).map { (days: Int) in ChallengeBadge(id: "streak-\(days)", title: "Streak \(days)", rule: .init(kind: .streak, threshold: days)) })),
    ]

    /// The competition fixture naming `badges` of its own.
    static func badges(_ badges: [ChallengeBadge]) -> ChallengeDraft { with(Fixtures.competition) { $0.badges = badges } }
}

@Suite("Definition validation", .tags(.unit), .kind(.unit))
struct ValidationTests {
    @Test("a valid draft of each kind has no errors and builds with its kind's defaults")
    func validDrafts() throws {
        for (draft, context) in [
            (Fixtures.competition, Fixtures.user), (Fixtures.habit, Fixtures.user), (Fixtures.chore, Fixtures.member),
            (Fixtures.weekly, Fixtures.user), (Fixtures.curated(), DraftContext.content),
        ] {
            #expect(draft.validate(context).isEmpty, "\(draft.kind): \(draft.validate(context))")
        }
        let id = UUID()
        let competition = try Fixtures.competition.build(challengeID: id, version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.user)
        #expect(competition.durationDays == 7)
        #expect(competition.tasks == [ChallengeTask(taskID: "total", title: "Most water this week", kind: .quantity, unit: "litres")])
        #expect(competition.rules.failure.mode == .none)
        #expect(competition.category == "competition")
        #expect(competition.visibility == .private)
        #expect(competition.ownerID == Fixtures.caller)

        let habit = try Fixtures.habit.build(challengeID: id, version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.user)
        #expect(habit.tasks.map(\.taskID) == ["done"])
        #expect(habit.visibility == .private)
        #expect(habit.rules.checkInGraceMinutes == 1440)
        #expect(habit.durationDays == nil)

        let chore = try Fixtures.chore.build(challengeID: id, version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.member)
        #expect(chore.tasks.count == 1)
        #expect(chore.tasks[0].kind == .checkbox)
        #expect(chore.tasks[0].points == 3)
        #expect(chore.tasks[0].cadence == Cadence(kind: .weekdays, weekdays: [.monday, .thursday]))
        #expect(chore.visibility == .group)
        #expect(chore.rules.points.kind == .perTask)
        #expect(chore.chore?.assigneeID == Fixtures.housemate)
    }

    @Test("a competition names badges of its own: kept on the definition, trimmed; an edit with none removes them")
    func ownBadges() throws {
        let winner = ChallengeBadge(id: "winner", title: " Water Cup winner ", description: "First in the cup.", icon: "trophy", rule: .init(kind: .firstPlace, window: .week))
        let streak = ChallengeBadge(id: "five-days", title: "Five days in a row", rule: .init(kind: .streak, threshold: 5))
        var draft = Fixtures.competition
        draft.badges = [winner, streak]
        #expect(draft.validate(Fixtures.user).isEmpty, "\(draft.validate(Fixtures.user))")
        let definition = try draft.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.user)
        #expect(definition.badges?.map(\.title) == ["Water Cup winner", "Five days in a row"])
        #expect(ChallengeDraft(definition).badges == definition.badges, "an edit starts from the badges named")
        let cleared = ChallengePatch(fields: DraftFields(badges: [])).applied(to: ChallengeDraft(definition))
        #expect(try cleared.build(challengeID: UUID(), version: 2, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.user).badges == nil)
    }

    @Test("a chore's points default to 1")
    func chorePointsDefault() throws {
        var draft = Fixtures.chore
        draft.chore?.points = nil
        let chore = try draft.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.member)
        #expect(chore.tasks[0].points == 1)
    }

    @Test("units: known spellings are normalised, custom units are kept")
    func units() throws {
        var draft = Fixtures.competition
        draft.competition?.unit = "Liters"
        let definition = try draft.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.user)
        #expect(definition.competition?.unit == "litres")
        #expect(definition.tasks[0].unit == "litres")
        #expect(Units.canonical("pushups") == "push-ups")
        #expect(Units.canonical("laps of the pond") == "laps of the pond")
        #expect(Units.isKnown("km"))
        #expect(!Units.isKnown("laps"))
    }

    @Test("each broken rule is reported with the path of its field", arguments: BrokenRule.all)
    func brokenRule(_ broken: BrokenRule) {
        let errors = broken.draft.validate(broken.context)
        #expect(errors.contains { $0.field == broken.field }, "expected \(broken.field), got \(errors)")
        #expect(errors.allSatisfy { !$0.message.isEmpty })
    }

    @Test("a broken rule is reported alone: no other field is blamed")
    func brokenRulesAreIsolated() {
        // Rules whose fix is unambiguous must not drag other fields in.
        for broken in BrokenRule.all where broken.rule != "a user cannot create curated challenges" {
            let fields = Set(broken.draft.validate(broken.context).map(\.field))
            #expect(fields == [broken.field], "\(broken.rule): \(fields)")
        }
    }

    @Test("every broken rule of a draft is reported at once")
    func allAtOnce() throws {
        var draft = Fixtures.habit
        draft.name = ""
        draft.habit?.colour = "blue"
        draft.habit?.priority = 9
        draft.tasks = [Fixtures.task(.quantity, id: "Bad", target: -1)]
        draft.rules = RulesDraft(failure: FailureRule(mode: .strict), streak: StreakRule(freezesPerMonth: 9))
        let fields = Set(draft.validate(Fixtures.user).map(\.field))
        #expect(
            fields == [
                "name", "habit.colour", "habit.priority", "tasks[0].taskID", "tasks[0].unit", "tasks[0].target", "rules.failure.mode",
                "rules.streak.freezesPerMonth",
            ])
        let error = try #require(throws: ChallengesError.self) {
            try draft.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: nil, context: Fixtures.user)
        }
        #expect(error == .brokenRules(draft.validate(Fixtures.user)))
        // The API answers with every broken rule in one problem document.
        let problem = ChallengesProblems.problem(for: error)
        #expect(problem.status == .unprocessableContent)
        #expect(problem.type == Problem.typeBase + "validation")
        #expect(problem.detail == "The definition breaks 8 rule(s).")
        #expect(problem.errors?.count == 8)
    }

    @Test("membership is checked on creation but not on edits that leave the group and the chore alone")
    func membershipChecks() {
        var draft = Fixtures.chore
        draft.chore?.assigneeID = Fixtures.stranger
        #expect(draft.validate(Fixtures.member).map(\.field) == ["chore.assigneeID"])
        let edit = DraftContext(source: .user(Fixtures.caller), groupMembers: [Fixtures.caller], checksMembership: false)
        #expect(draft.validate(edit).isEmpty)
    }

    @Test("open-ended definitions: habits, chores, weekly challenges and curated programmes only")
    func openEnded() {
        #expect(BrokenRule.failure(FailureRule(mode: .none), durationDays: nil).validate(.content).isEmpty)
        var weekly = Fixtures.weekly
        weekly.durationDays = nil
        #expect(weekly.validate(Fixtures.user).isEmpty)
        // Open-ended allows weekly and monthly cadences.
        #expect(BrokenRule.cadence(Cadence(kind: .monthly), durationDays: nil).validate(.content).isEmpty)
        #expect(BrokenRule.cadence(Cadence(kind: .weekly), durationDays: 7).validate(.content).isEmpty)
        #expect(BrokenRule.cadence(Cadence(kind: .monthly), durationDays: 28).validate(.content).isEmpty)
    }

    @Test("the last supported dates and instants are accepted")
    func lastSupportedDates() {
        var competition = Fixtures.competition
        competition.competition?.startsAt = Fixtures.instant("2200-12-24T10:00:00Z")
        competition.competition?.endsAt = Fixtures.instant("2200-12-31T10:00:00Z")
        #expect(competition.validate(Fixtures.user).isEmpty)
        competition.competition?.startsAt = Fixtures.instant("1970-01-01T12:00:00Z")
        competition.competition?.endsAt = Fixtures.instant("1970-01-08T12:00:00Z")
        #expect(competition.validate(Fixtures.user).isEmpty)
        var chore = Fixtures.chore
        chore.chore?.firstDueOn = LocalDate("2200-12-31")!
        #expect(chore.validate(Fixtures.member).isEmpty)
        chore.chore?.firstDueOn = LocalDate("1970-01-01")!
        #expect(chore.validate(Fixtures.member).isEmpty)
        var habit = Fixtures.habit
        habit.durationDays = 365
        #expect(habit.validate(DraftContext(source: .user(Fixtures.caller), today: LocalDate("2200-01-01"))).isEmpty)
        #expect(habit.validate(DraftContext(source: .user(Fixtures.caller), today: LocalDate("2200-01-02"))).map(\.field) == ["durationDays"])
        // The latest local date anywhere is the date at UTC+14.
        #expect(VersionSchedule.latestDate(at: Fixtures.instant("2026-06-01T10:00:00Z")) == LocalDate("2026-06-02"))
    }

    @Test("request bodies with far-future dates are refused at the field, before any calendar arithmetic")
    func farFutureBodies() throws {
        func fields(_ json: String) throws -> [String] {
            let problem = try #require(throws: Problem.self) { _ = try StrictJSONDecoder.decode(ChallengeDraft.self, from: Data(json.utf8)) }
            #expect(problem.status == .unprocessableContent)
            return problem.errors?.map(\.field) ?? []
        }
        let competition = #"""
            {"kind":"competition","name":"x","competition":{"startsAt":"9999-12-25T00:00:00Z","endsAt":"9999-12-31T23:59:59Z",
             "timeZone":"Europe/Rome","unit":"litres"}}
            """#
        #expect(try fields(competition) == ["competition.startsAt"])
        let ending = #"{"kind":"competition","name":"x","competition":{"startsAt":"2026-12-25T00:00:00Z","endsAt":"10000-01-01T00:00:00Z","timeZone":"Europe/Rome","unit":"litres"}}"#
        #expect(try fields(ending) == ["competition.endsAt"])
        let chore = #"{"kind":"chore","name":"x","chore":{"firstDueOn":"9999-12-31","recurrence":{"kind":"daily"}}}"#
        #expect(try fields(chore) == ["chore.firstDueOn"])
    }

    @Test("NUL characters in a draft are a 400 naming the field")
    func nulCharacters() throws {
        let json = #"{"kind":"habit","name":"Guitar\u0000","habit":{"notes":"ok"},"tasks":[{"taskID":"a","title":"\u0000","kind":"checkbox"}]}"#
        let problem = try #require(throws: Problem.self) { _ = try StrictJSONDecoder.decode(ChallengeDraft.self, from: Data(json.utf8)) }
        #expect(problem.status == .badRequest)
        #expect(problem.errors?.map(\.field) == ["name", "tasks[0].title"])
    }

    @Test("request bodies: unknown fields, wrong types and malformed JSON are refused with the field named")
    func decoding() throws {
        func problem(_ json: String) throws -> Problem {
            try #require(throws: Problem.self) { _ = try StrictJSONDecoder.decode(ChallengeDraft.self, from: Data(json.utf8)) }
        }
        let unknown = try problem(#"{"kind":"habit","name":"x","tasks":[{"taskID":"a","title":"A","kind":"checkbox","colour":"red"}]}"#)
        #expect(unknown.errors?.map(\.field) == ["tasks[0].colour"])
        let wrongType = try problem(#"{"kind":"habit","name":"x","durationDays":"thirty"}"#)
        #expect(wrongType.errors?.map(\.field) == ["durationDays"])
        let badEnum = try problem(#"{"kind":"habit","name":"x","difficulty":"impossible"}"#)
        #expect(badEnum.errors?.map(\.field) == ["difficulty"])
        let missing = try problem(#"{"name":"x"}"#)
        #expect(missing.errors?.map(\.field) == ["kind"])
        let badDate = try problem(#"{"kind":"chore","name":"x","chore":{"firstDueOn":"tomorrow","recurrence":{"kind":"none"}}}"#)
        #expect(badDate.errors?.map(\.field) == ["chore.firstDueOn"])
        let malformed = try problem("{oops")
        #expect(malformed.status == .badRequest)
        let patch = try #require(throws: Problem.self) {
            _ = try StrictJSONDecoder.decode(ChallengePatch.self, from: Data(#"{"kind":"chore"}"#.utf8))
        }
        #expect(patch.errors?.map(\.field) == ["kind"])
    }
}
