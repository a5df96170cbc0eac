import Foundation
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeRuntime

/// Keeps each chore's pending occurrence in line with its definition and its household's zone, tells when one comes
/// within its reminder lead time, and flags the ones past due (with an event, and no penalty: still worth their full
/// points).
struct ChoreScheduling: Sendable {
    let storage: ProgressStorage
    let clock: ServiceClock

    /// How many overdue occurrences one transaction flags.
    static let overdueBatch = 500

    /// Creates the first occurrence of a new chore, or brings the pending one in line with an edited definition.
    func sync(_ definition: JudgingDefinition, in stores: Stores) async throws {
        guard let chore = definition.chore, let groupID = definition.groupID else { return }
        let calendar = try await Self.calendar(of: groupID, in: stores)
        if let pending = try await stores.chores.pending(of: definition.challengeID) {
            let dueAt = ChoreSchedule.dueAt(pending.dueOn, dueTime: chore.dueTime, calendar: calendar)
            try await stores.chores.update(
                pending.occurrenceID, title: definition.name, assigneeID: chore.assigneeID, points: Self.points(of: definition), dueAt: dueAt,
                remindAt: ChoreSchedule.remindAt(dueAt, chore: chore), now: clock.now())
            return
        }
        guard try await !stores.chores.hasOccurrences(definition.challengeID) else { return }
        try await Self.schedule(definition, chore: chore, dueOn: chore.firstDueOn, groupID: groupID, calendar: calendar, in: stores)
    }

    /// A household's time zone changed (or became known): pending due instants follow it.
    func regroup(_ groupID: UUID, in stores: Stores) async throws {
        let calendar = try await Self.calendar(of: groupID, in: stores)
        for occurrence in try await stores.chores.pending(inGroup: groupID) {
            guard let definition = try await stores.projections.timeline(occurrence.choreID)?.latest else { continue }
            let dueAt = ChoreSchedule.dueAt(occurrence.dueOn, dueTime: definition.chore?.dueTime, calendar: calendar)
            try await stores.chores.setDueAt(
                dueAt, remindAt: definition.chore.flatMap { ChoreSchedule.remindAt(dueAt, chore: $0) }, of: occurrence.occurrenceID, now: clock.now())
        }
    }

    func remove(_ choreID: UUID, in stores: Stores) async throws {
        try await stores.chores.delete(choreID: choreID)
    }

    /// Flags overdue occurrences, batch after batch, until a batch comes back short.
    func flagAllOverdue() async throws {
        while try await flagOverdue() == Self.overdueBatch {}
    }

    /// Tells of every occurrence that came within its reminder lead time, batch after batch.
    func remindAllDueSoon() async throws {
        while try await remindDueSoon() == Self.overdueBatch {}
    }

    /// Tells of pending occurrences whose reminder moment came (`chore.occurrence.due-soon`); returns how many were
    /// taken. One already past its due time gets none: the overdue flag is its reminder now.
    func remindDueSoon() async throws -> Int {
        try await storage.transaction { stores in
            let now = clock.now()
            let due = try await stores.chores.takeDueReminders(at: now, limit: Self.overdueBatch)
            for occurrence in due where occurrence.dueAt > now {
                guard let chore = try await stores.projections.timeline(occurrence.choreID)?.latest.chore, let dueTime = chore.dueTime,
                    let lead = ChoreSchedule.reminderLead(of: chore)
                else { continue }
                try await stores.outbox.append(
                    ChoreOccurrenceDueSoon(
                        occurrenceID: occurrence.occurrenceID, choreID: occurrence.choreID, groupID: occurrence.groupID, title: occurrence.title,
                        assigneeID: occurrence.assigneeID, dueOn: occurrence.dueOn, dueAt: occurrence.dueAt, dueTime: dueTime,
                        reminderLeadMinutes: lead, flaggedAt: now),
                    at: now, trace: nil)
            }
            return due.count
        }
    }

    /// Flags pending occurrences whose due time passed; returns how many.
    func flagOverdue() async throws -> Int {
        try await storage.transaction { stores in
            let now = clock.now()
            let flagged = try await stores.chores.flagOverdue(at: now, limit: Self.overdueBatch)
            for occurrence in flagged {
                let dueTime = try await stores.projections.timeline(occurrence.choreID)?.latest.chore?.dueTime
                try await stores.outbox.append(
                    ChoreOccurrenceChanged(
                        occurrenceID: occurrence.occurrenceID, choreID: occurrence.choreID, groupID: occurrence.groupID, title: occurrence.title,
                        change: .overdue, assigneeID: occurrence.assigneeID, completedBy: nil, points: occurrence.points, dueOn: occurrence.dueOn,
                        dueAt: occurrence.dueAt, nextDueOn: nil, changedAt: now, dueTime: dueTime),
                    at: now, trace: nil)
            }
            return flagged.count
        }
    }

    /// The household's calendar; UTC until its zone is known.
    static func calendar(of groupID: UUID, in stores: Stores) async throws -> LocalCalendar {
        LocalCalendar(zoneNamedOrUTC: try await stores.projections.groupTimeZone(groupID) ?? "UTC")
    }

    /// A new pending occurrence of the chore, due on `dueOn`.
    static func schedule(
        _ definition: JudgingDefinition, chore: ChoreDetails, dueOn: LocalDate, groupID: UUID, calendar: LocalCalendar, in stores: Stores
    ) async throws {
        let dueAt = ChoreSchedule.dueAt(dueOn, dueTime: chore.dueTime, calendar: calendar)
        try await stores.chores.insert(
            choreID: definition.challengeID, groupID: groupID, title: definition.name, dueOn: dueOn, dueAt: dueAt,
            remindAt: ChoreSchedule.remindAt(dueAt, chore: chore), assigneeID: chore.assigneeID, points: points(of: definition))
    }

    private static func points(of definition: JudgingDefinition) -> Int {
        definition.tasks.first?.points ?? definition.rules.points.pointsPerTask ?? 1
    }
}
