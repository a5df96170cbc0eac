import Foundation

/// Someone started (or restarted) an attempt at a challenge, habit, competition or weekly challenge.
public struct AttemptStarted: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.attempt.started.v1", topic: .progress,
        summary: "A user started an attempt (a first start or a restart after failure) at a challenge.",
        emitted: """
            When `POST /v1/attempts` starts an attempt, and when `POST /v1/attempts/{attemptID}/restart` starts the \
            next one (then followed by `attempt.restarted`).
            """)

    public static let example = CloudEvent<AttemptStarted>.example(id: "6f3b8e1a-c042-4d97-b5a8-9e2d7c0f4b13", time: "2026-03-02T19:05:44.120Z") {
        AttemptStarted(
            attemptID: Example.readingAttempt, userID: Example.giulia, challengeID: Example.readingHabit, challengeVersion: 1, kind: .habit,
            attemptNumber: 1, startedOn: Example.date("2026-03-02"), timeZone: "Europe/Rome", groupID: nil, startedAt: $0)
    }

    public var attemptID: UUID
    public var userID: UUID
    public var challengeID: UUID
    public var challengeVersion: Int
    public var kind: ChallengeKind
    /// 1 for the first attempt at this challenge, 2 after one restart, ...
    public var attemptNumber: Int
    /// The user's local date of day 1.
    public var startedOn: LocalDate
    public var timeZone: String
    public var groupID: UUID?
    public var startedAt: Date

    public init(
        attemptID: UUID, userID: UUID, challengeID: UUID, challengeVersion: Int, kind: ChallengeKind, attemptNumber: Int,
        startedOn: LocalDate, timeZone: String, groupID: UUID?, startedAt: Date
    ) {
        self.attemptID = attemptID
        self.userID = userID
        self.challengeID = challengeID
        self.challengeVersion = challengeVersion
        self.kind = kind
        self.attemptNumber = attemptNumber
        self.startedOn = startedOn
        self.timeZone = timeZone
        self.groupID = groupID
        self.startedAt = startedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "attempts/\(attemptID.key)" }
}

public enum CheckInAction: String, Codable, Sendable, JSONSchemaEnum {
    /// A checkbox or photo task marked done.
    case done
    /// A quantity logged (summed per day).
    case logged
}

/// A check-in was accepted: a task marked done, a quantity logged or a photo attached, for one local day.
public struct CheckInRecorded: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.checkin.recorded.v1", topic: .progress,
        summary: "A task was marked done, a quantity logged or a photo attached for one of the user's local days.",
        emitted: """
            When `PUT /v1/attempts/{attemptID}/tasks/{taskID}` marks a task done, `POST \
            /v1/attempts/{attemptID}/tasks/{taskID}/logs` logs a quantity or `PUT \
            /v1/attempts/{attemptID}/tasks/{taskID}/photo` attaches a photo: once per check-in id (a retried request \
            emits nothing new), after the `points.awarded` the check-in earned, if any, and before the week's bonus \
            `points.awarded`, if it reached the week's goal.
            """)

    public static let example = CloudEvent<CheckInRecorded>.example(id: "4c9a1e7f-0b38-4d62-a5e1-8f7b3d0c9a24", time: "2026-03-12T20:47:01.534Z") {
        CheckInRecorded(
            checkInID: Example.id("fce46ebf-dc3d-405e-be54-629fe38163cb"), userID: Example.giulia, attemptID: Example.readingAttempt,
            challengeID: Example.readingHabit, challengeVersion: 1, kind: .habit, groupID: nil, taskID: "read", taskKind: .quantity, action: .logged,
            localDate: Example.date("2026-03-12"), dayNumber: 11, quantity: 12, unit: "pages", photoID: nil,
            happenedAt: Example.instant("2026-03-12T20:46:58.000Z"), recordedAt: $0, taskComplete: true, dayComplete: true, dayQuantity: 12,
            dayTarget: 10, currentStreak: 11)
    }

    public var checkInID: UUID
    public var userID: UUID
    public var attemptID: UUID
    public var challengeID: UUID
    public var challengeVersion: Int
    public var kind: ChallengeKind
    public var groupID: UUID?
    public var taskID: String
    public var taskKind: TaskKind
    public var action: CheckInAction
    public var localDate: LocalDate
    public var dayNumber: Int
    public var quantity: Double?
    public var unit: String?
    public var photoID: UUID?
    /// When it happened on the client (offline check-ins arrive later).
    public var happenedAt: Date
    public var recordedAt: Date
    /// Whether the task is now complete for its day (quantities reached their target).
    public var taskComplete: Bool
    /// Whether every task the day requires is now done.
    public var dayComplete: Bool
    /// Quantity tasks: the day's total for the task after this check-in (`quantity` is this check-in's amount).
    public var dayQuantity: Double?
    /// Quantity tasks judged day by day: the amount that completes the task for the day (the user's daily goal for a
    /// goal-based target). Absent for other tasks and in events from before it was carried.
    public var dayTarget: Double?
    /// The attempt's streak after this check-in, as its view shows it: the judged streak plus the open days (or, for
    /// weekly streaks, this week) already complete. Streak badges and milestones are earned from it when the check-in
    /// that completes the day reaches them, not a day later when the day is judged. Absent in events from before it was
    /// carried.
    public var currentStreak: Int?

    public init(
        checkInID: UUID, userID: UUID, attemptID: UUID, challengeID: UUID, challengeVersion: Int, kind: ChallengeKind,
        groupID: UUID?, taskID: String, taskKind: TaskKind, action: CheckInAction, localDate: LocalDate, dayNumber: Int,
        quantity: Double?, unit: String?, photoID: UUID?, happenedAt: Date, recordedAt: Date, taskComplete: Bool, dayComplete: Bool,
        dayQuantity: Double? = nil, dayTarget: Double? = nil, currentStreak: Int? = nil
    ) {
        self.checkInID = checkInID
        self.userID = userID
        self.attemptID = attemptID
        self.challengeID = challengeID
        self.challengeVersion = challengeVersion
        self.kind = kind
        self.groupID = groupID
        self.taskID = taskID
        self.taskKind = taskKind
        self.action = action
        self.localDate = localDate
        self.dayNumber = dayNumber
        self.quantity = quantity
        self.unit = unit
        self.photoID = photoID
        self.happenedAt = happenedAt
        self.recordedAt = recordedAt
        self.taskComplete = taskComplete
        self.dayComplete = dayComplete
        self.dayQuantity = dayQuantity
        self.dayTarget = dayTarget
        self.currentStreak = currentStreak
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "attempts/\(attemptID.key)/days/\(localDate)/tasks/\(taskID)" }
}

/// A check-in was taken back: a task unticked or a logged quantity removed.
public struct CheckInUndone: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.checkin.undone.v1", topic: .progress,
        summary: "A task was marked not done again, or a logged quantity was removed.",
        emitted: """
            When `PUT /v1/attempts/{attemptID}/tasks/{taskID}` marks a task not done again, or `DELETE \
            /v1/attempts/{attemptID}/logs/{logID}` removes a logged quantity (`undoesCheckInID` names it); after the \
            correcting `points.awarded`, if any.
            """)

    public static let example = CloudEvent<CheckInUndone>.example(id: "9e5d2b70-a4c1-4f83-8b6e-0d1f9c7a3e52", time: "2026-03-12T20:49:30.875Z") {
        CheckInUndone(
            checkInID: Example.id("b39cdebe-3e05-448a-be0d-0b7699422aa6"), undoesCheckInID: Example.id("fce46ebf-dc3d-405e-be54-629fe38163cb"),
            userID: Example.giulia, attemptID: Example.readingAttempt, challengeID: Example.readingHabit, kind: .habit, groupID: nil, taskID: "read",
            localDate: Example.date("2026-03-12"), quantity: 12, happenedAt: Example.instant("2026-03-12T20:49:30.000Z"), recordedAt: $0,
            dayComplete: false)
    }

    public var checkInID: UUID
    public var undoesCheckInID: UUID?
    public var userID: UUID
    public var attemptID: UUID
    public var challengeID: UUID
    public var kind: ChallengeKind
    public var groupID: UUID?
    public var taskID: String
    public var localDate: LocalDate
    public var quantity: Double?
    public var happenedAt: Date
    public var recordedAt: Date
    public var dayComplete: Bool

    public init(
        checkInID: UUID, undoesCheckInID: UUID?, userID: UUID, attemptID: UUID, challengeID: UUID, kind: ChallengeKind,
        groupID: UUID?, taskID: String, localDate: LocalDate, quantity: Double?, happenedAt: Date, recordedAt: Date,
        dayComplete: Bool
    ) {
        self.checkInID = checkInID
        self.undoesCheckInID = undoesCheckInID
        self.userID = userID
        self.attemptID = attemptID
        self.challengeID = challengeID
        self.kind = kind
        self.groupID = groupID
        self.taskID = taskID
        self.localDate = localDate
        self.quantity = quantity
        self.happenedAt = happenedAt
        self.recordedAt = recordedAt
        self.dayComplete = dayComplete
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "attempts/\(attemptID.key)/days/\(localDate)/tasks/\(taskID)" }
}

/// Whether a judged period (a day, or a week for weekly streaks) counted.
public enum PeriodOutcome: String, Codable, Sendable, JSONSchemaEnum {
    case completed
    case missed
    /// Missed, but a streak freeze kept the streak.
    case frozen
    /// Missed with some activity; the rule keeps the streak (001 WEEKLY-05).
    case kept
    /// Nothing was required that day.
    case rest
    /// Time off (a pause, a vacation, a rest weekday or a skip day): neither completed nor missed, the streak waits.
    case paused
}

/// A local day (or week) of an attempt was judged, after its check-in window closed. Carries the streak after it.
public struct DayJudged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.day.judged.v1", topic: .progress,
        summary: "A day (or week) of an attempt was judged when its check-in window closed: completed, missed, frozen, kept, rest or paused.",
        emitted: """
            When progress's judgement loop (every `JUDGEMENT_INTERVAL_MS`, 5 s by default) finds that a period's \
            check-in window has closed: the end of the user's local day (of Sunday, for weekly streaks) plus the \
            rules' `checkInGraceMinutes`. One per period and attempt, followed by the `streak.changed`, the \
            completion `points.awarded` and the `attempt.ended` the period causes.
            """)

    public static let example = CloudEvent<DayJudged>.example(id: "1b7f4d92-e6a0-4c35-9f28-c3e8a5d1b706", time: "2026-03-13T01:00:03.218Z") {
        DayJudged(
            userID: Example.giulia, attemptID: Example.readingAttempt, challengeID: Example.readingHabit, kind: .habit, groupID: nil, period: .day,
            localDate: Example.date("2026-03-12"), dayNumber: 11, outcome: .completed, missedTaskIDs: [], currentStreak: 11, bestStreak: 11,
            judgedAt: $0)
    }

    public var userID: UUID
    public var attemptID: UUID
    public var challengeID: UUID
    public var kind: ChallengeKind
    public var groupID: UUID?
    public var period: StreakPeriod
    /// The day judged, or the last day (Sunday) of the week judged.
    public var localDate: LocalDate
    public var dayNumber: Int
    public var outcome: PeriodOutcome
    /// Tasks that were required and not done.
    public var missedTaskIDs: [String]
    public var currentStreak: Int
    public var bestStreak: Int
    public var judgedAt: Date

    public init(
        userID: UUID, attemptID: UUID, challengeID: UUID, kind: ChallengeKind, groupID: UUID?, period: StreakPeriod,
        localDate: LocalDate, dayNumber: Int, outcome: PeriodOutcome, missedTaskIDs: [String], currentStreak: Int,
        bestStreak: Int, judgedAt: Date
    ) {
        self.userID = userID
        self.attemptID = attemptID
        self.challengeID = challengeID
        self.kind = kind
        self.groupID = groupID
        self.period = period
        self.localDate = localDate
        self.dayNumber = dayNumber
        self.outcome = outcome
        self.missedTaskIDs = missedTaskIDs
        self.currentStreak = currentStreak
        self.bestStreak = bestStreak
        self.judgedAt = judgedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "attempts/\(attemptID.key)/days/\(localDate)" }
}

public enum StreakChange: String, Codable, Sendable, JSONSchemaEnum {
    case extended, broken, frozen
}

/// A streak grew, broke, or was saved by a freeze.
public struct StreakChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.streak.changed.v1", topic: .progress,
        summary: "A streak was extended, broken, or kept by a streak freeze (with the freezes left this month).",
        emitted: """
            Right after the `day.judged` of a period that extends, breaks or freezes the streak, in the same \
            judgement.
            """)

    public static let example = CloudEvent<StreakChanged>.example(id: "d8c06a3e-5f19-4b72-a0d4-7e2b9f6c1a85", time: "2026-03-13T01:00:03.218Z") {
        StreakChanged(
            userID: Example.giulia, attemptID: Example.readingAttempt, challengeID: Example.readingHabit, kind: .habit, groupID: nil, period: .day,
            change: .extended, previous: 10, current: 11, best: 11, freezesLeft: 2, localDate: Example.date("2026-03-12"), changedAt: $0)
    }

    public var userID: UUID
    public var attemptID: UUID
    public var challengeID: UUID
    public var kind: ChallengeKind
    public var groupID: UUID?
    public var period: StreakPeriod
    public var change: StreakChange
    public var previous: Int
    public var current: Int
    public var best: Int
    public var freezesLeft: Int
    public var localDate: LocalDate
    public var changedAt: Date

    public init(
        userID: UUID, attemptID: UUID, challengeID: UUID, kind: ChallengeKind, groupID: UUID?, period: StreakPeriod,
        change: StreakChange, previous: Int, current: Int, best: Int, freezesLeft: Int, localDate: LocalDate, changedAt: Date
    ) {
        self.userID = userID
        self.attemptID = attemptID
        self.challengeID = challengeID
        self.kind = kind
        self.groupID = groupID
        self.period = period
        self.change = change
        self.previous = previous
        self.current = current
        self.best = best
        self.freezesLeft = freezesLeft
        self.localDate = localDate
        self.changedAt = changedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "attempts/\(attemptID.key)/streak" }
}

public enum AttemptEnd: String, Codable, Sendable, JSONSchemaEnum {
    case failed, completed, abandoned
}

/// An attempt ended: failed by its rules (with the rule broken), completed (with final stats), or abandoned.
public struct AttemptEnded: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.attempt.ended.v1", topic: .progress,
        summary: "An attempt failed (with the broken rule), was completed (with its final stats) or was abandoned.",
        emitted: """
            When progress's judgement loop (every `JUDGEMENT_INTERVAL_MS`, 5 s by default) judges a period that \
            fails the attempt or is its last (`failed`, `completed`); when `POST /v1/attempts/{attemptID}/abandon` \
            abandons it, or `POST /v1/attempts/{attemptID}/restart` restarts it while still active (`abandoned`); \
            and when a due judgement finds the challenge deleted (`abandoned`).
            """)

    public static let example = CloudEvent<AttemptEnded>.example(id: "a3e7c5b1-8d24-4f09-b6c2-5a0f8e3d7b91", time: "2026-03-16T23:00:02.391Z") {
        AttemptEnded(
            attemptID: Example.id("0ec854ea-b894-4677-b609-f01dc1143b38"), userID: Example.giulia, challengeID: Example.seventyFiveHard,
            kind: .curated, groupID: nil, attemptNumber: 1, end: .failed, endedOn: Example.date("2026-03-16"), dayNumber: 15,
            reason: "Missed 'Drink a gallon of water' on day 15 (2026-03-16). Any miss restarts the challenge at day 1.", missedTaskIDs: ["water"],
            daysCompleted: 14, bestStreak: 14, points: 1400, endedAt: $0)
    }

    public var attemptID: UUID
    public var userID: UUID
    public var challengeID: UUID
    public var kind: ChallengeKind
    public var groupID: UUID?
    public var attemptNumber: Int
    public var end: AttemptEnd
    /// The local date the attempt ended on (for failures: the day whose miss broke the rule).
    public var endedOn: LocalDate
    public var dayNumber: Int
    /// For failures: what broke, in words ("Missed 'Drink 3.8 litres of water' on day 15").
    public var reason: String?
    public var missedTaskIDs: [String]
    public var daysCompleted: Int
    public var bestStreak: Int
    public var points: Int
    public var endedAt: Date

    public init(
        attemptID: UUID, userID: UUID, challengeID: UUID, kind: ChallengeKind, groupID: UUID?, attemptNumber: Int, end: AttemptEnd,
        endedOn: LocalDate, dayNumber: Int, reason: String?, missedTaskIDs: [String], daysCompleted: Int, bestStreak: Int,
        points: Int, endedAt: Date
    ) {
        self.attemptID = attemptID
        self.userID = userID
        self.challengeID = challengeID
        self.kind = kind
        self.groupID = groupID
        self.attemptNumber = attemptNumber
        self.end = end
        self.endedOn = endedOn
        self.dayNumber = dayNumber
        self.reason = reason
        self.missedTaskIDs = missedTaskIDs
        self.daysCompleted = daysCompleted
        self.bestStreak = bestStreak
        self.points = points
        self.endedAt = endedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "attempts/\(attemptID.key)" }
}

/// A new attempt replaced a failed or abandoned one; the earlier attempt and its stats stay in the history.
public struct AttemptRestarted: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.attempt.restarted.v1", topic: .progress,
        summary: "A user restarted a challenge; the previous attempt stays in the history (the new attempt's attempt.started comes first).",
        emitted: """
            When `POST /v1/attempts/{attemptID}/restart` starts again after a failure or an abandon: in the same \
            transaction, after the old attempt's `attempt.ended` (`abandoned`, if it was still active) and the new \
            attempt's `attempt.started`.
            """)

    public static let example = CloudEvent<AttemptRestarted>.example(id: "5d1a9f3c-7b60-4e28-9a4d-e0c6b2f8d317", time: "2026-03-17T06:58:12.447Z") {
        AttemptRestarted(
            previousAttemptID: Example.id("0ec854ea-b894-4677-b609-f01dc1143b38"), attemptID: Example.id("5181454a-e7f8-4267-a82f-4e8ff8acc1bf"),
            userID: Example.giulia, challengeID: Example.seventyFiveHard, kind: .curated, attemptNumber: 2, restartedAt: $0)
    }

    public var previousAttemptID: UUID
    public var attemptID: UUID
    public var userID: UUID
    public var challengeID: UUID
    public var kind: ChallengeKind
    public var attemptNumber: Int
    public var restartedAt: Date

    public init(previousAttemptID: UUID, attemptID: UUID, userID: UUID, challengeID: UUID, kind: ChallengeKind, attemptNumber: Int, restartedAt: Date) {
        self.previousAttemptID = previousAttemptID
        self.attemptID = attemptID
        self.userID = userID
        self.challengeID = challengeID
        self.kind = kind
        self.attemptNumber = attemptNumber
        self.restartedAt = restartedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "attempts/\(attemptID.key)" }
}

public enum PointsReason: String, Codable, Sendable, JSONSchemaEnum {
    /// A task done (fixed points per task).
    case task
    /// A logged series (001's formula).
    case series
    /// A task undone: takes its points back.
    case correction
    /// A week's goal reached (001 WEEKLY-03).
    case weeklyGoalBonus
    /// A challenge (or a weekly challenge's week) completed (001 CHAL-02).
    case challengeBonus
    /// A household chore completed (004).
    case chore
}

/// A row of the points ledger. Leaderboards sum these per user per period (weeks and months of the group's zone
/// for households, using `awardedAt`).
public struct PointsAwarded: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.points.awarded.v1", topic: .progress,
        summary: "Points were awarded (or taken back by a correction), with the reason; one ledger row.",
        emitted: """
            When a check-in (see `checkin.recorded` and `checkin.undone`) earns or takes back points, or reaches or \
            leaves a week's goal (`weeklyGoalBonus`, a weekly challenge's `challengeBonus`, `correction`); when \
            progress's judgement loop (every `JUDGEMENT_INTERVAL_MS`, 5 s by default) judges the last period of a \
            completed challenge (`challengeBonus`); and when `POST /v1/chore-occurrences/{occurrenceID}/complete` \
            completes a chore (`chore`).
            """)

    public static let example = CloudEvent<PointsAwarded>.example(id: "f0b4e8a2-3c97-4d15-8e6b-a9d2c7f1e063", time: "2026-03-12T20:47:01.534Z") {
        PointsAwarded(
            entryID: Example.id("985c2b2c-295e-42d8-8222-e9c3385aabb7"), userID: Example.giulia, groupID: nil, challengeID: Example.readingHabit,
            attemptID: Example.readingAttempt, points: 10, reason: .task, localDate: Example.date("2026-03-12"), excessQuantity: nil,
            totalPoints: 1480, awardedAt: $0)
    }

    public var entryID: UUID
    public var userID: UUID
    public var groupID: UUID?
    public var challengeID: UUID?
    public var attemptID: UUID?
    public var points: Int
    public var reason: PointsReason
    /// The user's local date the points belong to.
    public var localDate: LocalDate
    /// Repetitions logged beyond the anti-cheat daily cap: shown, not rewarded.
    public var excessQuantity: Double?
    public var totalPoints: Int
    public var awardedAt: Date

    public init(
        entryID: UUID, userID: UUID, groupID: UUID?, challengeID: UUID?, attemptID: UUID?, points: Int, reason: PointsReason,
        localDate: LocalDate, excessQuantity: Double?, totalPoints: Int, awardedAt: Date
    ) {
        self.entryID = entryID
        self.userID = userID
        self.groupID = groupID
        self.challengeID = challengeID
        self.attemptID = attemptID
        self.points = points
        self.reason = reason
        self.localDate = localDate
        self.excessQuantity = excessQuantity
        self.totalPoints = totalPoints
        self.awardedAt = awardedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)/points/\(entryID.key)" }
}

public enum ChoreOccurrenceChange: String, Codable, Sendable, JSONSchemaEnum {
    case completed, overdue
}

/// A household chore's occurrence was completed (points to the completer; the next occurrence is due) or became
/// overdue (a flag, no penalty).
public struct ChoreOccurrenceChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.chore.occurrence.changed.v1", topic: .progress,
        summary: "A chore occurrence was completed (by whom, for how many points, when the next is due) or became overdue.",
        emitted: """
            When `POST /v1/chore-occurrences/{occurrenceID}/complete` completes an occurrence (`completed`, after \
            the completer's `points.awarded`), and when progress's judgement loop (every `JUDGEMENT_INTERVAL_MS`, 5 \
            s by default) finds a pending occurrence past its due time (`overdue`).
            """)

    public static let example = CloudEvent<ChoreOccurrenceChanged>.example(id: "7c2e0a9d-b5f3-4168-a7d0-4e9b1c8f2a36", time: "2026-03-14T10:22:31.904Z") {
        ChoreOccurrenceChanged(
            occurrenceID: Example.id("72e83f46-81ff-4ad8-a7dd-62f5e8e75a00"), choreID: Example.bathroomChore, groupID: Example.flat,
            title: "Clean the bathroom", change: .completed, assigneeID: Example.marco, completedBy: Example.marco, points: 20,
            dueOn: Example.date("2026-03-14"), dueAt: Example.instant("2026-03-14T17:00:00.000Z"), nextDueOn: Example.date("2026-03-21"),
            changedAt: $0, dueTime: Example.time("18:00"))
    }

    public var occurrenceID: UUID
    public var choreID: UUID
    public var groupID: UUID
    public var title: String
    public var change: ChoreOccurrenceChange
    public var assigneeID: UUID?
    public var completedBy: UUID?
    public var points: Int
    public var dueOn: LocalDate
    public var dueAt: Date
    public var nextDueOn: LocalDate?
    public var changedAt: Date
    /// The chore's due time on its due dates; absent for a chore due by the end of its day (and in events from before
    /// it was carried).
    public var dueTime: LocalTime?

    public init(
        occurrenceID: UUID, choreID: UUID, groupID: UUID, title: String, change: ChoreOccurrenceChange, assigneeID: UUID?,
        completedBy: UUID?, points: Int, dueOn: LocalDate, dueAt: Date, nextDueOn: LocalDate?, changedAt: Date, dueTime: LocalTime? = nil
    ) {
        self.occurrenceID = occurrenceID
        self.choreID = choreID
        self.groupID = groupID
        self.title = title
        self.change = change
        self.assigneeID = assigneeID
        self.completedBy = completedBy
        self.points = points
        self.dueOn = dueOn
        self.dueAt = dueAt
        self.nextDueOn = nextDueOn
        self.changedAt = changedAt
        self.dueTime = dueTime
    }

    public var partitionKey: String { groupID.key }
    public var subject: String { "chores/\(choreID.key)/occurrences/\(occurrenceID.key)" }
}

/// A pending chore occurrence with a due time reached its reminder lead time: its assignee is reminded before it is due.
public struct ChoreOccurrenceDueSoon: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.chore.occurrence.due-soon.v1", topic: .progress,
        summary: "A pending chore occurrence is due within its chore's reminder lead time (an hour by default).",
        emitted: """
            When progress's judgement loop (every `JUDGEMENT_INTERVAL_MS`, 5 s by default) finds a pending occurrence of a \
            chore with a due time whose due instant is `reminderLeadMinutes` away or less (`chore.reminderLeadMinutes`, \
            60 when absent; none when 0), once per occurrence and due instant; not when the due time has already passed.
            """)

    public static let example = CloudEvent<ChoreOccurrenceDueSoon>.example(id: "3f0d6a4e-2c1b-4e8a-9b7d-5a6c8e1f2b03", time: "2026-03-14T16:00:00.250Z") {
        ChoreOccurrenceDueSoon(
            occurrenceID: Example.id("72e83f46-81ff-4ad8-a7dd-62f5e8e75a00"), choreID: Example.bathroomChore, groupID: Example.flat,
            title: "Clean the bathroom", assigneeID: Example.marco, dueOn: Example.date("2026-03-14"), dueAt: Example.instant("2026-03-14T17:00:00.000Z"),
            dueTime: Example.time("18:00"), reminderLeadMinutes: 60, flaggedAt: $0)
    }

    public var occurrenceID: UUID
    public var choreID: UUID
    public var groupID: UUID
    public var title: String
    public var assigneeID: UUID?
    public var dueOn: LocalDate
    public var dueAt: Date
    /// The chore's due time on its due dates, in the household's zone.
    public var dueTime: LocalTime
    public var reminderLeadMinutes: Int
    public var flaggedAt: Date

    public init(
        occurrenceID: UUID, choreID: UUID, groupID: UUID, title: String, assigneeID: UUID?, dueOn: LocalDate, dueAt: Date, dueTime: LocalTime,
        reminderLeadMinutes: Int, flaggedAt: Date
    ) {
        self.occurrenceID = occurrenceID
        self.choreID = choreID
        self.groupID = groupID
        self.title = title
        self.assigneeID = assigneeID
        self.dueOn = dueOn
        self.dueAt = dueAt
        self.dueTime = dueTime
        self.reminderLeadMinutes = reminderLeadMinutes
        self.flaggedAt = flaggedAt
    }

    public var partitionKey: String { groupID.key }
    public var subject: String { "chores/\(choreID.key)/occurrences/\(occurrenceID.key)" }
}

public enum PauseKind: String, Codable, Sendable, JSONSchemaEnum {
    /// One attempt paused.
    case pause
    /// Everything the user does paused at once.
    case vacation
    /// One skip day of the monthly budget, spent on the day itself.
    case skipDay
}

/// An attempt was paused: days from `from` through `through` (open-ended when absent) are time off.
public struct AttemptPaused: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.attempt.paused.v1", topic: .progress,
        summary: "An attempt was paused (on its own, by a vacation, or for a skip day): no reminders; unless remindersOnly, days are neither completed nor missed.",
        emitted: """
            When `POST /v1/attempts/{attemptID}/pause` (`pause`) or `POST /v1/attempts/{attemptID}/skip-day` \
            (`skipDay`) takes time off one attempt, and when `POST /v1/me/vacation` pauses every active attempt \
            whose rules allow it (`vacation`).
            """)

    public static let example = CloudEvent<AttemptPaused>.example(id: "3f8b6d04-e2a9-4c71-b0e5-9d7a1c4f8b62", time: "2026-03-30T16:20:09.713Z") {
        AttemptPaused(
            pauseID: Example.id("fd5b3f10-c2da-48f8-a4cd-3ed1869da9cb"), attemptID: Example.readingAttempt, userID: Example.giulia,
            challengeID: Example.readingHabit, kind: .habit, groupID: nil, pauseKind: .vacation, from: Example.date("2026-04-03"),
            through: Example.date("2026-04-06"), remindersOnly: false, pausedAt: $0)
    }

    public var pauseID: UUID
    public var attemptID: UUID
    public var userID: UUID
    public var challengeID: UUID
    public var kind: ChallengeKind
    public var groupID: UUID?
    public var pauseKind: PauseKind
    /// The first local day off.
    public var from: LocalDate
    /// The last local day off; absent while the pause lasts until resumed.
    public var through: LocalDate?
    /// The challenge's days still count (a competition's time limit does not move): only reminders are silenced.
    public var remindersOnly: Bool
    public var pausedAt: Date

    public init(
        pauseID: UUID, attemptID: UUID, userID: UUID, challengeID: UUID, kind: ChallengeKind, groupID: UUID?, pauseKind: PauseKind,
        from: LocalDate, through: LocalDate?, remindersOnly: Bool, pausedAt: Date
    ) {
        self.pauseID = pauseID
        self.attemptID = attemptID
        self.userID = userID
        self.challengeID = challengeID
        self.kind = kind
        self.groupID = groupID
        self.pauseKind = pauseKind
        self.from = from
        self.through = through
        self.remindersOnly = remindersOnly
        self.pausedAt = pausedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "attempts/\(attemptID.key)/pauses/\(pauseID.key)" }
}

/// A pause ended early: the attempt counts again from `resumedOn`.
public struct AttemptResumed: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.attempt.resumed.v1", topic: .progress,
        summary: "A paused attempt was resumed: days count again from resumedOn (a pause that had not begun is cancelled).",
        emitted: """
            When `POST /v1/attempts/{attemptID}/resume` ends a pause, and when `DELETE /v1/me/vacation` resumes \
            every active attempt with a pause in progress or to come.
            """)

    public static let example = CloudEvent<AttemptResumed>.example(id: "b9a0c7e3-4d15-4f86-92b8-6e3f0d1a7c49", time: "2026-04-05T08:11:50.286Z") {
        AttemptResumed(
            pauseID: Example.id("fd5b3f10-c2da-48f8-a4cd-3ed1869da9cb"), attemptID: Example.readingAttempt, userID: Example.giulia,
            challengeID: Example.readingHabit, kind: .habit, groupID: nil, resumedOn: Example.date("2026-04-05"),
            pausedThrough: Example.date("2026-04-04"), resumedAt: $0)
    }

    public var pauseID: UUID
    public var attemptID: UUID
    public var userID: UUID
    public var challengeID: UUID
    public var kind: ChallengeKind
    public var groupID: UUID?
    /// The first local day that counts again.
    public var resumedOn: LocalDate
    /// The pause's last day off now; absent when the pause was cancelled before its first day.
    public var pausedThrough: LocalDate?
    public var resumedAt: Date

    public init(
        pauseID: UUID, attemptID: UUID, userID: UUID, challengeID: UUID, kind: ChallengeKind, groupID: UUID?, resumedOn: LocalDate,
        pausedThrough: LocalDate?, resumedAt: Date
    ) {
        self.pauseID = pauseID
        self.attemptID = attemptID
        self.userID = userID
        self.challengeID = challengeID
        self.kind = kind
        self.groupID = groupID
        self.resumedOn = resumedOn
        self.pausedThrough = pausedThrough
        self.resumedAt = resumedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "attempts/\(attemptID.key)/pauses/\(pauseID.key)" }
}
