import Foundation
import Hummingbird
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeRuntime

struct TaskView: Codable, Sendable {
    var taskID: String
    var title: String
    var kind: TaskKind
    var unit: String?
    var target: Double?
    var done: Bool
    var quantity: Double?
    var photoID: UUID?
    var complete: Bool
}

struct DayView: Codable, Sendable {
    var date: LocalDate
    /// Days that counted so far: time off does not advance it.
    var dayNumber: Int
    var complete: Bool
    /// A day off (a pause, a vacation, a rest weekday or a skip day): nothing is asked, check-ins are refused.
    var paused: Bool
    var tasks: [TaskView]
    var remainingTaskIDs: [String]
}

struct StatsView: Codable, Sendable {
    var currentStreak: Int
    var bestStreak: Int
    var streakPeriod: StreakPeriod
    var daysCompleted: Int
    var daysMissed: Int
    /// Days completed out of the challenge's length (absent for open-ended habits).
    var progressPercent: Int?
    var points: Int
    var freezesLeft: Int
    /// The last judged period was saved by a freeze (001's snowflake).
    var freezeActive: Bool
    /// Judged periods that were time off: neither completed nor missed.
    var daysPaused: Int
    /// Skip days of this month's budget still unspent (`rules.pause.skipDaysPerMonth`); absent when the rules have none.
    var skipDaysLeft: Int?
    /// Series challenges: the member's level, from points earned in curated challenges only.
    var level: Int?
    /// Series challenges: repetitions a day that earn points at that level (001's anti-cheat cap); more are kept
    /// but earn nothing.
    var dailyCap: Double?
}

/// The current week of a weekly-streak attempt (001's weekly goal and Sunday summary).
struct WeekView: Codable, Sendable {
    var weekStart: LocalDate
    var unit: String?
    var target: Double?
    var done: Double
    var percent: Int?
    var goalMet: Bool
    /// Daily goals to offer when the week ends (`WeekProgress`): maintain, +10 %, +20 % after a met goal; -10, -20, -30 % otherwise.
    var suggestedDailyGoals: [Int]
}

/// A stretch of time off.
struct PauseView: Codable, Sendable {
    var pauseID: UUID
    var kind: PauseKind
    var from: LocalDate
    /// The last day off; absent while it lasts until resumed.
    var through: LocalDate?
}

struct AttemptView: Codable, Sendable {
    var attemptID: UUID
    var challengeID: UUID
    var challengeName: String
    var kind: ChallengeKind
    var status: String
    var attemptNumber: Int
    var startedOn: LocalDate
    var endsOn: LocalDate?
    /// "Day 23 of 75": days that counted so far (time off does not advance it; a fixed-length challenge still ends on
    /// `endsOn`).
    var dayNumber: Int
    var durationDays: Int?
    var timeZone: String
    var endedOn: LocalDate?
    var failureReason: String?
    var missedTaskIDs: [String]
    var stats: StatsView
    var today: DayView?
    var week: WeekView?
    /// Whether pausing stops the streak's clock (`pausesStreak`), is refused, or only silences reminders.
    var pauseMode: PauseMode
    /// Every pause, vacation and skip day of the attempt, oldest first.
    var pauses: [PauseView]
    /// The rules' rest weekdays (days off every week).
    var restWeekdays: [Weekday]
}

struct CalendarDay: Codable, Sendable {
    /// before, completed, missed, frozen, kept, rest, paused, open, closed, future, after. Days off not judged yet
    /// (today, or planned ones) are paused too. `open` only while check-ins for the day are accepted; every day of a
    /// judged week shows the week's verdict; `closed` is a day past its window without a verdict of its own.
    var date: LocalDate
    var status: String
    var tasksDone: Int
}

struct HistoryDay: Codable, Sendable {
    var date: LocalDate
    /// Tasks with any activity that day (contribution-history intensity).
    var tasksDone: Int
    /// Time off: the attempt's day off, or (across everything) a day every attempt running then took off.
    var paused: Bool
}

struct PointsSummary: Codable, Sendable, ResponseEncodable {
    var total: Int
    /// Points from curated challenges: they alone set the level (and the anti-cheat cap of series challenges);
    /// points a user's own challenges award count everywhere else.
    var levelPoints: Int
    var thisWeek: Int
    var thisMonth: Int
    var weekStart: LocalDate
    var monthStart: LocalDate
}

struct LedgerEntryView: Codable, Sendable {
    var entryID: UUID
    var points: Int
    var reason: PointsReason
    var localDate: LocalDate
    var challengeID: UUID?
    var attemptID: UUID?
    var groupID: UUID?
    var excessQuantity: Double?
    var awardedAt: Date
    /// The check-in behind the row (its `checkInID`, the log id a logged amount is removed by); absent for bonuses
    /// and chores.
    var checkIn: LedgerCheckIn?
}

/// What a ledger row's check-in did: which task, and for a logged amount how much of it earned points.
struct LedgerCheckIn: Codable, Sendable {
    var checkInID: UUID
    var taskID: String
    var action: String
    var quantity: Double?
    /// The part of `quantity` under the day's cap, which earned the points.
    var rewardedQuantity: Double?
}

extension LedgerEntryView {
    init(_ row: LedgerRow) {
        self.init(
            entryID: row.entryID, points: row.points, reason: row.reason, localDate: row.localDate, challengeID: row.challengeID,
            attemptID: row.attemptID, groupID: row.groupID, excessQuantity: row.excessQuantity, awardedAt: row.awardedAt,
            checkIn: row.checkIn.map {
                LedgerCheckIn(checkInID: $0.checkInID, taskID: $0.taskID, action: $0.action, quantity: $0.quantity, rewardedQuantity: $0.rewardedQuantity)
            })
    }
}


struct AttemptResponse: ResponseCodable {
    var attempt: AttemptView
}

extension AttemptView {
    /// The live view: judged totals plus the open days (today, and days still inside their grace window) that are
    /// already complete, so ticking the last task shows the new streak at once.
    init(_ snapshot: AttemptSnapshot) {
        let attempt = snapshot.attempt
        let state = attempt.state
        let definition = snapshot.timeline.version(on: min(snapshot.today, attempt.endsOn ?? snapshot.today))
        let dailyGoal = snapshot.member.effectiveDailyGoal
        let period = definition.rules.streak.period
        let active = state.status == .active
        let timeOff = state.timeOff(definition)
        let live = LiveStreak(
            state, startedOn: attempt.startedOn, endsOn: attempt.endsOn, timeline: snapshot.timeline, today: snapshot.today, dailyGoal: dailyGoal,
            openRecords: snapshot.openRecords)
        let liveStreak = live.current
        var week: WeekView?
        if period == .week {
            let progress = WeekProgress(
                weekStart: snapshot.today.startOfWeek, startedOn: attempt.startedOn, endOn: attempt.endsOn, timeOff: timeOff,
                records: snapshot.openRecords, definition: definition, dailyGoal: dailyGoal)
            week = WeekView(
                weekStart: progress.weekStart, unit: progress.unit, target: progress.target, done: progress.done, percent: progress.percent,
                goalMet: progress.goalMet, suggestedDailyGoals: progress.suggestedDailyGoals)
        }
        let completed = state.periodsCompleted + live.openCompleted
        let level = definition.rules.points.series.map { Points.level(points: snapshot.levelPoints, thresholds: $0.levelThresholds) }
        let stats = StatsView(
            currentStreak: active ? liveStreak : state.currentStreak, bestStreak: max(state.bestStreak, active ? liveStreak : 0),
            streakPeriod: period, daysCompleted: completed, daysMissed: state.periodsMissed,
            progressPercent: definition.durationDays.map { min(100, Int((Double(completed) / Double($0) * 100).rounded(.down))) },
            points: state.points, freezesLeft: Self.freezesLeft(snapshot),
            freezeActive: state.judgedThrough.flatMap { snapshot.openRecords[$0]?.outcome } == .frozen,
            daysPaused: state.periodsPaused, skipDaysLeft: PausePolicy.skipDaysLeft(state, rule: definition.pauseRule, today: snapshot.today),
            level: level, dailyCap: level.flatMap { level in
                definition.rules.points.series.flatMap { Points.dailyCap(dailyGoal: dailyGoal, level: level, bands: $0.capBands) }
            })

        var today: DayView?
        if active, snapshot.today >= attempt.startedOn, snapshot.today <= (attempt.endsOn ?? snapshot.today) {
            let record = snapshot.openRecords[snapshot.today]
            let tasks = definition.tasks.map { task in
                let progress = record?.tasks[task.taskID]
                return TaskView(
                    taskID: task.taskID, title: task.title, kind: task.kind, unit: task.unit,
                    target: Requirements.target(of: task, dailyGoal: dailyGoal), done: progress?.done ?? false,
                    quantity: task.kind == .quantity ? (progress?.quantity ?? 0) : nil, photoID: progress?.photoID,
                    complete: Requirements.isSatisfied(task, progress, dailyGoal: dailyGoal))
            }
            let dayTaskIDs = Set(Requirements.dayTasks(definition, on: snapshot.today).map(\.taskID))
            today = DayView(
                date: snapshot.today, dayNumber: timeOff.dayNumber(of: snapshot.today, startedOn: attempt.startedOn),
                complete: Requirements.isComplete(record, definition: definition, date: snapshot.today, dailyGoal: dailyGoal) ?? true,
                paused: timeOff.isOff(snapshot.today), tasks: tasks,
                remainingTaskIDs: timeOff.isOff(snapshot.today) ? [] : tasks.filter { dayTaskIDs.contains($0.taskID) && !$0.complete }.map(\.taskID))
        }
        self.init(
            attemptID: attempt.id, challengeID: attempt.challengeID, challengeName: definition.name, kind: attempt.kind,
            status: state.status.rawValue, attemptNumber: attempt.attemptNumber, startedOn: attempt.startedOn, endsOn: attempt.endsOn,
            dayNumber: Self.dayNumber(snapshot, definition: definition),
            durationDays: definition.durationDays, timeZone: snapshot.member.timeZone, endedOn: state.endedOn,
            failureReason: state.failureReason, missedTaskIDs: state.missedTaskIDs, stats: stats, today: today, week: week,
            pauseMode: definition.pauseRule.mode,
            pauses: state.pauses.map { PauseView(pauseID: $0.pauseID, kind: $0.kind, from: $0.from, through: $0.through) },
            restWeekdays: timeOff.restWeekdays.sorted())
    }

    /// The freezes the judge will have for the next period it judges: a new month's are there from its 1st, before
    /// anything in it is judged.
    static func freezesLeft(_ snapshot: AttemptSnapshot) -> Int {
        let attempt = snapshot.attempt
        guard attempt.state.status == .active,
            let next = Judge.nextPeriodEnd(
                attempt.state, startedOn: attempt.startedOn, endOn: attempt.endsOn, period: snapshot.timeline.latest.rules.streak.period)
        else { return attempt.state.freezesLeft }
        return Judge.freezesLeft(attempt.state, forPeriodEnding: next, perMonth: snapshot.timeline.version(on: next).rules.streak.freezesPerMonth)
    }

    /// "Day 3 of 7". A competition counts whole days from its start instant in its own zone, so a week from Monday
    /// 09:00 is days 1 to 7 (`durationDays`); anything else counts local dates from the first day.
    static func dayNumber(_ snapshot: AttemptSnapshot, definition: JudgingDefinition) -> Int {
        let attempt = snapshot.attempt
        if let competition = definition.competition, let duration = definition.durationDays {
            let calendar = LocalCalendar(zoneNamedOrUTC: competition.timeZone)
            let until = min(max(snapshot.now, competition.startsAt), competition.endsAt)
            return min(duration, calendar.wholeDays(from: competition.startsAt, to: until.addingTimeInterval(1)))
        }
        let date = min(snapshot.today, attempt.state.endedOn ?? snapshot.today)
        return attempt.state.timeOff(snapshot.timeline.version(on: date)).dayNumber(of: date, startedOn: attempt.startedOn)
    }
}
