import Foundation
import Logging
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeRuntime

/// Judges the periods whose check-in window closed, in the background, and keeps each attempt's next judgement due
/// when it should be.
struct DayJudging: Sendable {
    let storage: ProgressStorage
    let clock: ServiceClock
    let logger: Logger

    /// Judges batch after batch until fewer than `batchSize` attempts were due.
    func judgeAllDue(batchSize: Int) async throws {
        while try await judgeDue(limit: batchSize) == batchSize {}
    }

    /// Judges every period whose window closed, for up to `limit` attempts, each in its own short transaction so
    /// check-ins wait for one attempt at most and one failing attempt holds up no other. Returns how many were due.
    func judgeDue(limit: Int) async throws -> Int {
        let now = clock.now()
        let due = try await storage.read { stores in try await stores.attempts.dueIDs(before: now, limit: limit) }
        for attemptID in due {
            do {
                try await storage.transaction { stores in
                    guard var attempt = try await stores.attempts.lockDue(attemptID, before: now) else { return }
                    guard let member = try await stores.projections.member(attempt.userID) else {
                        attempt.nextJudgementAt = nil
                        try await stores.attempts.update(attempt, now: now)
                        return
                    }
                    guard let timeline = try await stores.projections.timeline(attempt.challengeID) else {
                        // The challenge was deleted with its history: nothing is left to judge by.
                        attempt.state.failureReason = "The challenge was deleted."
                        try await AttemptLifecycle.abandon(&attempt, member: member, now: now, trace: nil, in: stores)
                        return
                    }
                    try await judge(&attempt, member: member, timeline: timeline, now: now, in: stores)
                }
            } catch {
                logger.error("Judging an attempt failed; retrying in five minutes", metadata: ["attempt": "\(attemptID)", "error": "\(error)"])
                try await storage.read { stores in try await stores.attempts.postpone(attemptID, by: 300) }
            }
        }
        return due.count
    }

    /// Moves the next judgement of a user's active attempts later when their time zone changes, never earlier, so a
    /// move cannot cut short the day in progress: the day in progress ends by the later of the two zones' clocks.
    func rescheduleForMove(_ userID: UUID, from previousZone: String, to calendar: LocalCalendar, in stores: Stores) async throws {
        let old = LocalCalendar(zoneNamed: previousZone) ?? calendar
        for attempt in try await stores.attempts.lockActive(of: userID) {
            guard let next = attempt.nextJudgementAt else { continue }
            let openDay = old.date(at: next.addingTimeInterval(-1))
            let moved = next.addingTimeInterval(calendar.end(of: openDay).timeIntervalSince(old.end(of: openDay)))
            try await stores.attempts.setNextJudgement(max(next, moved), of: attempt.id)
        }
    }

    private func judge(_ attempt: inout AttemptRow, member: Member, timeline: DefinitionTimeline, now: Date, in stores: Stores) async throws {
        let calendar = member.calendar
        let period = timeline.latest.rules.streak.period
        while attempt.state.status == .active,
            let periodEnd = Judge.nextPeriodEnd(attempt.state, startedOn: attempt.startedOn, endOn: attempt.endsOn, period: period),
            case let closedAt = timeline.windowCloses(periodEnd, calendar: calendar), closedAt <= now
        {
            let from = max(attempt.startedOn, min(periodEnd.startOfWeek, periodEnd.startOfMonth))
            let records = try await stores.attempts.days(attempt.id, from: from, through: periodEnd)
            let previous = attempt.state
            let judgement = Judge.judge(
                periodEnding: periodEnd, startedOn: attempt.startedOn, endOn: attempt.endsOn, state: &attempt.state, timeline: timeline,
                records: records, dailyGoal: member.effectiveDailyGoal)
            attempt.state.judgedThroughClosedAt = closedAt
            var record = records[periodEnd] ?? DayRecord(date: periodEnd)
            record.outcome = judgement.outcome
            try await stores.attempts.saveDay(attempt.id, record)
            try await emit(
                judgement, attempt: attempt, previous: previous, period: period,
                dayNumber: attempt.state.timeOff(timeline.version(on: periodEnd)).dayNumber(of: periodEnd, startedOn: attempt.startedOn),
                curated: timeline.latest.visibility == .curated, now: now, in: stores)
        }
        attempt.nextJudgementAt = attempt.nextJudgement(timeline: timeline, calendar: calendar)
        try await stores.attempts.update(attempt, now: now)
    }

    private func emit(
        _ judgement: Judgement, attempt: AttemptRow, previous: AttemptState, period: StreakPeriod, dayNumber: Int, curated: Bool, now: Date,
        in stores: Stores
    ) async throws {
        let state = attempt.state
        try await stores.outbox.append(
            DayJudged(
                userID: attempt.userID, attemptID: attempt.id, challengeID: attempt.challengeID, kind: attempt.kind, groupID: attempt.groupID,
                period: period, localDate: judgement.date, dayNumber: dayNumber, outcome: judgement.outcome,
                missedTaskIDs: judgement.missedTaskIDs, currentStreak: state.currentStreak, bestStreak: state.bestStreak, judgedAt: now),
            at: now, trace: nil)
        if let change = judgement.streakChange {
            try await stores.outbox.append(
                StreakChanged(
                    userID: attempt.userID, attemptID: attempt.id, challengeID: attempt.challengeID, kind: attempt.kind, groupID: attempt.groupID,
                    period: period, change: change, previous: judgement.previousStreak, current: state.currentStreak, best: state.bestStreak,
                    freezesLeft: state.freezesLeft, localDate: judgement.date, changedAt: now),
                at: now, trace: nil)
        }
        if judgement.completionBonus > 0 {
            try await stores.award(
                .init(
                    userID: attempt.userID, groupID: attempt.groupID, challengeID: attempt.challengeID, attemptID: attempt.id,
                    points: judgement.completionBonus, reason: .challengeBonus, localDate: judgement.date, excessQuantity: nil,
                    countsTowardLevel: curated),
                at: now, trace: nil)
        }
        if let end = judgement.ended {
            try await stores.outbox.append(
                AttemptEnded(
                    attemptID: attempt.id, userID: attempt.userID, challengeID: attempt.challengeID, kind: attempt.kind, groupID: attempt.groupID,
                    attemptNumber: attempt.attemptNumber, end: end, endedOn: judgement.date, dayNumber: dayNumber, reason: judgement.reason,
                    missedTaskIDs: end == .failed ? judgement.missedTaskIDs : [], daysCompleted: state.periodsCompleted,
                    bestStreak: state.bestStreak, points: state.points, endedAt: now),
                at: now, trace: nil)
        }
    }
}

extension AttemptRow {
    /// When the next period's window closes, or nil when nothing is left to judge.
    func nextJudgement(timeline: DefinitionTimeline, calendar: LocalCalendar) -> Date? {
        guard state.status == .active,
            let periodEnd = Judge.nextPeriodEnd(state, startedOn: startedOn, endOn: endsOn, period: timeline.latest.rules.streak.period)
        else { return nil }
        return timeline.windowCloses(periodEnd, calendar: calendar)
    }
}
