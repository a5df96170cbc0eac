import Foundation
import ProgressDomain
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// Starting, restarting and abandoning attempts: each one transaction, with the events it causes.
struct AttemptLifecycle: Sendable {
    let storage: ProgressStorage
    let clock: ServiceClock

    func start(_ challengeID: UUID, userID: UUID, trace: TraceContext) async throws -> AttemptSnapshot {
        try await storage.transaction { stores in
            let now = clock.now()
            let member = try await stores.requireMember(userID)
            guard let timeline = try await stores.joinableTimeline(challengeID, userID: userID) else {
                throw ProgressError.notFound(.challenge)
            }
            if let active = try await stores.attempts.active(userID, challengeID: challengeID) {
                throw ProgressError.alreadyStarted(activeAttemptID: active.id)
            }
            let number = try await stores.attempts.previousAttempts(userID, challengeID: challengeID) + 1
            let attempt = try await begin(timeline, member: member, number: number, now: now, trace: trace, in: stores)
            return try await stores.snapshot(attempt, member: member, timeline: timeline, now: now)
        }
    }

    /// Starts again after a failure or an abandon (an active attempt is abandoned first); earlier attempts stay.
    func restart(_ attemptID: UUID, userID: UUID, trace: TraceContext) async throws -> AttemptSnapshot {
        try await storage.transaction { stores in
            let now = clock.now()
            guard var previous = try await stores.attempts.lock(attemptID, of: userID) else { throw ProgressError.notFound(.attempt) }
            guard previous.state.status != .completed else {
                throw ProgressError.attemptCompleted
            }
            let member = try await stores.requireMember(userID)
            let timeline = try await stores.requireTimeline(of: previous)
            if previous.state.status == .active {
                try await Self.abandon(&previous, member: member, now: now, trace: trace, in: stores)
            } else if try await stores.attempts.active(userID, challengeID: previous.challengeID) != nil {
                throw ProgressError.alreadyStarted(activeAttemptID: nil)
            }
            let number = try await stores.attempts.previousAttempts(userID, challengeID: previous.challengeID) + 1
            let attempt = try await begin(timeline, member: member, number: number, now: now, trace: trace, in: stores)
            try await stores.outbox.append(
                AttemptRestarted(
                    previousAttemptID: previous.id, attemptID: attempt.id, userID: userID, challengeID: previous.challengeID, kind: attempt.kind,
                    attemptNumber: number, restartedAt: now),
                at: now, trace: trace)
            return try await stores.snapshot(attempt, member: member, timeline: timeline, now: now)
        }
    }

    func abandon(_ attemptID: UUID, userID: UUID, trace: TraceContext) async throws -> AttemptSnapshot {
        try await storage.transaction { stores in
            let now = clock.now()
            guard var attempt = try await stores.attempts.lock(attemptID, of: userID) else { throw ProgressError.notFound(.attempt) }
            guard attempt.state.status == .active else { throw ProgressError.notActive(attempt.state.status, for: .abandon) }
            let member = try await stores.requireMember(userID)
            let timeline = try await stores.requireTimeline(of: attempt)
            try await Self.abandon(&attempt, member: member, now: now, trace: trace, in: stores)
            return try await stores.snapshot(attempt, member: member, timeline: timeline, now: now)
        }
    }

    private func begin(
        _ timeline: DefinitionTimeline, member: Member, number: Int, now: Date, trace: TraceContext, in stores: Stores
    ) async throws -> AttemptRow {
        let definition = timeline.latest
        guard definition.kind != .chore else {
            throw ProgressError.choreNotStartable
        }
        let calendar = member.calendar
        var startedOn = calendar.date(at: now)
        var endsOn = definition.durationDays.map { startedOn.adding(days: $0 - 1) }
        if let competition = definition.competition {
            guard now < competition.endsAt else { throw ProgressError.competitionEnded }
            startedOn = max(startedOn, calendar.date(at: competition.startsAt))
            endsOn = calendar.date(at: competition.endsAt.addingTimeInterval(-1))
        }
        if let endsOn, !endsOn.isSupported {
            throw ProgressError.endsBeyondSupportedDates(endsOn)
        }
        var state = AttemptState()
        state.freezesLeft = definition.rules.streak.freezesPerMonth
        state.freezeMonth = String(startedOn.description.prefix(7))
        var attempt = AttemptRow(
            id: UUID(), userID: member.userID, challengeID: definition.challengeID, attemptNumber: number, kind: definition.kind,
            groupID: definition.groupID, startedOn: startedOn, endsOn: endsOn, state: state, startedAt: now, nextJudgementAt: nil)
        attempt.nextJudgementAt = attempt.nextJudgement(timeline: timeline, calendar: calendar)
        do {
            try await stores.attempts.insert(attempt, now: now)
        } catch where error.isUniqueViolation {
            throw ProgressError.alreadyStarted(activeAttemptID: nil)
        }
        try await stores.outbox.append(
            AttemptStarted(
                attemptID: attempt.id, userID: member.userID, challengeID: definition.challengeID, challengeVersion: definition.version,
                kind: definition.kind, attemptNumber: number, startedOn: startedOn, timeZone: member.timeZone, groupID: definition.groupID,
                startedAt: now),
            at: now, trace: trace)
        return attempt
    }

    /// Ends an active attempt as abandoned: its owner gave up, or judging found its challenge deleted.
    static func abandon(_ attempt: inout AttemptRow, member: Member, now: Date, trace: TraceContext?, in stores: Stores) async throws {
        let today = member.calendar.date(at: now)
        attempt.state.status = .abandoned
        attempt.state.endedOn = today
        let endedOn = attempt.state.endedOn ?? today
        let dayNumber = try await stores.projections.timeline(attempt.challengeID).map {
            attempt.state.timeOff($0.version(on: endedOn)).dayNumber(of: endedOn, startedOn: attempt.startedOn)
        } ?? attempt.startedOn.days(until: endedOn) + 1
        let event = try stores.outbox.record(
            AttemptEnded(
                attemptID: attempt.id, userID: attempt.userID, challengeID: attempt.challengeID, kind: attempt.kind, groupID: attempt.groupID,
                attemptNumber: attempt.attemptNumber, end: .abandoned, endedOn: endedOn, dayNumber: dayNumber, reason: attempt.state.failureReason,
                missedTaskIDs: attempt.state.missedTaskIDs, daysCompleted: attempt.state.periodsCompleted, bestStreak: attempt.state.bestStreak,
                points: attempt.state.points, endedAt: now),
            at: now, trace: trace)
        try await stores.attempts.update(attempt, now: now, writing: stores.outbox.insert([event]))
    }
}
