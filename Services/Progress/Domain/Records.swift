import Foundation
import SurgeContracts

/// One task's progress on one local day.
public struct TaskProgress: Codable, Sendable, Equatable {
    /// Checkbox and photo tasks: ticked or not.
    public var done = false
    /// When the last applied tick or untick happened on the client: an older change arriving later loses.
    public var changedAt: Date?
    /// Quantity tasks: the sum of the day's logs.
    public var quantity = 0.0
    /// Series points: the part of `quantity` within the day's anti-cheat cap.
    public var rewardedQuantity = 0.0
    /// Series logged this day, numbered from 1.
    public var series = 0
    public var photoID: UUID?
    /// Points currently credited for this task on this day.
    public var points = 0

    public init() {}

    public var hasActivity: Bool { done || quantity > 0 }
}

/// An attempt's record of one local day: each task's progress and, once judged, the outcome.
public struct DayRecord: Codable, Sendable, Equatable {
    public var date: LocalDate
    public var tasks: [String: TaskProgress]
    public var outcome: PeriodOutcome?

    public init(date: LocalDate, tasks: [String: TaskProgress] = [:], outcome: PeriodOutcome? = nil) {
        self.date = date
        self.tasks = tasks
        self.outcome = outcome
    }

    public var hasActivity: Bool { tasks.values.contains { $0.hasActivity } }
}

public enum AttemptStatus: String, Codable, Sendable, CaseIterable {
    case active, failed, completed, abandoned
}

/// An attempt's running totals, kept incrementally: a check-in or a judgement changes them without reading history.
public struct AttemptState: Codable, Sendable, Equatable {
    public var status: AttemptStatus = .active
    /// The last day (or, for weekly streaks, the last Sunday) already judged.
    public var judgedThrough: LocalDate?
    /// When the window of the period ending `judgedThrough` closed: what a refused late check-in is told.
    public var judgedThroughClosedAt: Date?
    public var currentStreak = 0
    public var bestStreak = 0
    public var periodsCompleted = 0
    public var periodsMissed = 0
    public var periodsFrozen = 0
    /// Periods judged `paused`: time off, neither completed nor missed.
    public var periodsPaused = 0
    public var freezesLeft = 0
    /// The month (`YYYY-MM`) `freezesLeft` belongs to; a new month grants the rule's freezes again.
    public var freezeMonth: String?
    public var points = 0
    public var endedOn: LocalDate?
    public var failureReason: String?
    public var missedTaskIDs: [String] = []
    /// Pauses, vacations and skip days, in the order they were taken (`TimeOff`).
    public var pauses: [AttemptPause] = []

    public init() {}
}
