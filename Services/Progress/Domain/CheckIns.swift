import Foundation
import SurgeContracts

/// One change a user makes to a task on one day.
public struct CheckIn: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        /// Tick or untick a checkbox task.
        case setDone(Bool)
        /// Log an amount of a quantity task; `series` is 001's series number (defaults to the reps logged).
        case log(quantity: Double, series: Int?)
        /// Take a logged amount back.
        case removeLog(quantity: Double, rewardedQuantity: Double, points: Int)
        /// Attach a photo to a photo task (marks it done).
        case photo(UUID)
    }

    public var taskID: String
    public var action: Action
    public var happenedAt: Date

    public init(taskID: String, action: Action, happenedAt: Date) {
        self.taskID = taskID
        self.action = action
        self.happenedAt = happenedAt
    }
}

extension CheckIn.Action {
    /// What the check-in log row records it as; `applied` is false for a tick that a later one already superseded.
    public func logName(applied: Bool) -> String {
        switch self {
        case .setDone(let done): applied ? (done ? "done" : "undone") : "superseded"
        case .log: "logged"
        case .removeLog: "removed"
        case .photo: "photo"
        }
    }

    /// Whether it takes progress back (an untick, a removed amount), announced as `CheckInUndone`; the others add to
    /// it, announced as `CheckInRecorded`, and only they can newly meet a week's goal.
    public var takesBack: Bool {
        switch self {
        case .setDone(false), .removeLog: true
        case .setDone(true), .log, .photo: false
        }
    }

    /// The tick a `setDone` sets.
    public var done: Bool? {
        if case .setDone(let done) = self { done } else { nil }
    }

    /// The amount logged, or taken back.
    public var quantity: Double? {
        switch self {
        case .log(let quantity, _), .removeLog(let quantity, _, _): quantity
        case .setDone, .photo: nil
        }
    }

    public var photoID: UUID? {
        if case .photo(let id) = self { id } else { nil }
    }
}

/// What a check-in did.
public struct CheckInResult: Sendable, Equatable {
    /// False when an older tick or untick arrived after a newer one: the newer state stands.
    public var applied: Bool
    /// A tick of a task already done that day: nothing changed, so there is no check-in to record or announce (the
    /// record only keeps a later `happenedAt` as its last change, so an older untick arriving later still loses).
    public var unchanged = false
    public var pointsDelta: Int
    public var reason: PointsReason?
    /// Repetitions beyond the daily cap: logged, not rewarded.
    public var excess: Double?
    /// The part of a logged amount that earned points (series rule).
    public var rewardedQuantity: Double
    public var taskComplete: Bool
    public var dayComplete: Bool
}

/// Applies check-ins to a day record and credits points, touching nothing but that day.
public enum CheckInEngine {
    public struct Context: Sendable {
        public var definition: JudgingDefinition
        public var dailyGoal: Int
        /// The attempt's judged streak (for the series streak multiplier).
        public var streak: Int
        /// The member's points from curated challenges: their level, which sets the anti-cheat cap.
        public var levelPoints: Int

        public init(definition: JudgingDefinition, dailyGoal: Int, streak: Int, levelPoints: Int) {
            self.definition = definition
            self.dailyGoal = dailyGoal
            self.streak = streak
            self.levelPoints = levelPoints
        }
    }

    public static func apply(_ checkIn: CheckIn, to record: inout DayRecord, context: Context) throws(ProgressError) -> CheckInResult {
        let definition = context.definition
        guard let task = definition.tasks.first(where: { $0.taskID == checkIn.taskID }) else {
            throw .invalidField("taskID", "is not a task of this challenge")
        }
        var progress = record.tasks[task.taskID] ?? TaskProgress()
        var pointsDelta = 0
        var reason: PointsReason?
        var excess: Double?
        var rewarded = 0.0
        if case .setDone(true) = checkIn.action, task.kind == .checkbox, progress.done {
            let later = progress.changedAt.map { $0 < checkIn.happenedAt } ?? true
            if later {
                progress.changedAt = checkIn.happenedAt
                record.tasks[task.taskID] = progress
            }
            return CheckInResult(
                applied: later, unchanged: true, pointsDelta: 0, reason: nil, excess: nil, rewardedQuantity: 0, taskComplete: true,
                dayComplete: Requirements.isComplete(record, definition: definition, date: record.date, dailyGoal: context.dailyGoal) ?? false)
        }
        switch checkIn.action {
        case .setDone, .photo:
            // Ticks, unticks and photos: the latest happenedAt wins, so an older change arriving late loses.
            if let changedAt = progress.changedAt, changedAt > checkIn.happenedAt {
                return CheckInResult(
                    applied: false, pointsDelta: 0, reason: nil, excess: nil, rewardedQuantity: 0,
                    taskComplete: Requirements.isSatisfied(task, progress, dailyGoal: context.dailyGoal),
                    dayComplete: Requirements.isComplete(record, definition: definition, date: record.date, dailyGoal: context.dailyGoal) ?? false)
            }
        case .log, .removeLog:
            break
        }
        switch (checkIn.action, task.kind) {
        case (.setDone(let done), .checkbox):
            progress.done = done
            progress.changedAt = checkIn.happenedAt
        case (.setDone(false), .photo):
            progress.done = false
            progress.photoID = nil
            progress.changedAt = checkIn.happenedAt
        case (.photo(let photoID), .photo):
            progress.done = true
            progress.photoID = photoID
            progress.changedAt = checkIn.happenedAt
        case (.log(let quantity, let seriesNumber), .quantity):
            guard quantity > 0, quantity <= 1_000_000 else {
                throw .invalidField("quantity", "must be greater than 0 and at most 1000000")
            }
            if let seriesNumber, !(1...10_000).contains(seriesNumber) {
                throw .invalidField("series", "must be an integer from 1 to 10000")
            }
            progress.quantity += quantity
            rewarded = quantity
            if definition.rules.points.kind == .series, let formula = definition.rules.points.series {
                let level = Points.level(points: context.levelPoints, thresholds: formula.levelThresholds)
                if let cap = Points.dailyCap(dailyGoal: context.dailyGoal, level: level, bands: formula.capBands) {
                    rewarded = min(quantity, max(0, cap - progress.rewardedQuantity))
                }
                if rewarded < quantity { excess = quantity - rewarded }
                progress.series += 1
                let points = rewarded > 0
                    ? Points.series(formula, reps: rewarded, seriesNumber: seriesNumber ?? Int(quantity), streak: context.streak) : 0
                progress.rewardedQuantity += rewarded
                progress.points += points
                pointsDelta = points
                reason = .series
            }
        case (.removeLog(let quantity, let rewardedQuantity, let points), .quantity):
            progress.quantity = max(0, progress.quantity - quantity)
            progress.rewardedQuantity = max(0, progress.rewardedQuantity - rewardedQuantity)
            if definition.rules.points.kind == .series {
                progress.points -= points
                pointsDelta = -points
                reason = points == 0 ? nil : .correction
            }
        default:
            throw .invalidField("taskID", "a \(task.kind.rawValue) task cannot take this check-in")
        }
        let complete = Requirements.isSatisfied(task, progress, dailyGoal: context.dailyGoal)
        if definition.rules.points.kind == .perTask {
            let deserved = complete ? (task.points ?? definition.rules.points.pointsPerTask ?? 0) : 0
            pointsDelta = deserved - progress.points
            progress.points = deserved
            reason = pointsDelta > 0 ? .task : (pointsDelta < 0 ? .correction : nil)
        }
        record.tasks[task.taskID] = progress
        return CheckInResult(
            applied: true, pointsDelta: pointsDelta, reason: reason, excess: excess, rewardedQuantity: rewarded, taskComplete: complete,
            dayComplete: Requirements.isComplete(record, definition: definition, date: record.date, dailyGoal: context.dailyGoal) ?? false)
    }
}
