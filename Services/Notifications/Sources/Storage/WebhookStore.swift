import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeContracts
import SurgePostgres

/// A webhook subscription as its owner sees it (the secret is shown only when it is made).
struct WebhookSubscription: Sendable {
    var webhookID: UUID
    var ownerID: UUID
    var groupID: UUID?
    var url: String
    var disabledAt: Date?
    var disabledReason: String?
    var failingSince: Date?
    var consecutiveFailures: Int
    var lastFailure: String?
    var lastFailureAt: Date?
    var previousSecretUntil: Date?
    var createdAt: Date

    /// What `init(row:)` reads, in its order.
    static let columns = """
        webhook_id, owner_id, group_id, url, disabled_at, disabled_reason, failing_since, consecutive_failures, last_failure, last_failure_at,
        previous_secret_until, created_at
        """

    init(row: PostgresRow) throws {
        (webhookID, ownerID, groupID, url, disabledAt, disabledReason, failingSince, consecutiveFailures, lastFailure, lastFailureAt,
            previousSecretUntil, createdAt) = try row.decode((UUID, UUID, UUID?, String, Date?, String?, Date?, Int, String?, Date?, Date?, Date).self)
    }
}

struct WebhookAttempt: Sendable {
    var deliveryID: UUID
    var notificationID: UUID
    var attempt: Int
    var attemptedAt: Date
    var statusCode: Int?
    var outcome: String
    var detail: String?
    var durationMilliseconds: Int
}

/// A message due for an attempt, with what signing and sending it needs.
struct DueDelivery: Sendable {
    var deliveryID: UUID
    var webhookID: UUID
    var notificationID: UUID
    var userID: UUID
    var kind: String
    var key: String
    var body: String
    var attempts: Int
    var url: String
    var secrets: [WebhookSecret]
}

/// The SQL of webhooks: subscriptions scoped to their owner, the messages waiting for an attempt, and what each
/// attempt answered.
struct WebhookStore {
    let connection: PostgresConnection
    let logger: Logger

    static let maxPerOwner = 10
    static let recentAttempts = 20

    func count(ownedBy ownerID: UUID) async throws -> Int {
        try await connection.query("SELECT count(*) FROM webhook_subscriptions WHERE owner_id = \(ownerID)", logger: logger)
            .collect().first?.decode(Int.self) ?? 0
    }

    func isMember(_ userID: UUID, of groupID: UUID) async throws -> Bool {
        try await connection.query("SELECT 1 FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger)
            .collect().isEmpty == false
    }

    func create(
        _ webhookID: UUID, owner ownerID: UUID, group groupID: UUID?, url: String, secret: WebhookSecret, at now: Date
    ) async throws -> WebhookSubscription {
        let rows = try await connection.query(
            """
            INSERT INTO webhook_subscriptions (webhook_id, owner_id, group_id, url, secret, created_at)
            VALUES (\(webhookID), \(ownerID), \(groupID), \(url), \(secret.text), \(now))
            RETURNING \(unescaped: WebhookSubscription.columns)
            """, logger: logger
        ).collect()
        return try WebhookSubscription(row: rows[0])
    }

    func subscription(_ webhookID: UUID, ownedBy ownerID: UUID) async throws -> WebhookSubscription? {
        try await connection.query(
            """
            SELECT \(unescaped: WebhookSubscription.columns) FROM webhook_subscriptions WHERE webhook_id = \(webhookID) AND owner_id = \(ownerID)
            """, logger: logger
        ).collect().first.map(WebhookSubscription.init)
    }

    /// The owner's subscriptions in creation order, after the position (`createdAt`, `webhookID`) if one is given.
    func subscriptions(ownedBy ownerID: UUID, after position: (Date, UUID)?, limit: Int) async throws -> [WebhookSubscription] {
        try await connection.query(
            """
            SELECT \(unescaped: WebhookSubscription.columns) FROM webhook_subscriptions
            WHERE owner_id = \(ownerID)
              AND (\(position == nil) OR (created_at, webhook_id) > (\(position?.0 ?? Date()), \(position?.1 ?? UUID())))
            ORDER BY created_at, webhook_id LIMIT \(limit)
            """, logger: logger
        ).collect().map(WebhookSubscription.init)
    }

    func attempts(of webhookID: UUID) async throws -> [WebhookAttempt] {
        try await connection.query(
            """
            SELECT a.delivery_id, d.notification_id, a.attempt, a.attempted_at, a.status_code, a.outcome, a.detail, a.duration_ms
            FROM webhook_attempts a JOIN webhook_deliveries d USING (delivery_id)
            WHERE a.webhook_id = \(webhookID) ORDER BY a.attempted_at DESC, a.attempt DESC LIMIT \(Self.recentAttempts)
            """, logger: logger
        ).collect().map { row in
            let (delivery, notification, attempt, at, status, outcome, detail, duration) = try row.decode(
                (UUID, UUID, Int, Date, Int?, String, String?, Int).self)
            return WebhookAttempt(
                deliveryID: delivery, notificationID: notification, attempt: attempt, attemptedAt: at, statusCode: status, outcome: outcome,
                detail: detail, durationMilliseconds: duration)
        }
    }

    @discardableResult
    func delete(_ webhookID: UUID, ownedBy ownerID: UUID) async throws -> Bool {
        try await connection.query(
            "DELETE FROM webhook_subscriptions WHERE webhook_id = \(webhookID) AND owner_id = \(ownerID) RETURNING 1", logger: logger
        ).collect().isEmpty == false
    }

    /// A new secret; the current one keeps signing too until `graceUntil`.
    func rotate(_ webhookID: UUID, ownedBy ownerID: UUID, to secret: WebhookSecret, graceUntil: Date) async throws -> WebhookSubscription? {
        try await connection.query(
            """
            UPDATE webhook_subscriptions SET previous_secret = secret, previous_secret_until = \(graceUntil), secret = \(secret.text)
            WHERE webhook_id = \(webhookID) AND owner_id = \(ownerID)
            RETURNING \(unescaped: WebhookSubscription.columns)
            """, logger: logger
        ).collect().first.map(WebhookSubscription.init)
    }

    /// Active again, with a clean failure record: messages from now on are sent (those dropped while it was off are not).
    func enable(_ webhookID: UUID, ownedBy ownerID: UUID) async throws -> WebhookSubscription? {
        try await connection.query(
            """
            UPDATE webhook_subscriptions SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, consecutive_failures = 0
            WHERE webhook_id = \(webhookID) AND owner_id = \(ownerID)
            RETURNING \(unescaped: WebhookSubscription.columns)
            """, logger: logger
        ).collect().first.map(WebhookSubscription.init)
    }

    func setMembership(_ groupID: UUID, _ userID: UUID, member: Bool) async throws {
        try await BeforeCommit.writeGathered(RankChanged.self, on: connection, logger: logger)
        if member {
            try await connection.query(
                "INSERT INTO group_members (group_id, user_id) VALUES (\(groupID), \(userID)) ON CONFLICT DO NOTHING", logger: logger)
        } else {
            try await connection.query("DELETE FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger)
            // A member who left no longer speaks for the group: their subscription to it ends.
            try await connection.query(
                "DELETE FROM webhook_subscriptions WHERE group_id = \(groupID) AND owner_id = \(userID)", logger: logger)
        }
    }

    /// Queues each notification for every active subscription that hears it: its user's own, and those of the groups
    /// the user belongs to (one read for all of them, one insert). `message` gives each its kind, key and body.
    /// Returns how many messages were queued.
    @discardableResult
    func enqueue(
        _ notifications: [(notificationID: UUID, userID: UUID)],
        body message: (_ notificationID: UUID, _ userID: UUID, _ groupID: UUID?) throws -> (kind: String, key: String, body: String), at now: Date
    ) async throws -> Int {
        guard !notifications.isEmpty else { return 0 }
        let targets = try await connection.query(
            """
            SELECT n.notification_id, n.user_id, s.webhook_id, s.group_id
            FROM unnest(\(notifications.map(\.notificationID)), \(notifications.map(\.userID))) AS n (notification_id, user_id)
            JOIN webhook_subscriptions s ON s.disabled_at IS NULL
              AND ((s.group_id IS NULL AND s.owner_id = n.user_id)
                OR s.group_id IN (SELECT group_id FROM group_members WHERE user_id = n.user_id))
            """, logger: logger
        ).collect().map { try $0.decode((UUID, UUID, UUID, UUID?).self) }
        guard !targets.isEmpty else { return 0 }
        let messages = try targets.map { try message($0.0, $0.1, $0.3) }
        try await connection.query(
            """
            INSERT INTO webhook_deliveries (delivery_id, webhook_id, notification_id, user_id, kind, key, body, next_attempt_at, created_at)
            SELECT gen_random_uuid(), webhook_id, notification_id, user_id, kind, key, body, \(now), \(now)
            FROM unnest(\(targets.map(\.2)), \(targets.map(\.0)), \(targets.map(\.1)), \(messages.map(\.kind)), \(messages.map(\.key)),
                        \(messages.map(\.body))) AS new (webhook_id, notification_id, user_id, kind, key, body)
            ON CONFLICT (webhook_id, notification_id) DO NOTHING
            """, logger: logger)
        return targets.count
    }

    /// Claims up to `limit` due messages of active subscriptions for `lease`: another replica skips them, and a
    /// replica that dies mid-attempt leaves them due again once the lease ends.
    func claimDue(at now: Date, limit: Int, lease: TimeInterval) async throws -> [DueDelivery] {
        let rows = try await connection.query(
            """
            SELECT d.delivery_id, d.webhook_id, d.notification_id, d.user_id, d.kind, d.key, d.body, d.attempts, s.url, s.secret,
                   CASE WHEN s.previous_secret_until > \(now) THEN s.previous_secret END
            FROM webhook_deliveries d JOIN webhook_subscriptions s USING (webhook_id)
            WHERE d.next_attempt_at <= \(now) AND s.disabled_at IS NULL
            ORDER BY d.next_attempt_at LIMIT \(limit)
            FOR UPDATE OF d SKIP LOCKED
            """, logger: logger
        ).collect()
        let due = try rows.map { row in
            let (delivery, webhook, notification, user, kind, key, body, attempts, url, secret, previous) = try row.decode(
                (UUID, UUID, UUID, UUID, String, String, String, Int, String, String, String?).self)
            return DueDelivery(
                deliveryID: delivery, webhookID: webhook, notificationID: notification, userID: user, kind: kind, key: key, body: body,
                attempts: attempts, url: url, secrets: [secret, previous].compactMap { $0.flatMap { WebhookSecret($0) } })
        }
        for delivery in due {
            try await connection.query(
                "UPDATE webhook_deliveries SET next_attempt_at = \(now.addingTimeInterval(lease)) WHERE delivery_id = \(delivery.deliveryID)",
                logger: logger)
        }
        return due
    }

    enum DeliveryState {
        /// Deleted with its subscription or its user while the attempt ran.
        case gone
        /// Its subscription was disabled while the attempt ran.
        case disabled
        case live
    }

    /// Locks the subscription and the message for recording an attempt and says whether it still matters.
    func lockForRecording(_ deliveryID: UUID, of webhookID: UUID) async throws -> DeliveryState {
        // The subscription first, then the message: the order a deletion of the subscription locks them in (its
        // cascade reaches the messages second), so that recording and deleting never deadlock.
        let subscription = try await connection.query(
            "SELECT disabled_at IS NOT NULL FROM webhook_subscriptions WHERE webhook_id = \(webhookID) FOR UPDATE", logger: logger
        ).collect()
        guard let disabled = try subscription.first?.decode(Bool.self) else { return .gone }
        let message = try await connection.query(
            "SELECT 1 FROM webhook_deliveries WHERE delivery_id = \(deliveryID) FOR UPDATE", logger: logger
        ).collect()
        guard !message.isEmpty else { return .gone }
        return disabled ? .disabled : .live
    }

    func record(_ attempt: WebhookAttempt, webhookID: UUID) async throws {
        try await connection.query(
            """
            INSERT INTO webhook_attempts (delivery_id, attempt, webhook_id, attempted_at, status_code, outcome, detail, duration_ms)
            VALUES (\(attempt.deliveryID), \(attempt.attempt), \(webhookID), \(attempt.attemptedAt), \(attempt.statusCode), \(attempt.outcome),
                    \(attempt.detail), \(attempt.durationMilliseconds))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// The message is finished (`outcome`) or waits for `nextAttempt`.
    func settle(_ deliveryID: UUID, attempts: Int, nextAttempt: Date?, outcome: String?) async throws {
        try await connection.query(
            """
            UPDATE webhook_deliveries SET attempts = \(attempts), next_attempt_at = \(nextAttempt), outcome = \(outcome)
            WHERE delivery_id = \(deliveryID)
            """, logger: logger)
    }

    func noteSuccess(_ webhookID: UUID) async throws {
        try await connection.query(
            "UPDATE webhook_subscriptions SET failing_since = NULL, consecutive_failures = 0 WHERE webhook_id = \(webhookID)", logger: logger)
    }

    /// Counts a failed attempt; returns since when the subscription has been failing and how many attempts in a row.
    func noteFailure(_ webhookID: UUID, _ failure: String, at now: Date) async throws -> (since: Date, failures: Int) {
        let rows = try await connection.query(
            """
            UPDATE webhook_subscriptions SET failing_since = COALESCE(failing_since, \(now)), consecutive_failures = consecutive_failures + 1,
                last_failure = \(failure), last_failure_at = \(now)
            WHERE webhook_id = \(webhookID) RETURNING failing_since, consecutive_failures
            """, logger: logger
        ).collect()
        guard let row = rows.first else { return (now, 0) }
        return try row.decode((Date, Int).self)
    }

    /// Switches the subscription off; returns the messages it still had waiting, which will not be sent.
    func disable(_ webhookID: UUID, reason: String, at now: Date) async throws -> [DueDelivery] {
        try await connection.query(
            """
            UPDATE webhook_subscriptions SET disabled_at = \(now), disabled_reason = \(reason) WHERE webhook_id = \(webhookID) AND disabled_at IS NULL
            """, logger: logger)
        return try await connection.query(
            """
            UPDATE webhook_deliveries SET next_attempt_at = NULL, outcome = 'cancelled'
            WHERE webhook_id = \(webhookID) AND next_attempt_at IS NOT NULL
            RETURNING delivery_id, notification_id, user_id, kind, key, attempts
            """, logger: logger
        ).collect().map { row in
            let (delivery, notification, user, kind, key, attempts) = try row.decode((UUID, UUID, UUID, String, String, Int).self)
            return DueDelivery(
                deliveryID: delivery, webhookID: webhookID, notificationID: notification, userID: user, kind: kind, key: key, body: "",
                attempts: attempts, url: "", secrets: [])
        }
    }
}
