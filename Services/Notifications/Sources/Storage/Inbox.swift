import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgeRuntime

/// A notification about to be written to a user's inbox, under the key that makes it once-only.
struct NewNotification: Sendable {
    var id = UUID.timeOrdered()
    var userID: UUID
    var kind: NotificationKind
    var key: String
    var message: Message
}

/// The in-app inbox: one row per (user, key), so a notification is written once whatever the redeliveries; each
/// new row is announced as `notification.sent` through the outbox, queued for the user's push devices and for the
/// webhooks that hear it, in the same transaction.
struct Inbox: Sendable {
    let outbox: Outbox
    /// The push platforms whose channel is configured; devices on the others are not sent to.
    let pushPlatforms: [PushPlatform]
    let webhooks: WebhookQueue
    /// The service's now: quiet hours are judged when a push is queued.
    let clock: ServiceClock

    /// Writes the notification unless the user already has one with this key; returns whether it was new.
    @discardableResult
    func deliver(
        _ message: Message, kind: NotificationKind, key: String, to userID: UUID, at time: Date, connection: PostgresConnection, logger: Logger
    ) async throws -> Bool {
        try await deliver([NewNotification(userID: userID, kind: kind, key: key, message: message)], at: time, connection: connection, logger: logger)
            .isEmpty == false
    }

    /// Writes each notification unless its user already has one with its key, in one statement (the rows in user
    /// order: transactions naming the same users lock them in the same order, so they never deadlock), and announces
    /// the new ones; returns them. `recipients` may hold what the caller already read of the users (their push
    /// settings are read only for the others).
    @discardableResult
    func deliver(
        _ notifications: [NewNotification], at time: Date, recipients: [UUID: Recipient] = [:], connection: PostgresConnection, logger: Logger
    ) async throws -> [NewNotification] {
        guard !notifications.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            INSERT INTO inbox (notification_id, user_id, kind, key, title, body, deep_link, created_at)
            SELECT notification_id, user_id, kind, key, title, body, deep_link, \(time)
            FROM unnest(\(notifications.map(\.id)), \(notifications.map(\.userID)), \(notifications.map(\.kind.rawValue)), \(notifications.map(\.key)),
                        \(notifications.map(\.message.title)), \(notifications.map(\.message.body)), \(notifications.map(\.message.deepLink)))
                 AS new (notification_id, user_id, kind, key, title, body, deep_link)
            ORDER BY user_id
            ON CONFLICT (user_id, key) DO NOTHING
            RETURNING notification_id
            """, logger: logger
        ).collect()
        let inserted = Set(try rows.map { try $0.decode(UUID.self) })
        let new = notifications.filter { inserted.contains($0.id) }
        try await announce(new, at: time, recipients: recipients, connection: connection, logger: logger)
        return new
    }

    /// A notification that replaces its user's earlier one with the same key, as of `time`.
    struct Replacement: Sendable {
        var notification: NewNotification
        var time: Date
    }

    /// Writes each user's notification, or replaces their earlier one with its key (the latest standing wins; of two at
    /// one time, the later given), in one statement, the rows in user order (two consumer transactions naming the same
    /// users lock them in the same order, so they never deadlock). A notification that would not change is not
    /// rewritten; only new ones are announced. `recipients` may hold what the caller already read of the users.
    func replace(_ replacements: [Replacement], recipients: [UUID: Recipient] = [:], connection: PostgresConnection, logger: Logger) async throws {
        var latest: [String: Int] = [:]
        var written: [Replacement] = []
        for replacement in replacements {
            let slot = "\(replacement.notification.userID.key) \(replacement.notification.key)"
            if let index = latest[slot] {
                if written[index].time <= replacement.time { written[index] = replacement }
            } else {
                latest[slot] = written.count
                written.append(replacement)
            }
        }
        guard !written.isEmpty else { return }
        let notifications = written.map(\.notification)
        let rows = try await connection.query(
            """
            INSERT INTO inbox (notification_id, user_id, kind, key, title, body, deep_link, created_at)
            SELECT * FROM unnest(\(notifications.map(\.id)), \(notifications.map(\.userID)), \(notifications.map(\.kind.rawValue)),
                                 \(notifications.map(\.key)), \(notifications.map(\.message.title)), \(notifications.map(\.message.body)),
                                 \(notifications.map(\.message.deepLink)), \(written.map(\.time)))
                AS new (notification_id, user_id, kind, key, title, body, deep_link, created_at)
            ORDER BY user_id, key
            ON CONFLICT (user_id, key) DO UPDATE SET title = EXCLUDED.title, body = EXCLUDED.body, deep_link = EXCLUDED.deep_link
            WHERE inbox.created_at <= EXCLUDED.created_at
              AND (inbox.title, inbox.body, inbox.deep_link) IS DISTINCT FROM (EXCLUDED.title, EXCLUDED.body, EXCLUDED.deep_link)
            RETURNING notification_id
            """, logger: logger
        ).collect()
        let returned = Set(try rows.map { try $0.decode(UUID.self) })
        let new = written.filter { returned.contains($0.notification.id) }
        // Each time's in one pass, earliest first.
        for time in Set(new.map(\.time)).sorted() {
            try await announce(
                new.filter { $0.time == time }.map(\.notification), at: time, recipients: recipients, connection: connection, logger: logger)
        }
    }

    /// `notification.sent` for each, in one outbox insert; their pushes and webhook messages queued, each in one pass.
    private func announce(
        _ notifications: [NewNotification], at time: Date, recipients: [UUID: Recipient] = [:], connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !notifications.isEmpty else { return }
        try await outbox.append(
            notifications.map { notification in
                try outbox.record(
                    NotificationSent(
                        notificationID: notification.id, userID: notification.userID, kind: notification.kind.rawValue, channel: "inbox",
                        key: notification.key, sentAt: time),
                    at: time)
            }, on: connection, logger: logger)
        try await PushQueue(connection: connection, logger: logger).enqueue(
            notifications, platforms: pushPlatforms, at: time, now: clock.now(), recipients: recipients)
        try await webhooks.enqueue(notifications, createdAt: time, connection: connection, logger: logger)
    }
}
