import Foundation
import Logging
import PostgresNIO

/// The inbox as its owner reads and changes it (`InboxController`): every statement names the user whose
/// notifications it reads or changes.
struct InboxStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// The user's notifications not archived, the newest first, from after a position (created at, id) if given.
    func unarchived(of userID: UUID, after position: (createdAt: Date, id: UUID)?, limit: Int) async throws -> [NotificationView] {
        try await client.query(
            """
            SELECT \(unescaped: Self.columns) FROM inbox
            WHERE user_id = \(userID) AND archived_at IS NULL
              AND (\(position == nil) OR (created_at, notification_id) < (\(position?.createdAt ?? Date()), \(position?.id ?? UUID())))
            ORDER BY created_at DESC, notification_id DESC LIMIT \(limit)
            """, logger: logger
        ).collect().map(Self.view)
    }

    /// Every notification of the user, archived ones too, the newest first.
    func all(of userID: UUID) async throws -> [NotificationView] {
        try await client.query(
            """
            SELECT \(unescaped: Self.columns) FROM inbox
            WHERE user_id = \(userID) ORDER BY created_at DESC, notification_id DESC
            """, logger: logger
        ).collect().map(Self.view)
    }

    func unreadCount(of userID: UUID) async throws -> Int {
        try await client.query(
            "SELECT count(*) FROM inbox WHERE user_id = \(userID) AND read_at IS NULL AND archived_at IS NULL", logger: logger
        ).collect().first?.decode(Int.self) ?? 0
    }

    /// The notification marked read; nil when the user has no such notification.
    func markRead(_ notificationID: UUID, of userID: UUID) async throws -> NotificationView? {
        try await update(notificationID, of: userID, "read_at = COALESCE(read_at, now())")
    }

    /// The notification archived (and read); nil when the user has no such notification.
    func archive(_ notificationID: UUID, of userID: UUID) async throws -> NotificationView? {
        try await update(notificationID, of: userID, "read_at = COALESCE(read_at, now()), archived_at = COALESCE(archived_at, now())")
    }

    func markAllRead(of userID: UUID) async throws {
        try await client.query("UPDATE inbox SET read_at = now() WHERE user_id = \(userID) AND read_at IS NULL", logger: logger)
    }

    private func update(_ notificationID: UUID, of userID: UUID, _ assignments: String) async throws -> NotificationView? {
        var bindings = PostgresBindings()
        bindings.append(notificationID)
        bindings.append(userID)
        let rows = try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    UPDATE inbox SET \(assignments) WHERE notification_id = $1 AND user_id = $2
                    RETURNING \(Self.columns)
                    """, binds: bindings), logger: logger
        ).collect()
        return try rows.first.map(Self.view)
    }

    /// What `view` reads, in its order.
    private static let columns = "notification_id, kind, title, body, deep_link, created_at, read_at IS NOT NULL, archived_at IS NOT NULL"

    private static func view(_ row: PostgresRow) throws -> NotificationView {
        let (id, kind, title, body, deepLink, createdAt, read, archived) = try row.decode((UUID, String, String, String, String, Date, Bool, Bool).self)
        return NotificationView(
            notificationID: id, kind: kind, title: title, body: body, deepLink: deepLink, createdAt: createdAt, read: read, archived: archived)
    }
}
