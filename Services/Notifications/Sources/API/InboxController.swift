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

    private var inbox: InboxStore { InboxStore(client: client, logger: logger) }

    struct Position: Codable, Sendable {
        var createdAt: Date
        var id: UUID
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(NotificationsAPI.list) { request, context in
            let caller = try context.caller()
            let page = try PageRequest<Position>(request)
            let rows = try await inbox.unarchived(of: caller, after: page.after.map { ($0.createdAt, $0.id) }, limit: page.limit + 1)
            let paged = page.page(rows) { Position(createdAt: $0.createdAt, id: $0.notificationID) }
            return NotificationPageView(items: paged.items, nextCursor: paged.nextCursor, unread: try await inbox.unreadCount(of: caller))
        }
        router.add(NotificationsAPI.unreadCount) { _, context in
            UnreadCountView(unread: try await inbox.unreadCount(of: try context.caller()))
        }
        router.add(NotificationsAPI.markRead) { request, context in
            try await update(request, context, inbox.markRead)
        }
        router.add(NotificationsAPI.archive) { request, context in
            try await update(request, context, inbox.archive)
        }
        router.add(NotificationsAPI.markAllRead) { _, context in
            let caller = try context.caller()
            try await inbox.markAllRead(of: caller)
            return UnreadCountView(unread: try await inbox.unreadCount(of: caller))
        }
        router.get("/internal/export") { _, context in
            let caller = try context.caller()
            let rows = try await inbox.all(of: caller)
            return NotificationsExport(notifications: rows, pushTokens: try await pushTokens.tokens(of: caller).map(PushTokenView.init))
        }
    }

    private func update(
        _ request: Request, _ context: SurgeRequestContext, _ change: (_ notificationID: UUID, _ userID: UUID) async throws -> NotificationView?
    ) async throws -> NotificationView {
        let caller = try context.caller()
        let id = try request.uuidParameter("notificationID", context: context)
        guard let view = try await change(id, caller) else { throw Problem.notFound("No such notification.") }
        return view
    }
}
