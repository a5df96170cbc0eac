import Foundation
import Hummingbird
import SurgeRuntime

struct NotificationView: ResponseCodable {
    var notificationID: UUID
    /// `daily-reminder`, `badge-earned`, `friend-request`, `challenge-invitation`, `overtaken`; the list may grow.
    var kind: String
    var title: String
    var body: String
    /// The screen the app opens: `surge://badges`, `surge://today`...
    var deepLink: String
    var createdAt: Date
    var read: Bool
    var archived: Bool
}

struct NotificationPageView: ResponseCodable {
    var items: [NotificationView]
    var nextCursor: String?
    var unread: Int
}

struct UnreadCountView: ResponseCodable {
    var unread: Int
}

/// The caller's part of the data export: their notifications.
struct NotificationsExport: ResponseCodable {
    var notifications: [NotificationView]
}
