import Foundation
import Hummingbird
import Logging
import PostgresNIO
import SurgeRuntime

/// The inbox's routes and the caller's data export: every query scoped to the caller.
struct InboxController {
    let client: PostgresClient
    let pushTokens: PushTokenStore
    let logger: Logger

    struct Position: Codable, Sendable {
        var createdAt: Date
        var id: UUID
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(NotificationsAPI.list) { request, context in
            let caller = try context.caller()
            let page = try PageRequest<Position>(request)
            let after = page.after
            let rows = try await client.query(
                """
                SELECT \(unescaped: Self.columns) FROM inbox
                WHERE user_id = \(caller) AND archived_at IS NULL
                  AND (\(after == nil) OR (created_at, notification_id) < (\(after?.createdAt ?? Date()), \(after?.id ?? UUID())))
                ORDER BY created_at DESC, notification_id DESC LIMIT \(page.limit + 1)
                """, logger: logger
            ).collect().map(Self.view)
            let paged = page.page(rows) { Position(createdAt: $0.createdAt, id: $0.notificationID) }
            return NotificationPageView(items: paged.items, nextCursor: paged.nextCursor, unread: try await unread(caller))
        }
        router.add(NotificationsAPI.unreadCount) { _, context in
            UnreadCountView(unread: try await unread(try context.caller()))
        }
        router.add(NotificationsAPI.markRead) { request, context in
            try await update(request, context, "read_at = COALESCE(read_at, now())")
        }
        router.add(NotificationsAPI.archive) { request, context in
            try await update(request, context, "read_at = COALESCE(read_at, now()), archived_at = COALESCE(archived_at, now())")
        }
        router.add(NotificationsAPI.markAllRead) { _, context in
            let caller = try context.caller()
            try await client.query("UPDATE inbox SET read_at = now() WHERE user_id = \(caller) AND read_at IS NULL", logger: logger)
            return UnreadCountView(unread: try await unread(caller))
        }
        router.get("/internal/export") { _, context in
            let caller = try context.caller()
            let rows = try await client.query(
                """
                SELECT \(unescaped: Self.columns) FROM inbox
                WHERE user_id = \(caller) ORDER BY created_at DESC, notification_id DESC
                """, logger: logger
            ).collect().map(Self.view)
            return NotificationsExport(notifications: rows, pushTokens: try await pushTokens.tokens(of: caller).map(PushTokenView.init))
        }
    }

    private func update(_ request: Request, _ context: SurgeRequestContext, _ assignments: String) async throws -> NotificationView {
        let caller = try context.caller()
        let id = try request.uuidParameter("notificationID", context: context)
        var bindings = PostgresBindings()
        bindings.append(id)
        bindings.append(caller)
        let rows = try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    UPDATE inbox SET \(assignments) WHERE notification_id = $1 AND user_id = $2
                    RETURNING \(Self.columns)
                    """, binds: bindings), logger: logger
        ).collect()
        guard let row = rows.first else { throw Problem.notFound("No such notification.") }
        return try Self.view(row)
    }

    private func unread(_ caller: UUID) async throws -> Int {
        try await client.query(
            "SELECT count(*) FROM inbox WHERE user_id = \(caller) AND read_at IS NULL AND archived_at IS NULL", logger: logger
        ).collect().first?.decode(Int.self) ?? 0
    }

    /// What `view` reads, in its order.
    private static let columns = "notification_id, kind, title, body, deep_link, created_at, read_at IS NOT NULL, archived_at IS NOT NULL"

    private static func view(_ row: PostgresRow) throws -> NotificationView {
        let (id, kind, title, body, deepLink, createdAt, read, archived) = try row.decode((UUID, String, String, String, String, Date, Bool, Bool).self)
        return NotificationView(
            notificationID: id, kind: kind, title: title, body: body, deepLink: deepLink, createdAt: createdAt, read: read, archived: archived)
    }
}
