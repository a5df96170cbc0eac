import Foundation
import Logging
import Metrics
import PostgresNIO
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// Everything needed to show an attempt: its row, the definition in force today, the member, and the records of the
/// days still open (today, and any day whose grace window has not closed).
struct AttemptSnapshot: Sendable {
    var attempt: AttemptRow
    var timeline: DefinitionTimeline
    var member: Member
    var today: LocalDate
    var now: Date
    /// The member's points from curated challenges (their level), read for series challenges only.
    var levelPoints: Int
    /// Records from the last judged day (or the current week's Monday, if earlier) through today.
    var openRecords: [LocalDate: DayRecord]
}

/// A check-in as the API received it.
struct CheckInCommand: Sendable {
    enum Kind: Sendable {
        case setDone(Bool)
        case log(quantity: Double, series: Int?)
        case removeLog(UUID)
        case photo(UUID)
    }

    var checkInID: UUID
    var taskID: String
    var kind: Kind
    var happenedAt: Date?
    var date: LocalDate?
}

/// Runs each progress command in one transaction, with the events it causes written to the outbox.
struct ProgressRepository: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let clock: ServiceClock
    let logger: Logger

    var attempts: AttemptStore { AttemptStore(logger: logger) }
    var projections: Projections { Projections(logger: logger) }
    var ledger: LedgerStore { LedgerStore(logger: logger, outbox: outbox) }

    // MARK: Starting and ending attempts

    func start(_ challengeID: UUID, userID: UUID, trace: TraceContext) async throws -> AttemptSnapshot {
        try await client.transaction(logger: logger) { connection in
            let now = clock.now()
            let member = try await requireMember(userID, on: connection)
            guard let timeline = try await joinableTimeline(challengeID, userID: userID, on: connection) else {
                throw Problem.notFound("No such challenge.")
            }
            if let active = try await attempts.active(userID, challengeID: challengeID, on: connection) {
                throw Problem.conflict("already-started", "You already have an active attempt (\(active.id.key)) at this challenge.")
            }
            let number = try await attempts.previousAttempts(userID, challengeID: challengeID, on: connection) + 1
            let attempt = try await begin(timeline, member: member, number: number, now: now, trace: trace, on: connection)
            return try await snapshot(attempt, member: member, timeline: timeline, now: now, on: connection)
        }
    }

    /// Starts again after a failure or an abandon (an active attempt is abandoned first); earlier attempts stay.
    func restart(_ attemptID: UUID, userID: UUID, trace: TraceContext) async throws -> AttemptSnapshot {
        try await client.transaction(logger: logger) { connection in
            let now = clock.now()
            guard var previous = try await attempts.lock(attemptID, of: userID, on: connection) else { throw Problem.notFound("No such attempt.") }
            guard previous.state.status != .completed else {
                throw Problem.conflict("attempt-completed", "A completed attempt is archived; start the challenge again instead.")
            }
            let member = try await requireMember(userID, on: connection)
            guard let timeline = try await projections.timeline(previous.challengeID, on: connection) else { throw Problem.notFound("The challenge no longer exists.") }
            if previous.state.status == .active {
                try await abandon(&previous, member: member, now: now, trace: trace, on: connection)
            } else if try await attempts.active(userID, challengeID: previous.challengeID, on: connection) != nil {
                throw Problem.conflict("already-started", "You already have an active attempt at this challenge.")
            }
            let number = try await attempts.previousAttempts(userID, challengeID: previous.challengeID, on: connection) + 1
            let attempt = try await begin(timeline, member: member, number: number, now: now, trace: trace, on: connection)
            try await outbox.append(
                AttemptRestarted(
                    previousAttemptID: previous.id, attemptID: attempt.id, userID: userID, challengeID: previous.challengeID, kind: attempt.kind,
                    attemptNumber: number, restartedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
            return try await snapshot(attempt, member: member, timeline: timeline, now: now, on: connection)
        }
    }

    func abandon(_ attemptID: UUID, userID: UUID, trace: TraceContext) async throws -> AttemptSnapshot {
        try await client.transaction(logger: logger) { connection in
            let now = clock.now()
            guard var attempt = try await attempts.lock(attemptID, of: userID, on: connection) else { throw Problem.notFound("No such attempt.") }
            guard attempt.state.status == .active else { throw Problem.conflict("attempt-not-active", "Only an active attempt can be abandoned.") }
            let member = try await requireMember(userID, on: connection)
            guard let timeline = try await projections.timeline(attempt.challengeID, on: connection) else { throw Problem.notFound("The challenge no longer exists.") }
            try await abandon(&attempt, member: member, now: now, trace: trace, on: connection)
            return try await snapshot(attempt, member: member, timeline: timeline, now: now, on: connection)
        }
    }

    private func begin(
        _ timeline: DefinitionTimeline, member: Member, number: Int, now: Date, trace: TraceContext, on connection: PostgresConnection
    ) async throws -> AttemptRow {
        let definition = timeline.latest
        guard definition.kind != .chore else {
            throw Problem.conflict("chore", "Household chores are completed occurrence by occurrence, not started.")
        }
        let calendar = member.calendar
        var startedOn = calendar.date(at: now)
        var endsOn = definition.durationDays.map { startedOn.adding(days: $0 - 1) }
        if let competition = definition.competition {
            guard now < competition.endsAt else { throw Problem.conflict("competition-ended", "This competition has ended.") }
            startedOn = max(startedOn, calendar.date(at: competition.startsAt))
            endsOn = calendar.date(at: competition.endsAt.addingTimeInterval(-1))
        }
        if let endsOn, !endsOn.isSupported {
            throw Problem(
                slug: "beyond-supported-dates", title: "Ends beyond the supported dates", status: .unprocessableContent,
                detail: "Started today, this would end on \(endsOn), after \(LocalDate.supportedRange.upperBound), the last date Surge supports.")
        }
        var state = AttemptState()
        state.freezesLeft = definition.rules.streak.freezesPerMonth
        state.freezeMonth = String(startedOn.description.prefix(7))
        var attempt = AttemptRow(
            id: UUID(), userID: member.userID, challengeID: definition.challengeID, attemptNumber: number, kind: definition.kind,
            groupID: definition.groupID, startedOn: startedOn, endsOn: endsOn, state: state, startedAt: now, nextJudgementAt: nil)
        attempt.nextJudgementAt = nextJudgement(attempt, timeline: timeline, calendar: calendar)
        do {
            try await attempts.insert(attempt, now: now, on: connection)
        } catch where error.isUniqueViolation {
            throw Problem.conflict("already-started", "You already have an active attempt at this challenge.")
        }
        try await outbox.append(
            AttemptStarted(
                attemptID: attempt.id, userID: member.userID, challengeID: definition.challengeID, challengeVersion: definition.version,
                kind: definition.kind, attemptNumber: number, startedOn: startedOn, timeZone: member.timeZone, groupID: definition.groupID,
                startedAt: now),
            on: connection, at: now, trace: trace, logger: logger)
        return attempt
    }

    private func abandon(_ attempt: inout AttemptRow, member: Member, now: Date, trace: TraceContext?, on connection: PostgresConnection) async throws {
        let today = member.calendar.date(at: now)
        attempt.state.status = .abandoned
        attempt.state.endedOn = today
        let endedOn = attempt.state.endedOn ?? today
        let dayNumber = try await projections.timeline(attempt.challengeID, on: connection).map {
            attempt.state.timeOff($0.version(on: endedOn)).dayNumber(of: endedOn, startedOn: attempt.startedOn)
        } ?? attempt.startedOn.days(until: endedOn) + 1
        try await attempts.update(attempt, now: now, on: connection)
        try await outbox.append(
            AttemptEnded(
                attemptID: attempt.id, userID: attempt.userID, challengeID: attempt.challengeID, kind: attempt.kind, groupID: attempt.groupID,
                attemptNumber: attempt.attemptNumber, end: .abandoned, endedOn: endedOn, dayNumber: dayNumber, reason: attempt.state.failureReason,
                missedTaskIDs: attempt.state.missedTaskIDs, daysCompleted: attempt.state.periodsCompleted, bestStreak: attempt.state.bestStreak,
                points: attempt.state.points, endedAt: now),
            on: connection, at: now, trace: trace, logger: logger)
    }

    // MARK: Check-ins

    func checkIn(_ command: CheckInCommand, attemptID: UUID, userID: UUID, trace: TraceContext) async throws -> AttemptSnapshot {
        let unsupported = CheckInWindow.unsupportedFields(happenedAt: command.happenedAt, date: command.date)
        guard unsupported.isEmpty else { throw Problem.validation(unsupported) }
        let (view, recorded) = try await client.transaction(logger: logger) { connection -> (AttemptSnapshot, Bool) in
            guard let context = try await attempts.lockForCheckIn(attemptID, of: userID, checkInID: command.checkInID, on: connection) else {
                throw Problem.notFound("No such attempt.")
            }
            var attempt = context.attempt
            // Read after the lock: a check-in that waited for the judgement of its day must see that it came too late.
            let now = clock.now()
            let member = if let member = context.member { member } else { try await requireMember(userID, on: connection) }
            guard let timeline = DefinitionTimeline(context.definitions) else { throw Problem.notFound("The challenge no longer exists.") }
            let open = Self.openDays(of: attempt, today: member.calendar.date(at: now))
            var days: LoadedDays? = LoadedDays(
                range: open, records: try await attempts.days(attempt.id, from: open.lowerBound, through: open.upperBound, on: connection))
            if !context.alreadyRecorded {
                guard attempt.state.status == .active else {
                    throw Problem.conflict("attempt-not-active", "This attempt is \(attempt.state.status.rawValue); restart it to check in again.")
                }
                try await checkInWithinTransaction(
                    command, attempt: &attempt, member: member, timeline: timeline, now: now, trace: trace, days: &days, on: connection)
            }
            return (try await snapshot(attempt, member: member, timeline: timeline, now: now, days: days, on: connection), !context.alreadyRecorded)
        }
        // Counted once committed; a retried request with the same check-in id is not a second check-in.
        if recorded { Self.checkInsRecorded(command.kind).increment() }
        return view
    }

    /// `surge_checkins_total{action}`: check-ins committed, by what they did.
    static func checkInsRecorded(_ kind: CheckInCommand.Kind) -> Counter {
        let action = switch kind {
        case .setDone(true): "done"
        case .setDone(false): "undone"
        case .log: "logged"
        case .removeLog: "log-removed"
        case .photo: "photo"
        }
        return Counter(label: "surge_checkins_total", dimensions: [("action", action)])
    }

    /// Day records read once for a range of days, kept current as the transaction saves them.
    struct LoadedDays: Sendable {
        let range: ClosedRange<LocalDate>
        var records: [LocalDate: DayRecord]
    }

    /// The days an attempt's view still shows as open: from the last judged day (or this week's Monday, if earlier)
    /// through today.
    static func openDays(of attempt: AttemptRow, today: LocalDate) -> ClosedRange<LocalDate> {
        min(attempt.state.judgedThrough ?? attempt.startedOn, today.startOfWeek)...today
    }

    func checkInWithinTransaction(
        _ command: CheckInCommand, attempt: inout AttemptRow, member: Member, timeline: DefinitionTimeline, now: Date, trace: TraceContext,
        days: inout LoadedDays?, on connection: PostgresConnection
    ) async throws {
        let calendar = member.calendar
        let happenedAt = command.happenedAt ?? now
        var taskID = command.taskID
        var date = command.date ?? calendar.date(at: happenedAt)
        let action: CheckIn.Action
        switch command.kind {
        case .setDone(let done): action = .setDone(done)
        case .log(let quantity, let series): action = .log(quantity: quantity, series: series)
        case .photo(let photoID): action = .photo(photoID)
        case .removeLog(let logID):
            guard let log = try await attempts.checkIn(logID, of: attempt.userID, on: connection), log.attemptID == attempt.id,
                log.action == "logged"
            else { throw Problem.notFound("No such logged amount.") }
            guard log.removedBy == nil else { throw Problem.conflict("already-removed", "That amount was already removed.") }
            taskID = log.taskID
            date = log.date
            action = .removeLog(quantity: log.quantity ?? 0, rewardedQuantity: log.rewardedQuantity ?? 0, points: log.points)
        }
        let definition = timeline.version(on: date)
        if let competition = definition.competition, happenedAt < competition.startsAt || happenedAt >= competition.endsAt {
            throw Problem(slug: "outside-competition", title: "Outside the competition", status: .unprocessableContent,
                          detail: "The competition runs from \(Timestamp.format(competition.startsAt)) to \(Timestamp.format(competition.endsAt)).")
        }
        if let competition = definition.competition, now >= competition.endsAt {
            // Its standings are final at its end, even for amounts logged offline before it.
            throw ProgressProblems.problem(for: .tooLate(closedAt: competition.endsAt), date: date)
        }
        let inProgress = Judge.nextPeriodEnd(
            attempt.state, startedOn: attempt.startedOn, endOn: attempt.endsOn, period: timeline.latest.rules.streak.period)
        if let refusal = CheckInWindow.check(
            date: date, happenedAt: happenedAt, now: now, startedOn: attempt.startedOn, endOn: attempt.endsOn, calendar: calendar,
            graceMinutes: definition.rules.checkInGraceMinutes, judgedThrough: attempt.state.judgedThrough,
            judgedThroughClosedAt: attempt.state.judgedThroughClosedAt, closesNoEarlierThan: inProgress.flatMap { date <= $0 ? attempt.nextJudgementAt : nil })
        {
            throw ProgressProblems.problem(for: refusal, date: date)
        }
        let timeOff = attempt.state.timeOff(definition)
        // Time off earns nothing: a day off takes no check-ins (what was logged before it was taken off stays).
        if timeOff.isOff(date) { throw ProgressProblems.dayOff(date) }
        var record =
            if let days, days.range.contains(date) {
                days.records[date] ?? DayRecord(date: date)
            } else {
                try await attempts.day(attempt.id, date, on: connection) ?? DayRecord(date: date)
            }
        let levelPoints = definition.rules.points.kind == .series ? try await ledger.levelPoints(attempt.userID, on: connection) : 0
        let result = try ProgressProblems.mapping {
            try CheckInEngine.apply(
                CheckIn(taskID: taskID, action: action, happenedAt: happenedAt), to: &record,
                context: .init(definition: definition, dailyGoal: member.effectiveDailyGoal, streak: attempt.state.currentStreak, levelPoints: levelPoints))
        }
        let actionName: String =
            switch action {
            case .setDone(let done): result.applied ? (done ? "done" : "undone") : "superseded"
            case .log: "logged"
            case .removeLog: "removed"
            case .photo: "photo"
            }
        var quantity: Double?
        var done: Bool?
        var photoID: UUID?
        switch action {
        case .setDone(let value): done = value
        case .log(let amount, _): quantity = amount
        case .removeLog(let amount, _, _): quantity = amount
        case .photo(let id): photoID = id
        }
        var removedLog: UUID?
        if case .removeLog(let logID) = command.kind { removedLog = logID }
        try await attempts.recordCheckIn(
            id: command.checkInID, userID: attempt.userID, attemptID: attempt.id, date: date, taskID: taskID, action: actionName, done: done,
            quantity: quantity, rewardedQuantity: result.rewardedQuantity, points: result.pointsDelta, photoID: photoID, happenedAt: happenedAt,
            recordedAt: now, removing: result.applied ? removedLog : nil, day: result.applied ? record : nil, on: connection)
        guard result.applied else { return }
        if days?.range.contains(date) == true { days?.records[date] = record }
        var events: [(EventRecord, topic: String)] = []
        if result.pointsDelta != 0 || (result.excess ?? 0) > 0, let reason = result.reason ?? (result.excess != nil ? .series : nil) {
            attempt.state.points += result.pointsDelta
            let awarded = try await ledger.write(
                .init(
                    userID: attempt.userID, groupID: attempt.groupID, challengeID: attempt.challengeID, attemptID: attempt.id,
                    points: result.pointsDelta, reason: reason, localDate: date, excessQuantity: result.excess,
                    countsTowardLevel: definition.visibility == .curated, checkInID: command.checkInID),
                at: now, on: connection)
            events.append(try outbox.record(awarded, at: now, trace: trace))
        }
        let dayNumber = timeOff.dayNumber(of: date, startedOn: attempt.startedOn)
        let task = definition.tasks.first { $0.taskID == taskID }
        switch action {
        case .setDone(false), .removeLog:
            events.append(try outbox.record(
                CheckInUndone(
                    checkInID: command.checkInID, undoesCheckInID: { if case .removeLog(let id) = command.kind { return id } else { return nil } }(),
                    userID: attempt.userID, attemptID: attempt.id, challengeID: attempt.challengeID, kind: attempt.kind, groupID: attempt.groupID,
                    taskID: taskID, localDate: date, quantity: quantity, happenedAt: happenedAt, recordedAt: now, dayComplete: result.dayComplete),
                at: now, trace: trace))
        default:
            events.append(try outbox.record(
                CheckInRecorded(
                    checkInID: command.checkInID, userID: attempt.userID, attemptID: attempt.id, challengeID: attempt.challengeID,
                    challengeVersion: definition.version, kind: attempt.kind, groupID: attempt.groupID, taskID: taskID,
                    taskKind: task?.kind ?? .checkbox, action: quantity == nil ? .done : .logged, localDate: date, dayNumber: dayNumber,
                    quantity: quantity, unit: task?.unit, photoID: photoID, happenedAt: happenedAt, recordedAt: now,
                    taskComplete: result.taskComplete, dayComplete: result.dayComplete,
                    dayQuantity: task?.kind == .quantity ? record.tasks[taskID]?.quantity : nil,
                    dayTarget: task.flatMap {
                        Requirements.dayTasks(definition, on: date).contains($0) ? Requirements.target(of: $0, dailyGoal: member.effectiveDailyGoal) : nil
                    }),
                at: now, trace: trace))
        }
        try await outbox.append(events, on: connection, logger: logger)
        let increased: Bool
        switch action {
        case .setDone(false), .removeLog: increased = false
        default: increased = true
        }
        try await settleWeekBonuses(&attempt, date: date, increased: increased, definition: definition, member: member, now: now, trace: trace, on: connection)
        try await attempts.update(attempt, now: now, on: connection)
    }

    /// 001's weekly bonuses, once per week, the moment the week's goal is reached: the weekly-goal bonus and, for a
    /// weekly challenge, its completion bonus. A change that leaves the goal unmet again takes them back, so a logged
    /// and removed amount cannot keep a bonus.
    private func settleWeekBonuses(
        _ attempt: inout AttemptRow, date: LocalDate, increased: Bool, definition: JudgingDefinition, member: Member, now: Date,
        trace: TraceContext, on connection: PostgresConnection
    ) async throws {
        let points = definition.rules.points
        var bonuses: [(AttemptStore.WeekBonus, Int)] = []
        if let bonus = points.weeklyGoalBonus, bonus > 0 { bonuses.append((.goal, bonus)) }
        if definition.kind == .weekly, let bonus = points.completionBonus, bonus > 0 { bonuses.append((.challenge, bonus)) }
        guard !bonuses.isEmpty else { return }
        let weekStart = date.startOfWeek
        let awarded = try await attempts.weekBonuses(attempt.id, weekStart: weekStart, on: connection)
        // Only a rise can newly meet the goal, and only a fall can unmeet it.
        if increased ? bonuses.allSatisfy({ awarded.contains($0.0) }) : awarded.isEmpty { return }
        let records = try await attempts.days(attempt.id, from: weekStart, through: weekStart.adding(days: 6), on: connection)
        let days = WeekGoal.days(of: weekStart, startedOn: attempt.startedOn, endOn: attempt.endsOn)
        let met = WeekGoal.isMet(days, records: records, definition: definition, dailyGoal: member.effectiveDailyGoal)
        for (bonus, amount) in bonuses where met != awarded.contains(bonus) {
            try await attempts.setWeekBonus(bonus, awarded: met, attemptID: attempt.id, weekStart: weekStart, on: connection)
            let delta = met ? amount : -amount
            attempt.state.points += delta
            try await ledger.append(
                .init(
                    userID: attempt.userID, groupID: attempt.groupID, challengeID: attempt.challengeID, attemptID: attempt.id, points: delta,
                    reason: met ? (bonus == .goal ? .weeklyGoalBonus : .challengeBonus) : .correction, localDate: date, excessQuantity: nil,
                    countsTowardLevel: definition.visibility == .curated),
                at: now, trace: trace, on: connection)
        }
    }

    // MARK: Judging days

    /// Judges every period whose window closed, for up to `limit` attempts, each in its own short transaction so
    /// check-ins wait for one attempt at most and one failing attempt holds up no other. Returns how many were due.
    func judgeDue(limit: Int) async throws -> Int {
        let now = clock.now()
        let due = try await client.withConnection { connection in
            try await attempts.dueIDs(before: now, limit: limit, on: connection)
        }
        for attemptID in due {
            do {
                try await client.transaction(logger: logger) { connection in
                    guard var attempt = try await attempts.lockDue(attemptID, before: now, on: connection) else { return }
                    guard let member = try await projections.member(attempt.userID, on: connection) else {
                        attempt.nextJudgementAt = nil
                        try await attempts.update(attempt, now: now, on: connection)
                        return
                    }
                    guard let timeline = try await projections.timeline(attempt.challengeID, on: connection) else {
                        // The challenge was deleted with its history: nothing is left to judge by.
                        attempt.state.failureReason = "The challenge was deleted."
                        try await abandon(&attempt, member: member, now: now, trace: nil, on: connection)
                        return
                    }
                    try await judge(&attempt, member: member, timeline: timeline, now: now, on: connection)
                }
            } catch {
                logger.error("Judging an attempt failed; retrying in five minutes", metadata: ["attempt": "\(attemptID)", "error": "\(error)"])
                try await attempts.postpone(attemptID, by: 300, on: client)
            }
        }
        return due.count
    }

    private func judge(_ attempt: inout AttemptRow, member: Member, timeline: DefinitionTimeline, now: Date, on connection: PostgresConnection) async throws {
        let calendar = member.calendar
        let period = timeline.latest.rules.streak.period
        while attempt.state.status == .active,
            let periodEnd = Judge.nextPeriodEnd(attempt.state, startedOn: attempt.startedOn, endOn: attempt.endsOn, period: period),
            case let closedAt = Self.windowCloses(periodEnd, timeline: timeline, calendar: calendar), closedAt <= now
        {
            let from = max(attempt.startedOn, min(periodEnd.startOfWeek, periodEnd.startOfMonth))
            let records = try await attempts.days(attempt.id, from: from, through: periodEnd, on: connection)
            let previous = attempt.state
            let judgement = Judge.judge(
                periodEnding: periodEnd, startedOn: attempt.startedOn, endOn: attempt.endsOn, state: &attempt.state, timeline: timeline,
                records: records, dailyGoal: member.effectiveDailyGoal)
            attempt.state.judgedThroughClosedAt = closedAt
            var record = records[periodEnd] ?? DayRecord(date: periodEnd)
            record.outcome = judgement.outcome
            try await attempts.saveDay(attempt.id, record, on: connection)
            try await emit(
                judgement, attempt: attempt, previous: previous, period: period,
                dayNumber: attempt.state.timeOff(timeline.version(on: periodEnd)).dayNumber(of: periodEnd, startedOn: attempt.startedOn),
                curated: timeline.latest.visibility == .curated, now: now, on: connection)
        }
        attempt.nextJudgementAt = nextJudgement(attempt, timeline: timeline, calendar: calendar)
        try await attempts.update(attempt, now: now, on: connection)
    }

    private func emit(
        _ judgement: Judgement, attempt: AttemptRow, previous: AttemptState, period: StreakPeriod, dayNumber: Int, curated: Bool, now: Date,
        on connection: PostgresConnection
    ) async throws {
        let state = attempt.state
        try await outbox.append(
            DayJudged(
                userID: attempt.userID, attemptID: attempt.id, challengeID: attempt.challengeID, kind: attempt.kind, groupID: attempt.groupID,
                period: period, localDate: judgement.date, dayNumber: dayNumber, outcome: judgement.outcome,
                missedTaskIDs: judgement.missedTaskIDs, currentStreak: state.currentStreak, bestStreak: state.bestStreak, judgedAt: now),
            on: connection, at: now, logger: logger)
        if let change = judgement.streakChange {
            try await outbox.append(
                StreakChanged(
                    userID: attempt.userID, attemptID: attempt.id, challengeID: attempt.challengeID, kind: attempt.kind, groupID: attempt.groupID,
                    period: period, change: change, previous: judgement.previousStreak, current: state.currentStreak, best: state.bestStreak,
                    freezesLeft: state.freezesLeft, localDate: judgement.date, changedAt: now),
                on: connection, at: now, logger: logger)
        }
        if judgement.completionBonus > 0 {
            try await ledger.append(
                .init(
                    userID: attempt.userID, groupID: attempt.groupID, challengeID: attempt.challengeID, attemptID: attempt.id,
                    points: judgement.completionBonus, reason: .challengeBonus, localDate: judgement.date, excessQuantity: nil,
                    countsTowardLevel: curated),
                at: now, trace: nil, on: connection)
        }
        if let end = judgement.ended {
            try await outbox.append(
                AttemptEnded(
                    attemptID: attempt.id, userID: attempt.userID, challengeID: attempt.challengeID, kind: attempt.kind, groupID: attempt.groupID,
                    attemptNumber: attempt.attemptNumber, end: end, endedOn: judgement.date, dayNumber: dayNumber, reason: judgement.reason,
                    missedTaskIDs: end == .failed ? judgement.missedTaskIDs : [], daysCompleted: state.periodsCompleted,
                    bestStreak: state.bestStreak, points: state.points, endedAt: now),
                on: connection, at: now, logger: logger)
        }
    }

    /// When the next period's window closes, or nil when nothing is left to judge.
    func nextJudgement(_ attempt: AttemptRow, timeline: DefinitionTimeline, calendar: LocalCalendar) -> Date? {
        guard attempt.state.status == .active,
            let periodEnd = Judge.nextPeriodEnd(attempt.state, startedOn: attempt.startedOn, endOn: attempt.endsOn, period: timeline.latest.rules.streak.period)
        else { return nil }
        return Self.windowCloses(periodEnd, timeline: timeline, calendar: calendar)
    }

    /// When the check-in window of the period ending `periodEnd` closes and the period is judged: the day's end plus
    /// the rules' grace, and for a competition no later than its end (docs/progress.md: competitions end at `endsAt`).
    static func windowCloses(_ periodEnd: LocalDate, timeline: DefinitionTimeline, calendar: LocalCalendar) -> Date {
        let closes = CheckInWindow.closes(periodEnd, calendar: calendar, graceMinutes: timeline.version(on: periodEnd).rules.checkInGraceMinutes)
        guard let competition = timeline.latest.competition else { return closes }
        return min(closes, competition.endsAt)
    }

    // MARK: Reading

    func snapshot(_ attemptID: UUID, userID: UUID) async throws -> AttemptSnapshot {
        try await client.withConnection { connection in
            guard let attempt = try await attempts.find(attemptID, of: userID, on: connection) else { throw Problem.notFound("No such attempt.") }
            let member = try await requireMember(userID, on: connection)
            guard let timeline = try await projections.timeline(attempt.challengeID, on: connection) else { throw Problem.notFound("The challenge no longer exists.") }
            return try await snapshot(attempt, member: member, timeline: timeline, now: clock.now(), on: connection)
        }
    }

    /// The attempt as its view shows it; `days` saves reading the open days again when the transaction already holds them.
    func snapshot(
        _ attempt: AttemptRow, member: Member, timeline: DefinitionTimeline, now: Date, days: LoadedDays? = nil, on connection: PostgresConnection
    ) async throws -> AttemptSnapshot {
        let today = member.calendar.date(at: now)
        let open = Self.openDays(of: attempt, today: today)
        let records =
            if let days, days.range == open {
                days.records
            } else {
                try await attempts.days(attempt.id, from: open.lowerBound, through: open.upperBound, on: connection)
            }
        let levelPoints = timeline.latest.rules.points.kind == .series ? try await ledger.levelPoints(attempt.userID, on: connection) : 0
        return AttemptSnapshot(
            attempt: attempt, timeline: timeline, member: member, today: today, now: now, levelPoints: levelPoints, openRecords: records)
    }

    /// The caller's profile as identity's events described it; a caller who has only just signed up waits for it.
    func requireMember(_ userID: UUID, on connection: PostgresConnection) async throws -> Member {
        guard let member = try await CatchUp.standard.value({ try await projections.member(userID, on: connection) }) else {
            throw CatchUp.problem("Your account is still being set up here; retry in a moment.")
        }
        return member
    }

    /// The challenge's definitions, if the caller may join it; one that was only just published or shared with the
    /// caller (an invitation, a group joined a moment ago) is waited for.
    func joinableTimeline(_ challengeID: UUID, userID: UUID, on connection: PostgresConnection) async throws -> DefinitionTimeline? {
        try await CatchUp.standard.value {
            guard let timeline = try await projections.timeline(challengeID, on: connection),
                try await mayJoin(timeline.latest, userID: userID, on: connection)
            else { return nil }
            return timeline
        }
    }

    /// Challenges' visibility rule (`ChallengeAccess`), with the facts this service's projections hold.
    func mayJoin(_ definition: JudgingDefinition, userID: UUID, on connection: PostgresConnection) async throws -> Bool {
        var facts = ChallengeAccess.Facts(visibility: definition.visibility, isOwner: definition.ownerID == userID)
        guard !ChallengeAccess.canSee(facts) else { return true }
        facts.isInvited = try await projections.isInvited(userID, to: definition.challengeID, on: connection)
        if let groupID = definition.groupID { facts.isGroupMember = try await projections.isMember(userID, of: groupID, on: connection) }
        return ChallengeAccess.canSee(facts)
    }
}
