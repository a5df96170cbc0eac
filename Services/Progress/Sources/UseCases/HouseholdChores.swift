import Foundation
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeRuntime

/// A household's chores as its members see and do them: one pending occurrence at a time per chore; completing it
/// awards the points to the completer and schedules the next.
struct HouseholdChores: Sendable {
    let storage: ProgressStorage
    let clock: ServiceClock

    /// A page of a household's occurrences, pending ones by due time, completed ones newest first. Members only.
    func list(groupID: UUID, userID: UUID, status: ChoreOccurrenceStatus, page: PageRequest<ChoreCursor>) async throws -> Page<ChoreOccurrence> {
        try await storage.read { stores in
            guard try await CatchUp.standard.until({ try await stores.projections.isMember(userID, of: groupID) }) else {
                throw ProgressError.notFound(.group)
            }
            switch status {
            case .completed:
                let rows = try await stores.chores.completed(inGroup: groupID, after: page.start(.newestFirst), limit: page.fetchLimit)
                return page.page(rows.map(ChoreOccurrence.init)) {
                    ChoreCursor(at: $0.completedAt ?? Timestamp.supportedRange.lowerBound, occurrenceID: $0.occurrenceID)
                }
            case .pending:
                let rows = try await stores.chores.pending(inGroup: groupID, after: page.start(.oldestFirst), limit: page.fetchLimit)
                return page.page(rows.map(ChoreOccurrence.init)) { ChoreCursor(at: $0.dueAt, occurrenceID: $0.occurrenceID) }
            }
        }
    }

    /// Completes a pending occurrence for a household member: their points, the next occurrence, the events.
    func complete(_ occurrenceID: UUID, by userID: UUID, trace: TraceContext) async throws -> ChoreOccurrenceRow {
        try await storage.transaction { stores in
            let now = clock.now()
            guard var occurrence = try await stores.chores.lock(occurrenceID),
                try await CatchUp.standard.until({ try await stores.projections.isMember(userID, of: occurrence.groupID) })
            else { throw ProgressError.notFound(.chore) }
            guard occurrence.status == "pending" else {
                throw ProgressError.choreAlreadyCompleted
            }
            let member = try await stores.projections.member(userID)
            let groupCalendar = try await ChoreScheduling.calendar(of: occurrence.groupID, in: stores)
            let completedOn = groupCalendar.date(at: now)
            try await stores.chores.complete(occurrenceID, by: userID, at: now)
            occurrence.status = "completed"
            occurrence.completedBy = userID
            occurrence.completedAt = now
            occurrence.overdue = false
            try await stores.award(
                .init(
                    userID: userID, groupID: occurrence.groupID, challengeID: occurrence.choreID, attemptID: nil, points: occurrence.points,
                    reason: .chore, localDate: (member?.calendar ?? groupCalendar).date(at: now), excessQuantity: nil, countsTowardLevel: false),
                at: now, trace: trace)
            var nextDue: LocalDate?
            let definition = try await stores.projections.timeline(occurrence.choreID)?.latest
            if let definition, let chore = definition.chore {
                nextDue = ChoreSchedule.nextDue(
                    after: occurrence.dueOn, completedOn: completedOn, recurrence: chore.recurrence, anchorDay: chore.firstDueOn.day)
                if let nextDue {
                    try await ChoreScheduling.schedule(definition, chore: chore, dueOn: nextDue, groupID: occurrence.groupID, calendar: groupCalendar, in: stores)
                }
            }
            try await stores.outbox.append(
                ChoreOccurrenceChanged(
                    occurrenceID: occurrenceID, choreID: occurrence.choreID, groupID: occurrence.groupID, title: occurrence.title, change: .completed,
                    assigneeID: occurrence.assigneeID, completedBy: userID, points: occurrence.points, dueOn: occurrence.dueOn,
                    dueAt: occurrence.dueAt, nextDueOn: nextDue, changedAt: now, dueTime: definition?.chore?.dueTime),
                at: now, trace: trace)
            return occurrence
        }
    }
}
