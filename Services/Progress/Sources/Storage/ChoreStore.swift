import Foundation
import Logging
import PostgresNIO
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// A chore occurrence as stored and shown.
struct ChoreOccurrence: Codable, Sendable, Equatable {
    var occurrenceID: UUID
    var choreID: UUID
    var groupID: UUID
    var title: String
    var dueOn: LocalDate
    var dueAt: Date
    var assigneeID: UUID?
    var points: Int
    var status: String
    var overdue: Bool
    var completedBy: UUID?
    var completedAt: Date?
}

/// Household chores as occurrences: one pending at a time per chore; completing it awards the points to the
/// completer and schedules the next; one past due is flagged overdue, still worth its full points.
struct ChoreStore: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let clock: ServiceClock
    let logger: Logger

    private var projections: Projections { Projections(logger: logger) }
    private var ledger: LedgerStore { LedgerStore(logger: logger, outbox: outbox) }

    private static let columns = "occurrence_id, chore_id, group_id, title, due_on, due_at, assignee_id, points, status, overdue_at, completed_by, completed_at"

    private func occurrences(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [ChoreOccurrence] {
        var result: [ChoreOccurrence] = []
        let rows = try await connection.query(query, logger: logger)
        for try await (id, choreID, groupID, title, dueOn, dueAt, assignee, points, status, overdueAt, completedBy, completedAt) in rows.decode(
            (UUID, UUID, UUID, String, LocalDate, Date, UUID?, Int, String, Date?, UUID?, Date?).self)
        {
            result.append(ChoreOccurrence(
                occurrenceID: id, choreID: choreID, groupID: groupID, title: title, dueOn: dueOn, dueAt: dueAt, assigneeID: assignee,
                points: points, status: status, overdue: overdueAt != nil && status == "pending", completedBy: completedBy,
                completedAt: completedAt))
        }
        return result
    }

    private static func points(of definition: JudgingDefinition) -> Int {
        definition.tasks.first?.points ?? definition.rules.points.pointsPerTask ?? 1
    }

    /// Creates the first occurrence of a new chore, or brings the pending one in line with an edited definition.
    func sync(_ definition: JudgingDefinition, on connection: PostgresConnection) async throws {
        guard let chore = definition.chore, let groupID = definition.groupID else { return }
        let calendar = LocalCalendar(zoneNamedOrUTC: try await projections.groupTimeZone(groupID, on: connection) ?? "UTC")
        let pending = try await occurrences(
            "SELECT \(unescaped: Self.columns) FROM chore_occurrences WHERE chore_id = \(definition.challengeID) AND status = 'pending'",
            on: connection
        ).first
        if let pending {
            try await connection.query(
                """
                UPDATE chore_occurrences SET title = \(definition.name), assignee_id = \(chore.assigneeID), points = \(Self.points(of: definition)),
                    due_at = \(ChoreSchedule.dueAt(pending.dueOn, dueTime: chore.dueTime, calendar: calendar))
                WHERE occurrence_id = \(pending.occurrenceID)
                """, logger: logger)
            return
        }
        let existing = try await connection.query(
            "SELECT 1 FROM chore_occurrences WHERE chore_id = \(definition.challengeID) LIMIT 1", logger: logger
        ).collect()
        guard existing.isEmpty else { return }
        try await insert(definition, chore: chore, groupID: groupID, dueOn: chore.firstDueOn, calendar: calendar, on: connection)
    }

    private func insert(
        _ definition: JudgingDefinition, chore: ChoreDetails, groupID: UUID, dueOn: LocalDate, calendar: LocalCalendar,
        on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            INSERT INTO chore_occurrences (occurrence_id, chore_id, group_id, title, due_on, due_at, assignee_id, points, status)
            VALUES (\(UUID()), \(definition.challengeID), \(groupID), \(definition.name), \(dueOn),
                    \(ChoreSchedule.dueAt(dueOn, dueTime: chore.dueTime, calendar: calendar)), \(chore.assigneeID),
                    \(Self.points(of: definition)), 'pending')
            """, logger: logger)
    }

    /// A household's time zone changed (or became known): pending due instants follow it.
    func regroup(_ groupID: UUID, on connection: PostgresConnection) async throws {
        let calendar = LocalCalendar(zoneNamedOrUTC: try await projections.groupTimeZone(groupID, on: connection) ?? "UTC")
        let pending = try await occurrences(
            "SELECT \(unescaped: Self.columns) FROM chore_occurrences WHERE group_id = \(groupID) AND status = 'pending'", on: connection)
        for occurrence in pending {
            guard let definition = try await projections.timeline(occurrence.choreID, on: connection)?.latest else { continue }
            let dueAt = ChoreSchedule.dueAt(occurrence.dueOn, dueTime: definition.chore?.dueTime, calendar: calendar)
            try await connection.query(
                "UPDATE chore_occurrences SET due_at = \(dueAt) WHERE occurrence_id = \(occurrence.occurrenceID)", logger: logger)
        }
    }

    func delete(choreID: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM chore_occurrences WHERE chore_id = \(choreID)", logger: logger)
    }

    /// A page of a household's occurrences, pending ones by due time, completed ones newest first. Members only.
    func list(groupID: UUID, userID: UUID, status: String, page: PageRequest<ChoreCursor>) async throws -> Page<ChoreOccurrence> {
        try await client.withConnection { connection in
            guard try await CatchUp.standard.until({ try await projections.isMember(userID, of: groupID, on: connection) }) else {
                throw Problem.notFound("No such group.")
            }
            let fetched: [ChoreOccurrence]
            if status == "completed" {
                let after = page.after ?? ChoreCursor(at: .distantFuture, occurrenceID: UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!)
                fetched = try await occurrences(
                    """
                    SELECT \(unescaped: Self.columns) FROM chore_occurrences
                    WHERE group_id = \(groupID) AND status = 'completed' AND (completed_at, occurrence_id) < (\(after.at), \(after.occurrenceID))
                    ORDER BY completed_at DESC, occurrence_id DESC LIMIT \(page.limit + 1)
                    """, on: connection)
                return page.page(fetched) { ChoreCursor(at: $0.completedAt ?? Timestamp.supportedRange.lowerBound, occurrenceID: $0.occurrenceID) }
            }
            let after = page.after ?? ChoreCursor(at: .distantPast, occurrenceID: UUID(uuidString: "00000000-0000-0000-0000-000000000000")!)
            fetched = try await occurrences(
                """
                SELECT \(unescaped: Self.columns) FROM chore_occurrences
                WHERE group_id = \(groupID) AND status = 'pending' AND (due_at, occurrence_id) > (\(after.at), \(after.occurrenceID))
                ORDER BY due_at, occurrence_id LIMIT \(page.limit + 1)
                """, on: connection)
            return page.page(fetched) { ChoreCursor(at: $0.dueAt, occurrenceID: $0.occurrenceID) }
        }
    }

    /// Completes a pending occurrence for a household member: their points, the next occurrence, the events.
    func complete(_ occurrenceID: UUID, by userID: UUID, trace: TraceContext) async throws -> ChoreOccurrence {
        try await client.transaction(logger: logger) { connection in
            let now = clock.now()
            guard var occurrence = try await occurrences(
                "SELECT \(unescaped: Self.columns) FROM chore_occurrences WHERE occurrence_id = \(occurrenceID) FOR UPDATE", on: connection
            ).first, try await CatchUp.standard.until({ try await projections.isMember(userID, of: occurrence.groupID, on: connection) })
            else { throw Problem.notFound("No such chore.") }
            guard occurrence.status == "pending" else {
                throw Problem.conflict("chore-already-completed", "This chore was already completed.")
            }
            let member = try await projections.member(userID, on: connection)
            let groupCalendar = LocalCalendar(zoneNamedOrUTC: try await projections.groupTimeZone(occurrence.groupID, on: connection) ?? "UTC")
            let completedOn = groupCalendar.date(at: now)
            try await connection.query(
                """
                UPDATE chore_occurrences SET status = 'completed', completed_by = \(userID), completed_at = \(now)
                WHERE occurrence_id = \(occurrenceID)
                """, logger: logger)
            occurrence.status = "completed"
            occurrence.completedBy = userID
            occurrence.completedAt = now
            occurrence.overdue = false
            try await ledger.append(
                .init(
                    userID: userID, groupID: occurrence.groupID, challengeID: occurrence.choreID, attemptID: nil, points: occurrence.points,
                    reason: .chore, localDate: (member?.calendar ?? groupCalendar).date(at: now), excessQuantity: nil, countsTowardLevel: false),
                at: now, trace: trace, on: connection)
            var nextDue: LocalDate?
            let definition = try await projections.timeline(occurrence.choreID, on: connection)?.latest
            if let definition, let chore = definition.chore {
                nextDue = ChoreSchedule.nextDue(
                    after: occurrence.dueOn, completedOn: completedOn, recurrence: chore.recurrence, anchorDay: chore.firstDueOn.day)
                if let nextDue {
                    try await insert(definition, chore: chore, groupID: occurrence.groupID, dueOn: nextDue, calendar: groupCalendar, on: connection)
                }
            }
            try await outbox.append(
                ChoreOccurrenceChanged(
                    occurrenceID: occurrenceID, choreID: occurrence.choreID, groupID: occurrence.groupID, title: occurrence.title, change: .completed,
                    assigneeID: occurrence.assigneeID, completedBy: userID, points: occurrence.points, dueOn: occurrence.dueOn,
                    dueAt: occurrence.dueAt, nextDueOn: nextDue, changedAt: now, dueTime: definition?.chore?.dueTime),
                on: connection, at: now, trace: trace, logger: logger)
            return occurrence
        }
    }

    /// Flags pending occurrences whose due time passed; returns how many.
    func flagOverdue() async throws -> Int {
        try await client.transaction(logger: logger) { connection in
            let now = clock.now()
            let flagged = try await occurrences(
                """
                UPDATE chore_occurrences SET overdue_at = \(now)
                WHERE occurrence_id IN (
                    SELECT occurrence_id FROM chore_occurrences WHERE status = 'pending' AND overdue_at IS NULL AND due_at <= \(now)
                    ORDER BY due_at LIMIT 500 FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: Self.columns)
                """, on: connection)
            for occurrence in flagged {
                let dueTime = try await projections.timeline(occurrence.choreID, on: connection)?.latest.chore?.dueTime
                try await outbox.append(
                    ChoreOccurrenceChanged(
                        occurrenceID: occurrence.occurrenceID, choreID: occurrence.choreID, groupID: occurrence.groupID, title: occurrence.title,
                        change: .overdue, assigneeID: occurrence.assigneeID, completedBy: nil, points: occurrence.points, dueOn: occurrence.dueOn,
                        dueAt: occurrence.dueAt, nextDueOn: nil, changedAt: now, dueTime: dueTime),
                    on: connection, at: now, logger: logger)
            }
            return flagged.count
        }
    }
}

struct ChoreCursor: Codable, Sendable {
    var at: Date
    var occurrenceID: UUID
}
