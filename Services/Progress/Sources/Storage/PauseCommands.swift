import Foundation
import PostgresNIO
import ProgressDomain
import SurgeContracts
import SurgeMessaging
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
    var problem: Problem
}

/// Pauses, vacations, skip days and resumes: each a change of the attempt's state with its event, in one transaction.
extension ProgressRepository {
    func pause(_ attemptID: UUID, userID: UUID, command: PauseCommand, trace: TraceContext) async throws -> AttemptSnapshot {
        try await client.transaction(logger: logger) { connection in
            guard var attempt = try await attempts.lock(attemptID, of: userID, on: connection) else { throw Problem.notFound("No such attempt.") }
            let now = clock.now()
            let member = try await requireMember(userID, on: connection)
            guard let timeline = try await projections.timeline(attempt.challengeID, on: connection) else { throw Problem.notFound("The challenge no longer exists.") }
            try await pauseWithinTransaction(command, attempt: &attempt, member: member, timeline: timeline, now: now, trace: trace, on: connection)
            return try await snapshot(attempt, member: member, timeline: timeline, now: now, on: connection)
        }
    }

    func resume(_ attemptID: UUID, userID: UUID, trace: TraceContext) async throws -> AttemptSnapshot {
        try await client.transaction(logger: logger) { connection in
            guard var attempt = try await attempts.lock(attemptID, of: userID, on: connection) else { throw Problem.notFound("No such attempt.") }
            let now = clock.now()
            let member = try await requireMember(userID, on: connection)
            guard let timeline = try await projections.timeline(attempt.challengeID, on: connection) else { throw Problem.notFound("The challenge no longer exists.") }
            try await resumeWithinTransaction(&attempt, member: member, now: now, trace: trace, on: connection)
            return try await snapshot(attempt, member: member, timeline: timeline, now: now, on: connection)
        }
    }

    /// A vacation: every active attempt whose rules allow it is paused from the same day; the others are listed with
    /// the problem that refused them.
    func vacation(userID: UUID, command: PauseCommand, trace: TraceContext) async throws -> (paused: [AttemptSnapshot], refused: [VacationRefusal]) {
        try await client.transaction(logger: logger) { connection in
            let now = clock.now()
            let member = try await requireMember(userID, on: connection)
            var paused: [AttemptSnapshot] = []
            var refused: [VacationRefusal] = []
            for var attempt in try await attempts.activeAttempts(of: userID, on: connection) {
                guard let timeline = try await projections.timeline(attempt.challengeID, on: connection) else { continue }
                do {
                    try await pauseWithinTransaction(command, attempt: &attempt, member: member, timeline: timeline, now: now, trace: trace, on: connection)
                    paused.append(try await snapshot(attempt, member: member, timeline: timeline, now: now, on: connection))
                } catch let problem as Problem {
                    refused.append(VacationRefusal(attempt: attempt, challengeName: timeline.latest.name, problem: problem))
                }
            }
            return (paused, refused)
        }
    }

    /// Ends the vacation: every active attempt with a pause in progress or to come counts again from today.
    func endVacation(userID: UUID, trace: TraceContext) async throws -> [AttemptSnapshot] {
        try await client.transaction(logger: logger) { connection in
            let now = clock.now()
            let member = try await requireMember(userID, on: connection)
            var resumed: [AttemptSnapshot] = []
            for var attempt in try await attempts.activeAttempts(of: userID, on: connection) {
                guard PausePolicy.pauseToResume(attempt.state, today: member.calendar.date(at: now)) != nil,
                    let timeline = try await projections.timeline(attempt.challengeID, on: connection)
                else { continue }
                try await resumeWithinTransaction(&attempt, member: member, now: now, trace: trace, on: connection)
                resumed.append(try await snapshot(attempt, member: member, timeline: timeline, now: now, on: connection))
            }
            guard !resumed.isEmpty else { throw ProgressProblems.problem(for: PauseRefusal.notPaused) }
            return resumed
        }
    }

    private func pauseWithinTransaction(
        _ command: PauseCommand, attempt: inout AttemptRow, member: Member, timeline: DefinitionTimeline, now: Date, trace: TraceContext,
        on connection: PostgresConnection
    ) async throws {
        guard attempt.state.status == .active else {
            throw Problem.conflict("attempt-not-active", "This attempt is \(attempt.state.status.rawValue): only an active attempt can take time off.")
        }
        let calendar = member.calendar
        let today = calendar.date(at: now)
        let from = command.from ?? today
        let definition = timeline.version(on: from)
        let state = attempt.state
        let startedOn = attempt.startedOn
        let endOn = attempt.endsOn
        let pause = try ProgressProblems.mappingRefusal { () throws(PauseRefusal) in
            try PausePolicy.pause(
                PauseRequest(kind: command.kind, from: from, days: command.days),
                attempt: .init(state: state, startedOn: startedOn, endOn: endOn, definition: definition), today: today, now: now, pauseID: UUID(),
                closes: { Self.windowCloses($0, timeline: timeline, calendar: calendar) })
        }
        attempt.state.pauses.append(pause)
        try await attempts.update(attempt, now: now, on: connection)
        try await outbox.append(
            AttemptPaused(
                pauseID: pause.pauseID, attemptID: attempt.id, userID: attempt.userID, challengeID: attempt.challengeID, kind: attempt.kind,
                groupID: attempt.groupID, pauseKind: pause.kind, from: pause.from, through: pause.through,
                remindersOnly: definition.pauseRule.mode == .remindersOnly, pausedAt: now),
            on: connection, at: now, trace: trace, logger: logger)
    }

    private func resumeWithinTransaction(
        _ attempt: inout AttemptRow, member: Member, now: Date, trace: TraceContext, on connection: PostgresConnection
    ) async throws {
        guard attempt.state.status == .active else {
            throw Problem.conflict("attempt-not-active", "This attempt is \(attempt.state.status.rawValue): there is nothing to resume.")
        }
        let today = member.calendar.date(at: now)
        let (before, after) = try ProgressProblems.mappingRefusal { () throws(PauseRefusal) in try PausePolicy.resume(&attempt.state, today: today) }
        try await attempts.update(attempt, now: now, on: connection)
        try await outbox.append(
            AttemptResumed(
                pauseID: before.pauseID, attemptID: attempt.id, userID: attempt.userID, challengeID: attempt.challengeID, kind: attempt.kind,
                groupID: attempt.groupID, resumedOn: today, pausedThrough: after?.through, resumedAt: now),
            on: connection, at: now, trace: trace, logger: logger)
    }
}
