import Foundation
import Metrics
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgePostgres
import SurgeRuntime

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

    /// The logged amount a removal takes back.
    var removedLogID: UUID? {
        if case .removeLog(let id) = kind { id } else { nil }
    }
}

/// Check-ins: a tick, a logged amount or its removal, a photo. Each is one transaction holding the attempt's row lock,
/// with its events written to the outbox in it (docs/progress.md, "What a check-in costs").
struct CheckInHandler: Sendable {
    let storage: ProgressStorage
    let clock: ServiceClock

    func checkIn(_ command: CheckInCommand, attemptID: UUID, userID: UUID, trace: TraceContext) async throws -> AttemptSnapshot {
        let unsupported = CheckInWindow.unsupportedFields(happenedAt: command.happenedAt, date: command.date)
        guard unsupported.isEmpty else { throw ProgressError.invalidFields(unsupported) }
        let (view, recorded) = try await Self.againIfBeaten { try await storage.transaction { stores -> (AttemptSnapshot, Bool) in
            guard let context = try await stores.attempts.lockForCheckIn(attemptID, of: userID, checkInID: command.checkInID) else {
                throw ProgressError.notFound(.attempt)
            }
            var attempt = context.attempt
            // Read after the lock: a check-in that waited for the judgement of its day must see that it came too late.
            let now = clock.now()
            let member = if let member = context.member { member } else { try await stores.requireMember(userID) }
            guard let timeline = DefinitionTimeline(context.definitions) else { throw ProgressError.challengeGone }
            let open = attempt.openDays(today: member.calendar.date(at: now))
            var days: LoadedDays? = LoadedDays(range: open, records: try await stores.attempts.days(attempt.id, from: open.lowerBound, through: open.upperBound))
            var recorded = false
            if !context.alreadyRecorded {
                guard attempt.state.status == .active else { throw ProgressError.notActive(attempt.state.status, for: .checkIn) }
                recorded = try await apply(command, attempt: &attempt, member: member, timeline: timeline, now: now, trace: trace, days: &days, in: stores)
            }
            return (try await stores.snapshot(attempt, member: member, timeline: timeline, now: now, days: days), recorded)
        } }
        // Counted once committed; a retried request with the same check-in id is not a second check-in.
        if recorded { Self.checkInsRecorded(command.kind).increment() }
        return view
    }

    /// Runs `body` again when it lost a race to a concurrent request with the same check-in id: the attempt's lock
    /// statement read whether the id was recorded before it waited for the other's commit, so this one tried to record
    /// it too and hit the key. Run again, it sees the id recorded and answers as a retry does (never a 500).
    static func againIfBeaten<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch where error.isUniqueViolation {
            return try await body()
        }
    }

    /// Stores a photo and ticks the photo task with it, in one transaction.
    func attachPhoto(
        _ data: Data, contentType: String, taskID: String, attemptID: UUID, userID: UUID, happenedAt: Date?, date: LocalDate?, trace: TraceContext
    ) async throws -> (AttemptSnapshot, UUID) {
        let unsupported = CheckInWindow.unsupportedFields(happenedAt: happenedAt, date: date)
        guard unsupported.isEmpty else { throw ProgressError.invalidFields(unsupported) }
        return try await storage.transaction { stores in
            guard var attempt = try await stores.attempts.lock(attemptID, of: userID) else { throw ProgressError.notFound(.attempt) }
            let now = clock.now()
            guard attempt.state.status == .active else { throw ProgressError.notActive(attempt.state.status, for: .checkIn) }
            let member = try await stores.requireMember(userID)
            let timeline = try await stores.requireTimeline(of: attempt)
            let photoID = UUID()
            let day = date ?? member.calendar.date(at: happenedAt ?? now)
            guard timeline.version(on: day).tasks.first(where: { $0.taskID == taskID })?.kind == .photo else {
                throw ProgressError.invalidField("taskID", "is not a photo task of this challenge")
            }
            try await stores.photos.insert(
                id: photoID, userID: userID, attemptID: attempt.id, challengeID: attempt.challengeID, date: day, taskID: taskID,
                contentType: contentType, data: data, now: now)
            let open = attempt.openDays(today: member.calendar.date(at: now))
            var days: LoadedDays? = LoadedDays(range: open, records: try await stores.attempts.days(attempt.id, from: open.lowerBound, through: open.upperBound))
            try await apply(
                CheckInCommand(checkInID: UUID(), taskID: taskID, kind: .photo(photoID), happenedAt: happenedAt, date: day),
                attempt: &attempt, member: member, timeline: timeline, now: now, trace: trace, days: &days, in: stores)
            return (try await stores.snapshot(attempt, member: member, timeline: timeline, now: now, days: days), photoID)
        }
    }

    /// `surge_checkins_total{action}`: check-ins committed, by what they did.
    private static func checkInsRecorded(_ kind: CheckInCommand.Kind) -> Counter {
        let action = switch kind {
        case .setDone(true): "done"
        case .setDone(false): "undone"
        case .log: "logged"
        case .removeLog: "log-removed"
        case .photo: "photo"
        }
        return checkInsCounter(action)
    }

    private static func checkInsCounter(_ action: String) -> Counter {
        Counter(label: "surge_checkins_total", dimensions: [("action", action)])
    }

    /// Every action's series at zero, so that a dashboard shows them before the first check-in.
    static func startMetricsAtZero() {
        for action in ["done", "undone", "logged", "log-removed", "photo"] { _ = checkInsCounter(action) }
    }

    /// Applies one check-in to a locked, active attempt inside the caller's transaction: its row, the day record, the
    /// points, the events, the week's bonuses and the attempt's totals. `days` holds the records already read. Returns
    /// false when there was no check-in to record (a tick of a task already done that day).
    @discardableResult
    private func apply(
        _ command: CheckInCommand, attempt: inout AttemptRow, member: Member, timeline: DefinitionTimeline, now: Date, trace: TraceContext,
        days: inout LoadedDays?, in stores: Stores
    ) async throws -> Bool {
        let calendar = member.calendar
        let happenedAt = command.happenedAt ?? now
        let (action, taskID, date) = try await resolve(command, attempt: attempt, day: command.date ?? calendar.date(at: happenedAt), in: stores)
        let definition = timeline.version(on: date)
        let timeOff = try Self.accepting(
            date, happenedAt: happenedAt, now: now, attempt: attempt, definition: definition, timeline: timeline, calendar: calendar)
        var record =
            if let days, days.range.contains(date) {
                days.records[date] ?? DayRecord(date: date)
            } else {
                try await stores.attempts.day(attempt.id, date) ?? DayRecord(date: date)
            }
        let levelPoints = definition.rules.points.kind == .series ? try await stores.ledger.levelPoints(attempt.userID) : 0
        let result = try CheckInEngine.apply(
            CheckIn(taskID: taskID, action: action, happenedAt: happenedAt), to: &record,
            context: .init(definition: definition, dailyGoal: member.effectiveDailyGoal, streak: attempt.state.currentStreak, levelPoints: levelPoints))
        if result.unchanged {
            if result.applied {
                try await stores.attempts.saveDay(attempt.id, record)
                if days?.range.contains(date) == true { days?.records[date] = record }
            }
            return false
        }
        let quantity = action.quantity
        let photoID = action.photoID
        let removedLog = command.removedLogID
        var entry: LedgerEntry?
        if result.applied, result.pointsDelta != 0 || (result.excess ?? 0) > 0, let reason = result.reason ?? (result.excess != nil ? .series : nil) {
            entry = LedgerEntry(
                userID: attempt.userID, groupID: attempt.groupID, challengeID: attempt.challengeID, attemptID: attempt.id,
                points: result.pointsDelta, reason: reason, localDate: date, excessQuantity: result.excess,
                countsTowardLevel: definition.visibility == .curated, checkInID: command.checkInID)
        }
        let entryID = UUID()
        let total = try await stores.attempts.recordCheckIn(
            id: command.checkInID, userID: attempt.userID, attemptID: attempt.id, date: date, taskID: taskID,
            action: action.logName(applied: result.applied), done: action.done,
            quantity: quantity, rewardedQuantity: result.rewardedQuantity, points: result.pointsDelta, photoID: photoID, happenedAt: happenedAt,
            recordedAt: now, removing: result.applied ? removedLog : nil, day: result.applied ? record : nil, entry: entry, entryID: entryID)
        guard result.applied else { return true }
        if days?.range.contains(date) == true { days?.records[date] = record }
        var events: [(EventRecord, topic: String)] = []
        if let entry, let total {
            attempt.state.points += entry.points
            events.append(try stores.outbox.record(LedgerStore.awarded(entry, entryID: entryID, total: total, at: now), at: now, trace: trace))
        }
        let dayNumber = timeOff.dayNumber(of: date, startedOn: attempt.startedOn)
        let task = definition.tasks.first { $0.taskID == taskID }
        if action.takesBack {
            events.append(try stores.outbox.record(
                CheckInUndone(
                    checkInID: command.checkInID, undoesCheckInID: removedLog, userID: attempt.userID, attemptID: attempt.id,
                    challengeID: attempt.challengeID, kind: attempt.kind, groupID: attempt.groupID, taskID: taskID, localDate: date, quantity: quantity,
                    happenedAt: happenedAt, recordedAt: now, dayComplete: result.dayComplete),
                at: now, trace: trace))
        } else {
            events.append(try stores.outbox.record(
                CheckInRecorded(
                    checkInID: command.checkInID, userID: attempt.userID, attemptID: attempt.id, challengeID: attempt.challengeID,
                    challengeVersion: definition.version, kind: attempt.kind, groupID: attempt.groupID, taskID: taskID,
                    taskKind: task?.kind ?? .checkbox, action: quantity == nil ? .done : .logged, localDate: date, dayNumber: dayNumber,
                    quantity: quantity, unit: task?.unit, photoID: photoID, happenedAt: happenedAt, recordedAt: now,
                    taskComplete: result.taskComplete, dayComplete: result.dayComplete,
                    dayQuantity: task?.kind == .quantity ? record.tasks[taskID]?.quantity : nil,
                    dayTarget: task.flatMap {
                        Requirements.dayTasks(definition, on: date).contains($0) ? Requirements.target(of: $0, dailyGoal: member.effectiveDailyGoal) : nil
                    },
                    currentStreak: days?.liveStreak(of: attempt, timeline: timeline, member: member, today: calendar.date(at: now))),
                at: now, trace: trace))
        }
        try await settleWeekBonuses(
            &attempt, date: date, increased: !action.takesBack, definition: definition, member: member, now: now, trace: trace, events: &events, in: stores)
        try await stores.attempts.update(attempt, now: now, writing: stores.outbox.insert(events))
        return true
    }

    /// The domain action a command asks for, with its task and day: a removal applies to the logged amount's.
    private func resolve(
        _ command: CheckInCommand, attempt: AttemptRow, day: LocalDate, in stores: Stores
    ) async throws -> (CheckIn.Action, taskID: String, date: LocalDate) {
        switch command.kind {
        case .setDone(let done): return (.setDone(done), command.taskID, day)
        case .log(let quantity, let series): return (.log(quantity: quantity, series: series), command.taskID, day)
        case .photo(let photoID): return (.photo(photoID), command.taskID, day)
        case .removeLog(let logID):
            guard let log = try await stores.attempts.checkIn(logID, of: attempt.userID), log.attemptID == attempt.id,
                log.action == "logged"
            else { throw ProgressError.notFound(.loggedAmount) }
            guard log.removedBy == nil else { throw ProgressError.amountAlreadyRemoved }
            return (.removeLog(quantity: log.quantity ?? 0, rewardedQuantity: log.rewardedQuantity ?? 0, points: log.points), log.taskID, log.date)
        }
    }

    /// Refuses a check-in that may not change `date`: outside the competition, once the day's window closed, on a day
    /// off. Returns the attempt's time off under the day's rules.
    private static func accepting(
        _ date: LocalDate, happenedAt: Date, now: Date, attempt: AttemptRow, definition: JudgingDefinition, timeline: DefinitionTimeline,
        calendar: LocalCalendar
    ) throws(ProgressError) -> TimeOff {
        if let competition = definition.competition, happenedAt < competition.startsAt || happenedAt >= competition.endsAt {
            throw .outsideCompetition(startsAt: competition.startsAt, endsAt: competition.endsAt)
        }
        if let competition = definition.competition, now >= competition.endsAt {
            // Its standings are final at its end, even for amounts logged offline before it.
            throw .checkInRefused(.tooLate(closedAt: competition.endsAt), date: date)
        }
        let inProgress = Judge.nextPeriodEnd(
            attempt.state, startedOn: attempt.startedOn, endOn: attempt.endsOn, period: timeline.latest.rules.streak.period)
        if let refusal = CheckInWindow.check(
            date: date, happenedAt: happenedAt, now: now, startedOn: attempt.startedOn, endOn: attempt.endsOn, calendar: calendar,
            graceMinutes: definition.rules.checkInGraceMinutes, judgedThrough: attempt.state.judgedThrough,
            judgedThroughClosedAt: attempt.state.judgedThroughClosedAt, closesNoEarlierThan: inProgress.flatMap { date <= $0 ? attempt.nextJudgementAt : nil })
        {
            throw .checkInRefused(refusal, date: date)
        }
        let timeOff = attempt.state.timeOff(definition)
        // Time off earns nothing: a day off takes no check-ins (what was logged before it was taken off stays).
        if timeOff.isOff(date) { throw .dayOff(date) }
        return timeOff
    }

    /// 001's weekly bonuses, once per week, the moment the week's goal is reached: the weekly-goal bonus and, for a
    /// weekly challenge, its completion bonus. A change that leaves the goal unmet again takes them back, so a logged
    /// and removed amount cannot keep a bonus.
    private func settleWeekBonuses(
        _ attempt: inout AttemptRow, date: LocalDate, increased: Bool, definition: JudgingDefinition, member: Member, now: Date,
        trace: TraceContext, events: inout [(EventRecord, topic: String)], in stores: Stores
    ) async throws {
        let points = definition.rules.points
        var bonuses: [(WeekBonus, Int)] = []
        if let bonus = points.weeklyGoalBonus, bonus > 0 { bonuses.append((.goal, bonus)) }
        if definition.kind == .weekly, let bonus = points.completionBonus, bonus > 0 { bonuses.append((.challenge, bonus)) }
        guard !bonuses.isEmpty else { return }
        let weekStart = date.startOfWeek
        let awarded = try await stores.attempts.weekBonuses(attempt.id, weekStart: weekStart)
        // Only a rise can newly meet the goal, and only a fall can unmeet it.
        if increased ? bonuses.allSatisfy({ awarded.contains($0.0) }) : awarded.isEmpty { return }
        let records = try await stores.attempts.days(attempt.id, from: weekStart, through: weekStart.adding(days: 6))
        let days = WeekGoal.days(of: weekStart, startedOn: attempt.startedOn, endOn: attempt.endsOn)
        let met = WeekGoal.isMet(days, records: records, definition: definition, dailyGoal: member.effectiveDailyGoal)
        for (bonus, amount) in bonuses where met != awarded.contains(bonus) {
            try await stores.attempts.setWeekBonus(bonus, awarded: met, attemptID: attempt.id, weekStart: weekStart)
            let delta = met ? amount : -amount
            attempt.state.points += delta
            let awarded = try await stores.ledger.write(
                .init(
                    userID: attempt.userID, groupID: attempt.groupID, challengeID: attempt.challengeID, attemptID: attempt.id, points: delta,
                    reason: met ? (bonus == .goal ? .weeklyGoalBonus : .challengeBonus) : .correction, localDate: date, excessQuantity: nil,
                    countsTowardLevel: definition.visibility == .curated),
                at: now)
            events.append(try stores.outbox.record(awarded, at: now, trace: trace))
        }
    }
}
