import SurgeContracts
import SurgeRuntime

/// The public operations of the in-app inbox and of push devices.
enum NotificationsAPI {
    static let list = APIOperation(
        .get, "/v1/me/notifications", id: "listMyNotifications", service: .notifications,
        summary: "The caller's in-app notifications, newest first (archived ones left out), with the unread count.",
        query: APIOperation.QueryParameter.pagination, response: NotificationPageView.self)
    static let unreadCount = APIOperation(
        .get, "/v1/me/notifications/unread-count", id: "getMyUnreadNotificationCount", service: .notifications,
        summary: "How many of the caller's notifications are unread (a badge on the app's bell).", response: UnreadCountView.self)
    static let markRead = APIOperation(
        .post, "/v1/me/notifications/{notificationID}/read", id: "markNotificationRead", service: .notifications,
        summary: "Marks one notification read (again: no change).", response: NotificationView.self, idempotent: false)
    static let markAllRead = APIOperation(
        .post, "/v1/me/notifications/read-all", id: "markAllNotificationsRead", service: .notifications,
        summary: "Marks every notification of the caller read.", response: UnreadCountView.self, idempotent: false)
    static let archive = APIOperation(
        .post, "/v1/me/notifications/{notificationID}/archive", id: "archiveNotification", service: .notifications,
        summary: "Archives one notification (read, and no longer listed).", response: NotificationView.self, idempotent: false)
    static let registerPushToken = APIOperation(
        .post, "/v1/me/push-tokens", id: "registerPushToken", service: .notifications,
        summary: "Registers a device for push notifications (FCM or APNs), or refreshes it when the caller already has it. "
            + "A token the provider calls unregistered is forgotten by the server.",
        request: PushTokenRequest.self, response: PushTokenView.self, idempotent: false)
    static let listPushTokens = APIOperation(
        .get, "/v1/me/push-tokens", id: "listMyPushTokens", service: .notifications,
        summary: "The caller's push devices, the latest registered first.", response: PushTokenListView.self)
    static let deletePushToken = APIOperation(
        .delete, "/v1/me/push-tokens/{pushTokenID}", id: "deletePushToken", service: .notifications,
        summary: "Forgets one of the caller's push devices (on sign-out); nothing more is pushed to it.", status: .noContent)

    static let all = [list, unreadCount, markRead, markAllRead, archive, registerPushToken, listPushTokens, deletePushToken]
}
