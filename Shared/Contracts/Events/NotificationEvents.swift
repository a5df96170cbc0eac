import Foundation

/// A notification reached a channel (the in-app inbox or a push device), for analytics: which kind, to whom, when.
public struct NotificationSent: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.notifications.notification.sent.v1", topic: .notifications,
        summary: "A notification was delivered to a channel: the in-app inbox once per user and notification key, push once per device.")

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
        summary: "A notification could not be delivered to a channel (push or webhook): device gone, refused, or retries exhausted.")

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
