import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeContracts
import SurgeMessaging

/// A push due to one device, claimed for one attempt.
struct ClaimedDelivery: Sendable {
    var deliveryID: UUID
    /// What makes this attempt the claimant's: an outcome is recorded only while the claim still holds.
    var claim: UUID
    /// Attempts so far, this one included.
    var attempts: Int
    var createdAt: Date
    var userID: UUID
    var key: String
    var tokenID: UUID
    var platform: String
    var token: String
    var message: PushMessage
}

/// The pushes still to send: one row per notification and device, written with the inbox row, claimed by workers with
/// `FOR UPDATE SKIP LOCKED` (replicas share the work, none takes another's), deleted once delivered or given up, each
/// end announced through the outbox in the same transaction.
struct PushDeliveryStore: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    /// Queues a push of each notification made at `time` to each of its user's devices on `platforms`, unless the user
    /// turned notifications or its kind's category off (one read of the users not in `recipients`, one insert for
    /// all); inside the transaction that writes the inbox rows. Inside the user's quiet hours (at `now`) it is due when
    /// they end, or not queued once it would no longer be useful then (`QuietPush`).
    static func enqueue(
        _ notifications: [NewNotification], platforms: [PushPlatform], at time: Date, now: Date, recipients known: [UUID: Recipient] = [:],
        connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !platforms.isEmpty, !notifications.isEmpty else { return }
        let unknown = Set(notifications.map(\.userID)).filter { known[$0] == nil }
        let recipients = unknown.isEmpty
            ? known : known.merging(try await RecipientStore(connection: connection, logger: logger).recipients(Array(unknown))) { $1 }
        var queued: [(notificationID: UUID, userID: UUID, due: Date)] = []
        for notification in notifications {
            guard let recipient = recipients[notification.userID], recipient.wants(notification.kind) else { continue }
            switch QuietPush.decide(notification.kind, createdAt: time, now: now, quiet: recipient.quiet, in: recipient.calendar) {
            case .now: queued.append((notification.id, notification.userID, min(time, now)))
            case .deferred(let until): queued.append((notification.id, notification.userID, until))
            case .dropped:
                logger.debug(
                    "Push not queued: quiet hours outlast its use", metadata: ["notification": "\(notification.id)", "kind": "\(notification.kind.rawValue)"])
            }
        }
        guard !queued.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO push_deliveries (delivery_id, notification_id, token_id, created_at, next_attempt_at)
            SELECT gen_random_uuid(), q.notification_id, t.token_id, \(time), q.due
            FROM unnest(\(queued.map(\.notificationID)), \(queued.map(\.userID)), \(queued.map(\.due))) AS q (notification_id, user_id, due)
            JOIN push_tokens t ON t.user_id = q.user_id AND t.platform = ANY(\(platforms.map(\.rawValue)))
            """, logger: logger)
    }

    /// Drops the pushes still queued that the recipient no longer wants (switched off globally or by category since
    /// they were queued): a switch applies to the very next send.
    static func dropUnwanted(by recipient: Recipient, connection: PostgresConnection, logger: Logger) async throws {
        let unwanted = recipient.enabled ? NotificationKind.switchedOff(by: recipient.disabledCategories) : NotificationKind.allCases
        try await connection.query(
            """
            DELETE FROM push_deliveries d USING inbox i
            WHERE i.notification_id = d.notification_id AND i.user_id = \(recipient.userID) AND i.kind = ANY(\(unwanted.map(\.rawValue)))
            """, logger: logger)
    }

    /// Claims up to `limit` due pushes for one attempt each: until `leaseEnd` no other worker takes them, so a worker
    /// that dies mid-send is replaced once the lease runs out.
    func claimDue(now: Date, leaseEnd: Date, limit: Int) async throws -> [ClaimedDelivery] {
        let claim = UUID()
        return try await client.query(
            """
            WITH due AS (
                SELECT delivery_id FROM push_deliveries WHERE next_attempt_at <= \(now)
                ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            UPDATE push_deliveries d SET attempts = d.attempts + 1, next_attempt_at = \(leaseEnd), claim = \(claim)
            FROM due, inbox i, push_tokens t
            WHERE d.delivery_id = due.delivery_id AND i.notification_id = d.notification_id AND t.token_id = d.token_id
            RETURNING d.delivery_id, d.attempts, d.created_at, i.user_id, i.notification_id, i.kind, i.key, i.title, i.body, i.deep_link,
                      t.token_id, t.platform, t.token
            """, logger: logger
        ).collect().map { row in
            let (id, attempts, createdAt, userID, notificationID, kind, key, title, body, deepLink, tokenID, platform, token) = try row.decode(
                (UUID, Int, Date, UUID, UUID, String, String, String, String, String, UUID, String, String).self)
            return ClaimedDelivery(
                deliveryID: id, claim: claim, attempts: attempts, createdAt: createdAt, userID: userID, key: key, tokenID: tokenID,
                platform: platform, token: token,
                message: PushMessage(notificationID: notificationID, kind: kind, title: title, body: body, deepLink: deepLink))
        }
    }

    func delivered(_ delivery: ClaimedDelivery, at now: Date) async throws {
        try await client.transaction(logger: logger) { connection in
            guard try await release(delivery, connection: connection) else { return }
            let message = delivery.message
            _ = try await outbox.append(
                NotificationSent(
                    notificationID: message.notificationID, userID: delivery.userID, kind: message.kind, channel: "push", key: delivery.key, sentAt: now),
                on: connection, at: now, logger: logger)
        }
    }

    func retry(_ delivery: ClaimedDelivery, at instant: Date, reason: String) async throws {
        try await client.query(
            """
            UPDATE push_deliveries SET next_attempt_at = \(instant), claim = NULL, last_error = \(reason)
            WHERE delivery_id = \(delivery.deliveryID) AND claim = \(delivery.claim)
            """, logger: logger)
    }

    /// Gives the push up; when the device is gone, forgets the token (and every push still queued for it).
    func failed(_ delivery: ClaimedDelivery, reason: String, forgettingDevice: Bool, at now: Date) async throws {
        try await client.transaction(logger: logger) { connection in
            guard try await release(delivery, connection: connection) else { return }
            if forgettingDevice {
                try await connection.query(
                    "DELETE FROM push_tokens WHERE token_id = \(delivery.tokenID) AND user_id = \(delivery.userID)", logger: logger)
            }
            let message = delivery.message
            _ = try await outbox.append(
                NotificationFailed(
                    notificationID: message.notificationID, userID: delivery.userID, kind: message.kind, channel: "push", key: delivery.key,
                    reason: reason, attempts: delivery.attempts, failedAt: now),
                on: connection, at: now, logger: logger)
        }
    }

    /// Deletes the row if this attempt's claim still holds; false when another worker took it over after the lease.
    private func release(_ delivery: ClaimedDelivery, connection: PostgresConnection) async throws -> Bool {
        try await connection.query(
            "DELETE FROM push_deliveries WHERE delivery_id = \(delivery.deliveryID) AND claim = \(delivery.claim) RETURNING 1", logger: logger
        ).collect().isEmpty == false
    }
}
