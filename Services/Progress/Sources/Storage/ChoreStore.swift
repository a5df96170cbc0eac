import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres

/// A chore occurrence as stored.
struct ChoreOccurrenceRow: Sendable, Equatable {
    var occurrenceID: UUID
    var choreID: UUID
    var groupID: UUID
    var title: String
    var dueOn: LocalDate
    var dueAt: Date
    var assigneeID: UUID?
    var points: Int
    var status: String
    /// Pending past its due time, and flagged so.
    var overdue: Bool
    var completedBy: UUID?
    var completedAt: Date?
}

struct ChoreCursor: Codable, Sendable {
    var at: Date
    var occurrenceID: UUID
}

extension ChoreCursor: KeysetPosition {
    init(instant: Date, id: UUID) { self.init(at: instant, occurrenceID: id) }
}

/// Household chores' occurrences: one pending at a time per chore.
struct ChoreStore {
    let connection: PostgresConnection
    let logger: Logger

    private static let columns = "occurrence_id, chore_id, group_id, title, due_on, due_at, assignee_id, points, status, overdue_at, completed_by, completed_at"

    private func occurrences(_ query: PostgresQuery) async throws -> [ChoreOccurrenceRow] {
        var result: [ChoreOccurrenceRow] = []
        let rows = try await connection.query(query, logger: logger)
        for try await (id, choreID, groupID, title, dueOn, dueAt, assignee, points, status, overdueAt, completedBy, completedAt) in rows.decode(
            (UUID, UUID, UUID, String, LocalDate, Date, UUID?, Int, String, Date?, UUID?, Date?).self)
        {
            result.append(ChoreOccurrenceRow(
                occurrenceID: id, choreID: choreID, groupID: groupID, title: title, dueOn: dueOn, dueAt: dueAt, assigneeID: assignee,
                points: points, status: status, overdue: overdueAt != nil && status == "pending", completedBy: completedBy,
                completedAt: completedAt))
        }
        return result
    }

    func pending(of choreID: UUID) async throws -> ChoreOccurrenceRow? {
        try await occurrences("SELECT \(unescaped: Self.columns) FROM chore_occurrences WHERE chore_id = \(choreID) AND status = 'pending'").first
    }

    func pending(inGroup groupID: UUID) async throws -> [ChoreOccurrenceRow] {
        try await occurrences("SELECT \(unescaped: Self.columns) FROM chore_occurrences WHERE group_id = \(groupID) AND status = 'pending'")
    }

    func hasOccurrences(_ choreID: UUID) async throws -> Bool {
        try await !connection.query("SELECT 1 FROM chore_occurrences WHERE chore_id = \(choreID) LIMIT 1", logger: logger).collect().isEmpty
    }

    func insert(choreID: UUID, groupID: UUID, title: String, dueOn: LocalDate, dueAt: Date, remindAt: Date?, assigneeID: UUID?, points: Int) async throws {
        try await connection.query(
            """
            INSERT INTO chore_occurrences (occurrence_id, chore_id, group_id, title, due_on, due_at, remind_at, assignee_id, points, status)
            VALUES (\(UUID()), \(choreID), \(groupID), \(title), \(dueOn), \(dueAt), \(remindAt), \(assigneeID), \(points), 'pending')
            """, logger: logger)
    }

    /// Brings a pending occurrence in line with its chore's definition. Its reminder ahead of the due time moves with
    /// it; one already sent is not sent again unless the due time moved or the new moment is still to come.
    func update(_ occurrenceID: UUID, title: String, assigneeID: UUID?, points: Int, dueAt: Date, remindAt: Date?, now: Date) async throws {
        try await connection.query(
            """
            UPDATE chore_occurrences SET title = \(title), assignee_id = \(assigneeID), points = \(points), due_at = \(dueAt),
                remind_at = CASE WHEN remind_at IS NOT NULL OR due_at <> \(dueAt) OR \(remindAt) > \(now) THEN \(remindAt) END
            WHERE occurrence_id = \(occurrenceID)
            """, logger: logger)
    }

    func setDueAt(_ dueAt: Date, remindAt: Date?, of occurrenceID: UUID, now: Date) async throws {
        try await connection.query(
            """
            UPDATE chore_occurrences SET due_at = \(dueAt),
                remind_at = CASE WHEN remind_at IS NOT NULL OR due_at <> \(dueAt) OR \(remindAt) > \(now) THEN \(remindAt) END
            WHERE occurrence_id = \(occurrenceID)
            """, logger: logger)
    }

    func delete(choreID: UUID) async throws {
        try await connection.query("DELETE FROM chore_occurrences WHERE chore_id = \(choreID)", logger: logger)
    }

    /// A household's pending occurrences after `after`, by due time.
    func pending(inGroup groupID: UUID, after: ChoreCursor, limit: Int) async throws -> [ChoreOccurrenceRow] {
        try await occurrences(
            """
            SELECT \(unescaped: Self.columns) FROM chore_occurrences
            WHERE group_id = \(groupID) AND status = 'pending' AND (due_at, occurrence_id) > (\(after.at), \(after.occurrenceID))
            ORDER BY due_at, occurrence_id LIMIT \(limit)
            """)
    }

    /// A household's completed occurrences after `after`, newest first.
    func completed(inGroup groupID: UUID, after: ChoreCursor, limit: Int) async throws -> [ChoreOccurrenceRow] {
        try await occurrences(
            """
            SELECT \(unescaped: Self.columns) FROM chore_occurrences
            WHERE group_id = \(groupID) AND status = 'completed' AND (completed_at, occurrence_id) < (\(after.at), \(after.occurrenceID))
            ORDER BY completed_at DESC, occurrence_id DESC LIMIT \(limit)
            """)
    }

    /// The occurrence, locked.
    func lock(_ occurrenceID: UUID) async throws -> ChoreOccurrenceRow? {
        try await occurrences("SELECT \(unescaped: Self.columns) FROM chore_occurrences WHERE occurrence_id = \(occurrenceID) FOR UPDATE").first
    }

    func complete(_ occurrenceID: UUID, by userID: UUID, at now: Date) async throws {
        try await connection.query(
            """
            UPDATE chore_occurrences SET status = 'completed', completed_by = \(userID), completed_at = \(now)
            WHERE occurrence_id = \(occurrenceID)
            """, logger: logger)
    }

    /// Takes up to `limit` pending occurrences whose reminder ahead of the due time came by `now`, and returns them.
    func takeDueReminders(at now: Date, limit: Int) async throws -> [ChoreOccurrenceRow] {
        try await occurrences(
            """
            UPDATE chore_occurrences SET remind_at = NULL
            WHERE occurrence_id IN (
                SELECT occurrence_id FROM chore_occurrences WHERE status = 'pending' AND remind_at <= \(now)
                ORDER BY remind_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: Self.columns)
            """)
    }

    /// Flags up to `limit` pending occurrences whose due time passed by `now`, and returns them.
    func flagOverdue(at now: Date, limit: Int) async throws -> [ChoreOccurrenceRow] {
        try await occurrences(
            """
            UPDATE chore_occurrences SET overdue_at = \(now)
            WHERE occurrence_id IN (
                SELECT occurrence_id FROM chore_occurrences WHERE status = 'pending' AND overdue_at IS NULL AND due_at <= \(now)
                ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: Self.columns)
            """)
    }
}
