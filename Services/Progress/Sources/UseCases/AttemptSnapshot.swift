import Foundation
import ProgressDomain
import SurgeContracts
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

/// Day records read once for a range of days, kept current as the transaction saves them.
struct LoadedDays: Sendable {
    let range: ClosedRange<LocalDate>
    var records: [LocalDate: DayRecord]
}

extension LoadedDays {
    /// The attempt's live streak (what its view shows), when these are the records of its open days; read nothing more.
    func liveStreak(of attempt: AttemptRow, timeline: DefinitionTimeline, member: Member, today: LocalDate) -> Int? {
        guard range == attempt.openDays(today: today) else { return nil }
        return LiveStreak(
            attempt.state, startedOn: attempt.startedOn, endsOn: attempt.endsOn, timeline: timeline, today: today, dailyGoal: member.effectiveDailyGoal,
            openRecords: records
        ).current
    }
}

extension AttemptRow {
    /// The days the attempt's view still shows as open: from the last judged day (or this week's Monday, if earlier)
    /// through today.
    func openDays(today: LocalDate) -> ClosedRange<LocalDate> {
        min(state.judgedThrough ?? startedOn, today.startOfWeek)...today
    }
}

// Steps several use cases take inside their unit of work.
extension Stores {
    /// The attempt as its view shows it; `days` saves reading the open days again when the transaction already holds them.
    func snapshot(_ attempt: AttemptRow, member: Member, timeline: DefinitionTimeline, now: Date, days: LoadedDays? = nil) async throws -> AttemptSnapshot {
        let today = member.calendar.date(at: now)
        let open = attempt.openDays(today: today)
        let records =
            if let days, days.range == open {
                days.records
            } else {
                try await attempts.days(attempt.id, from: open.lowerBound, through: open.upperBound)
            }
        let levelPoints = timeline.latest.rules.points.kind == .series ? try await ledger.levelPoints(attempt.userID) : 0
        return AttemptSnapshot(
            attempt: attempt, timeline: timeline, member: member, today: today, now: now, levelPoints: levelPoints, openRecords: records)
    }

    /// The caller's profile as identity's events described it; a caller who has only just signed up waits for it.
    func requireMember(_ userID: UUID) async throws -> Member {
        guard let member = try await CatchUp.standard.value({ try await projections.member(userID) }) else {
            throw CatchUp.problem("Your account is still being set up here; retry in a moment.")
        }
        return member
    }

    /// The definitions the attempt is judged by; gone with its challenge.
    func requireTimeline(of attempt: AttemptRow) async throws -> DefinitionTimeline {
        guard let timeline = try await projections.timeline(attempt.challengeID) else { throw ProgressError.challengeGone }
        return timeline
    }

    /// The challenge's definitions, if the caller may join it; one that was only just published or shared with the
    /// caller (an invitation, a group joined a moment ago) is waited for.
    func joinableTimeline(_ challengeID: UUID, userID: UUID) async throws -> DefinitionTimeline? {
        try await CatchUp.standard.value {
            guard let timeline = try await projections.timeline(challengeID), try await mayJoin(timeline.latest, userID: userID) else { return nil }
            return timeline
        }
    }

    /// Challenges' visibility rule (`ChallengeAccess`), with the facts this service's projections hold.
    func mayJoin(_ definition: JudgingDefinition, userID: UUID) async throws -> Bool {
        var facts = ChallengeAccess.Facts(visibility: definition.visibility, isOwner: definition.ownerID == userID)
        guard !ChallengeAccess.canSee(facts) else { return true }
        facts.isInvited = try await projections.isInvited(userID, to: definition.challengeID)
        if let groupID = definition.groupID { facts.isGroupMember = try await projections.isMember(userID, of: groupID) }
        return ChallengeAccess.canSee(facts)
    }

    /// Appends a ledger entry (and the member's new total) with its `PointsAwarded` event.
    func award(_ entry: LedgerEntry, at now: Date, trace: TraceContext?) async throws {
        try await outbox.append(try await ledger.write(entry, at: now), at: now, trace: trace)
    }
}
