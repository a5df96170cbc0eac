import SurgeContracts
import SurgeRuntime

/// The public operations of the in-app inbox, push devices and webhook subscriptions.
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

    static let createWebhook = APIOperation(
        .post, "/v1/webhooks", id: "createWebhook", service: .notifications,
        summary: "Subscribe a URL to the caller's notifications (or, with `groupID`, to those of every member of a group the caller "
            + "belongs to; another group is 404). Messages are signed as Standard Webhooks specifies; the secret is shown here and on "
            + "rotation only.",
        request: CreateWebhookRequest.self, status: .created, response: WebhookWithSecretView.self,
        problems: [.webhookTargetRefused, .webhookLimitReached, .notFound])
    static let listWebhooks = APIOperation(
        .get, "/v1/webhooks", id: "listWebhooks", service: .notifications, summary: "The caller's webhook subscriptions, oldest first.",
        query: APIOperation.QueryParameter.pagination, response: WebhookPageView.self)
    static let getWebhook = APIOperation(
        .get, "/v1/webhooks/{webhookID}", id: "getWebhook", service: .notifications,
        summary: "One of the caller's webhook subscriptions: status, why it was disabled, the last failure and the latest delivery attempts.",
        response: WebhookView.self)
    static let deleteWebhook = APIOperation(
        .delete, "/v1/webhooks/{webhookID}", id: "deleteWebhook", service: .notifications,
        summary: "Delete a webhook subscription; messages still waiting are not sent.", status: .noContent)
    static let rotateWebhookSecret = APIOperation(
        .post, "/v1/webhooks/{webhookID}/rotate-secret", id: "rotateWebhookSecret", service: .notifications,
        summary: "A new signing secret; during the grace period (24 hours by default) messages carry a signature by each secret.",
        response: WebhookWithSecretView.self, idempotent: false)
    static let enableWebhook = APIOperation(
        .post, "/v1/webhooks/{webhookID}/enable", id: "enableWebhook", service: .notifications,
        summary: "Re-enable a disabled subscription, its failure record cleared; notifications from now on are sent.",
        response: WebhookView.self, idempotent: false)

    static let receiveEmailProviderEvent = APIOperation(
        .post, "/v1/email-provider/events", id: "receiveEmailProviderEvent", service: .notifications,
        summary: "Where the e-mail provider reports what became of the mails it accepted (its webhook; not for apps). The message is "
            + "signed as Standard Webhooks specifies (Resend's Svix headers are read too): `webhook-id`, `webhook-timestamp` (Unix "
            + "seconds, within 5 minutes of now) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of id.timestamp.body>` under "
            + "`EMAIL_WEBHOOK_SECRET`); anything else is 401. The body is the provider's event, `{\"type\", \"created_at\", "
            + "\"data\": {\"email_id\", \"to\", \"bounce\": {\"type\", \"subType\"}}}`: `email.bounced` (permanent unless "
            + "`bounce.type` says otherwise), `email.delivery_delayed` and `email.complained` are recorded once per `webhook-id` "
            + "against the mail and its address; a permanent bounce or a complaint stops every later mail to the address. Other "
            + "event types are acknowledged and ignored.",
        access: .anonymous, status: .noContent, problems: [.invalidWebhookSignature, .malformedBody, .validation, .payloadTooLarge])

    static let all = [
        list, unreadCount, markRead, markAllRead, archive, registerPushToken, listPushTokens, deletePushToken, createWebhook, listWebhooks,
        getWebhook, deleteWebhook, rotateWebhookSecret, enableWebhook, receiveEmailProviderEvent,
    ]
}
