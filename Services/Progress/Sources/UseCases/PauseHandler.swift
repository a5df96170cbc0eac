import Foundation
import ProgressDomain
import SurgeContracts
import SurgeRuntime

/// A pause as the API received it.
struct PauseCommand: Sendable {
    var kind: PauseKind
    /// Today in the caller's zone when absent.
    var from: LocalDate?
    /// Until resumed when absent.
    var days: Int?
}

/// One attempt a vacation could not pause, and why.
struct VacationRefusal: Sendable {
    var attempt: AttemptRow
    var challengeName: String
    var refusal: ProgressError
}

/// Pauses, vacations, skip days and resumes: each a change of the attempt's state with its event, in one transaction.
struct PauseHandler: Sendable {
    let storage: ProgressStorage
    let clock: ServiceClock

    func pause(_ attemptID: UUID, userID: UUID, command: PauseCommand, trace: TraceContext) async throws -> AttemptSnapshot {
        try await storage.transaction { stores in
            guard var attempt = try await stores.attempts.lock(attemptID, of: userID) else { throw ProgressError.notFound(.attempt) }
            let now = clock.now()
            let member = try await stores.requireMember(userID)
            let timeline = try await stores.requireTimeline(of: attempt)
            try await pause(command, attempt: &attempt, member: member, timeline: timeline, now: now, trace: trace, in: stores)
            return try await stores.snapshot(attempt, member: member, timeline: timeline, now: now)
        }
    }

    func resume(_ attemptID: UUID, userID: UUID, trace: TraceContext) async throws -> AttemptSnapshot {
        try await storage.transaction { stores in
            guard var attempt = try await stores.attempts.lock(attemptID, of: userID) else { throw ProgressError.notFound(.attempt) }
            let now = clock.now()
            let member = try await stores.requireMember(userID)
            let timeline = try await stores.requireTimeline(of: attempt)
            try await resume(&attempt, member: member, now: now, trace: trace, in: stores)
            return try await stores.snapshot(attempt, member: member, timeline: timeline, now: now)
        }
    }

    /// A vacation: every active attempt whose rules allow it is paused from the same day; the others are listed with
    /// the problem that refused them.
    func vacation(userID: UUID, command: PauseCommand, trace: TraceContext) async throws -> (paused: [AttemptSnapshot], refused: [VacationRefusal]) {
        try await storage.transaction { stores in
            let now = clock.now()
            let member = try await stores.requireMember(userID)
            // Refused as a whole (422), not attempt by attempt: the days asked for are the same for every attempt.
            let request = PauseRequest(kind: command.kind, from: command.from ?? member.calendar.date(at: now), days: command.days)
            try ProgressError.refusingPause { () throws(PauseRefusal) in try PausePolicy.checkSupported(request) }
            var paused: [AttemptSnapshot] = []
            var refused: [VacationRefusal] = []
            for var attempt in try await stores.attempts.lockActive(of: userID) {
                guard let timeline = try await stores.projections.timeline(attempt.challengeID) else { continue }
                do {
                    try await pause(command, attempt: &attempt, member: member, timeline: timeline, now: now, trace: trace, in: stores)
                    paused.append(try await stores.snapshot(attempt, member: member, timeline: timeline, now: now))
                } catch let refusal as ProgressError {
                    refused.append(VacationRefusal(attempt: attempt, challengeName: timeline.latest.name, refusal: refusal))
                }
            }
            return (paused, refused)
        }
    }

    /// Ends the vacation: every active attempt with a pause in progress or to come counts again from today.
    func endVacation(userID: UUID, trace: TraceContext) async throws -> [AttemptSnapshot] {
        try await storage.transaction { stores in
            let now = clock.now()
            let member = try await stores.requireMember(userID)
            var resumed: [AttemptSnapshot] = []
            for var attempt in try await stores.attempts.lockActive(of: userID) {
                guard PausePolicy.pauseToResume(attempt.state, today: member.calendar.date(at: now)) != nil,
                    let timeline = try await stores.projections.timeline(attempt.challengeID)
                else { continue }
                try await resume(&attempt, member: member, now: now, trace: trace, in: stores)
                resumed.append(try await stores.snapshot(attempt, member: member, timeline: timeline, now: now))
            }
            guard !resumed.isEmpty else { throw ProgressError.pauseRefused(.notPaused) }
            return resumed
        }
    }

    private func pause(
        _ command: PauseCommand, attempt: inout AttemptRow, member: Member, timeline: DefinitionTimeline, now: Date, trace: TraceContext,
        in stores: Stores
    ) async throws {
        guard attempt.state.status == .active else {
            throw ProgressError.notActive(attempt.state.status, for: .takeTimeOff)
        }
        let calendar = member.calendar
        let today = calendar.date(at: now)
        let from = command.from ?? today
        let definition = timeline.version(on: from)
        let state = attempt.state
        let startedOn = attempt.startedOn
        let endOn = attempt.endsOn
        let pause = try ProgressError.refusingPause { () throws(PauseRefusal) in
            try PausePolicy.pause(
                PauseRequest(kind: command.kind, from: from, days: command.days),
                attempt: .init(state: state, startedOn: startedOn, endOn: endOn, definition: definition), today: today, now: now, pauseID: UUID(),
                closes: { timeline.windowCloses($0, calendar: calendar) })
        }
        attempt.state.pauses.append(pause)
        let event = try stores.outbox.record(
            AttemptPaused(
                pauseID: pause.pauseID, attemptID: attempt.id, userID: attempt.userID, challengeID: attempt.challengeID, kind: attempt.kind,
                groupID: attempt.groupID, pauseKind: pause.kind, from: pause.from, through: pause.through,
                remindersOnly: definition.pauseRule.mode == .remindersOnly, pausedAt: now),
            at: now, trace: trace)
        try await stores.attempts.update(attempt, now: now, writing: stores.outbox.insert([event]))
    }

    private func resume(
        _ attempt: inout AttemptRow, member: Member, now: Date, trace: TraceContext, in stores: Stores
    ) async throws {
        guard attempt.state.status == .active else {
            throw ProgressError.notActive(attempt.state.status, for: .resume)
        }
        let today = member.calendar.date(at: now)
        let (before, after) = try ProgressError.refusingPause { () throws(PauseRefusal) in try PausePolicy.resume(&attempt.state, today: today) }
        let event = try stores.outbox.record(
            AttemptResumed(
                pauseID: before.pauseID, attemptID: attempt.id, userID: attempt.userID, challengeID: attempt.challengeID, kind: attempt.kind,
                groupID: attempt.groupID, resumedOn: today, pausedThrough: after?.through, resumedAt: now),
            at: now, trace: trace)
        try await stores.attempts.update(attempt, now: now, writing: stores.outbox.insert([event]))
    }
}
