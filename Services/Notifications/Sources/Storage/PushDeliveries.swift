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

/// The pushes a transaction queues with its inbox rows, or drops when a recipient's switches change, over its
/// connection; `PushDeliveryStore` sends them.
struct PushQueue {
    let connection: PostgresConnection
    let logger: Logger

    /// Queues a push of each notification made at `time` to each of its user's devices on `platforms`, unless the user
    /// turned notifications or its kind's category off (one read of the users not in `recipients`, one insert for
    /// all); inside the transaction that writes the inbox rows. Inside the user's quiet hours (at `now`) it is due when
    /// they end, or not queued once it would no longer be useful then (`QuietPush`). The users are named twice: joined
    /// to `unnest` alone, PostgreSQL hashes every device of every user; `= ANY` picks only theirs.
    func enqueue(
        _ notifications: [NewNotification], platforms: [PushPlatform], at time: Date, now: Date, recipients known: [UUID: Recipient] = [:]
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
            WHERE t.user_id = ANY(\(queued.map(\.userID)))
            """, logger: logger)
    }

    /// Drops the pushes still queued that the recipient no longer wants (switched off globally or by category since
    /// they were queued): a switch applies to the very next send.
    func dropUnwanted(by recipient: Recipient) async throws {
        let unwanted = recipient.enabled ? NotificationKind.switchedOff(by: recipient.disabledCategories) : NotificationKind.allCases
        try await connection.query(
            """
            DELETE FROM push_deliveries d USING inbox i
            WHERE i.notification_id = d.notification_id AND i.user_id = \(recipient.userID) AND i.kind = ANY(\(unwanted.map(\.rawValue)))
            """, logger: logger)
    }
}

/// The pushes still to send: one row per notification and device, written with the inbox row, claimed by workers with
/// `FOR UPDATE SKIP LOCKED` (replicas share the work, none takes another's), deleted once delivered or given up, each
/// end announced through the outbox in the same transaction.
struct PushDeliveryStore: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

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

    /// What each claimed push came to, written in one transaction: each delivered or finally failed one deleted (if
    /// its claim still holds: another worker may have taken it over after the lease) and announced, the devices gone
    /// forgotten (with every push still queued for them), the others due again at their retry time.
    func record(_ resolutions: [(delivery: ClaimedDelivery, resolution: DeliveryResolution)], at now: Date) async throws {
        guard !resolutions.isEmpty else { return }
        try await client.transaction(logger: logger) { connection in
            var finished: [(delivery: ClaimedDelivery, resolution: DeliveryResolution)] = []
            var retries: [(delivery: ClaimedDelivery, at: Date, reason: String)] = []
            for (delivery, resolution) in resolutions {
                if case .retry(let at, let reason) = resolution { retries.append((delivery, at, reason)) } else { finished.append((delivery, resolution)) }
            }
            if !finished.isEmpty {
                let released = Set(
                    try await connection.query(
                        """
                        DELETE FROM push_deliveries d
                        USING unnest(\(finished.map(\.delivery.deliveryID)), \(finished.map(\.delivery.claim))) AS done (delivery_id, claim)
                        WHERE d.delivery_id = done.delivery_id AND d.claim = done.claim
                        RETURNING d.delivery_id
                        """, logger: logger
                    ).collect().map { try $0.decode(UUID.self) })
                var events: [(EventRecord, topic: String)] = []
                var gone: [ClaimedDelivery] = []
                for (delivery, resolution) in finished where released.contains(delivery.deliveryID) {
                    let message = delivery.message
                    switch resolution {
                    case .delivered:
                        events.append(
                            try outbox.record(
                                NotificationSent(
                                    notificationID: message.notificationID, userID: delivery.userID, kind: message.kind, channel: "push", key: delivery.key,
                                    sentAt: now),
                                at: now))
                    case .failed(let reason, _), .gaveUp(let reason):
                        if case .failed(_, targetGone: true) = resolution { gone.append(delivery) }
                        events.append(
                            try outbox.record(
                                NotificationFailed(
                                    notificationID: message.notificationID, userID: delivery.userID, kind: message.kind, channel: "push",
                                    key: delivery.key, reason: reason, attempts: delivery.attempts, failedAt: now),
                                at: now))
                    case .retry:
                        break
                    }
                }
                if !gone.isEmpty {
                    try await connection.query(
                        """
                        DELETE FROM push_tokens t USING unnest(\(gone.map(\.tokenID)), \(gone.map(\.userID))) AS gone (token_id, user_id)
                        WHERE t.token_id = gone.token_id AND t.user_id = gone.user_id
                        """, logger: logger)
                }
                try await outbox.append(events, on: connection, logger: logger)
            }
            if !retries.isEmpty {
                try await connection.query(
                    """
                    UPDATE push_deliveries d SET next_attempt_at = again.at, claim = NULL, last_error = again.reason
                    FROM unnest(\(retries.map(\.delivery.deliveryID)), \(retries.map(\.delivery.claim)), \(retries.map(\.at)), \(retries.map(\.reason)))
                         AS again (delivery_id, claim, at, reason)
                    WHERE d.delivery_id = again.delivery_id AND d.claim = again.claim
                    """, logger: logger)
            }
        }
    }
}
