import Foundation

/// A notification reached a channel (the in-app inbox today), for analytics: which kind, to whom, when.
public struct NotificationSent: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.notifications.notification.sent.v1", topic: .notifications,
        summary: "A notification was delivered to a channel (in-app inbox), once per user and notification key.")

    public var notificationID: UUID
    public var userID: UUID
    /// `daily-reminder`, `badge-earned`, `friend-request`, `challenge-invitation`, `overtaken`; the list may grow.
    public var kind: String
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

/// A notification could not be delivered on a channel and will not be tried again (a webhook whose every retry
/// failed, or whose subscription was disabled), for analytics.
public struct NotificationFailed: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.notifications.notification.failed.v1", topic: .notifications,
        summary: "A notification could not be delivered on a channel and will not be tried again.")

    public var notificationID: UUID
    public var userID: UUID
    public var kind: String
    public var channel: String
    public var key: String
    /// Why, for people: the last answer or error.
    public var reason: String
    public var failedAt: Date

    public init(notificationID: UUID, userID: UUID, kind: String, channel: String, key: String, reason: String, failedAt: Date) {
        self.notificationID = notificationID
        self.userID = userID
        self.kind = kind
        self.channel = channel
        self.key = key
        self.reason = reason
        self.failedAt = failedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)/notifications/\(notificationID.key)" }
}
