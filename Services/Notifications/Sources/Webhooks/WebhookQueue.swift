import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeContracts
import SurgeRuntime

/// The body of every webhook message: the notification as the inbox shows it.
struct WebhookMessage: Encodable {
    static let type = "notification.created"

    struct Notification: Encodable {
        var notificationID: UUID
        var userID: UUID
        /// Set for a group subscription: the group the user belongs to.
        var groupID: UUID?
        var kind: String
        var key: String
        var title: String
        var body: String
        var deepLink: String
        var createdAt: Date
    }

    var type = Self.type
    var timestamp: Date
    var data: Notification
}

/// Queues new notifications for the webhooks that hear them, in the transaction that writes it to the inbox; the
/// first attempt is due at once on the service's clock.
struct WebhookQueue: Sendable {
    let clock: ServiceClock

    func enqueue(_ notifications: [NewNotification], createdAt: Date, connection: PostgresConnection, logger: Logger) async throws {
        let now = clock.now()
        let byID = Dictionary(notifications.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        try await WebhookStore(connection: connection, logger: logger).enqueue(
            notifications.map { ($0.id, $0.userID) },
            body: { notificationID, userID, groupID in
                let new = byID[notificationID]!
                let notification = WebhookMessage.Notification(
                    notificationID: notificationID, userID: userID, groupID: groupID, kind: new.kind.rawValue, key: new.key, title: new.message.title,
                    body: new.message.body, deepLink: new.message.deepLink, createdAt: createdAt)
                return (new.kind.rawValue, new.key, String(decoding: try SurgeJSON.encode(WebhookMessage(timestamp: now, data: notification)), as: UTF8.self))
            }, at: now)
    }
}
