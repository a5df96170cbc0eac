import Foundation

/// A notification reached a channel (the in-app inbox or a push device), for analytics: which kind, to whom, when.
public struct NotificationSent: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.notifications.notification.sent.v1", topic: .notifications,
        summary: "A notification was delivered to a channel: the in-app inbox once per user and notification key, push once per device.",
        emitted: """
            When the notifications service puts a notification in a user's in-app inbox (`inbox`, once per user and \
            key): for an event it consumes (a friend request, an invitation, a badge, being overtaken, a streak \
            milestone, a chore due...) or a scheduled reminder or digest coming due. Then once per channel as \
            delivery succeeds: per device for `push`, per subscription for `webhook`.
            """)

    public static let example = CloudEvent<NotificationSent>.example(id: "2e6a0c8f-d4b7-4913-a5e2-7f1c9b3d0a68", time: "2026-03-12T20:00:01.205Z") {
        NotificationSent(
            notificationID: Example.id("34468c7e-8b61-42ed-a396-bbc4dcdcfefa"), userID: Example.giulia, kind: "daily-reminder", channel: "push",
            key: "daily-reminder:2026-03-12", sentAt: $0)
    }

    public var notificationID: UUID
    public var userID: UUID
    /// `daily-reminder`, `badge-earned`, `friend-request`, `challenge-invitation`, `overtaken`; the list may grow.
    public var kind: String
    /// `inbox` or `push`; the list may grow.
    public var channel: String
    /// What makes it unique for the user: `daily-reminder:2026-11-24`, `badge:chores:2:`...
    public var key: String
    public var sentAt: Date

    public init(notificationID: UUID, userID: UUID, kind: String, channel: String, key: String, sentAt: Date) {
        self.notificationID = notificationID
        self.userID = userID
        self.kind = kind
        self.channel = channel
        self.key = key
        self.sentAt = sentAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)/notifications/\(notificationID.key)" }
}

/// A notification could not be delivered to a channel (push or webhook), for analytics: the device was gone, the provider
/// refused it, or transient failures outlasted the retries. The reason is a short slug, never a token or a secret.
public struct NotificationFailed: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.notifications.notification.failed.v1", topic: .notifications,
        summary: "A notification could not be delivered to a channel (push or webhook): device gone, refused, or retries exhausted.",
        emitted: """
            When a push to a device (`push`) is refused for good (the device is gone) or outlasts its retries \
            (`gave-up: ...`), and when a webhook delivery (`webhook`) fails for good, outlasts its retries or is \
            dropped because its subscription was disabled.
            """)

    public static let example = CloudEvent<NotificationFailed>.example(id: "9b3f7d1e-0a5c-4e82-b6f4-c8d2a0e9f175", time: "2026-03-12T20:00:01.914Z") {
        NotificationFailed(
            notificationID: Example.id("fda051d9-be47-49b5-ba72-c5a4fc0bf467"), userID: Example.marco, kind: "daily-reminder", channel: "push",
            key: "daily-reminder:2026-03-12", reason: "fcm-unregistered", attempts: 1, failedAt: $0)
    }

    public var notificationID: UUID
    public var userID: UUID
    /// `daily-reminder`, `badge-earned`, `friend-request`, `challenge-invitation`, `overtaken`; the list may grow.
    public var kind: String
    /// `push`, `webhook`; the list may grow.
    public var channel: String
    public var key: String
    /// Why, as a slug: `fcm-unregistered`, `apns-bad-device-token`, `gave-up: fcm-http-503`...
    public var reason: String
    /// How many times the channel was tried.
    public var attempts: Int
    public var failedAt: Date

    public init(notificationID: UUID, userID: UUID, kind: String, channel: String, key: String, reason: String, attempts: Int, failedAt: Date) {
        self.notificationID = notificationID
        self.userID = userID
        self.kind = kind
        self.channel = channel
        self.key = key
        self.reason = reason
        self.attempts = attempts
        self.failedAt = failedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)/notifications/\(notificationID.key)" }
}
