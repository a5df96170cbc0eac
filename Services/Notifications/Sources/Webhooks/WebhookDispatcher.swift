import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NotificationsDomain
import PostgresNIO
import ServiceLifecycle
import SurgeContracts
import SurgeMessaging
import SurgeRuntime

/// Sends the webhook messages that are due: claims a batch (`SKIP LOCKED`, with a lease, so replicas share the work
/// and a dead replica's claims come back), makes each attempt outside any transaction, then records what happened
/// and schedules the retry, announces `notification.sent` (channel `webhook`) or `notification.failed`, and disables
/// a subscription that answered 410 or kept failing.
struct WebhookDispatcher: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let http: HTTPClient
    let settings: WebhookSettings
    let clock: ServiceClock
    let logger: Logger

    static let batch = 20
    static let channel = "webhook"

    var lease: TimeInterval { settings.attemptTimeout * 2 + 10 }

    struct Result: Sendable {
        var statusCode: Int?
        var retryAfter: TimeInterval?
        var detail: String?
        var outcome: WebhookAttemptOutcome
        var attemptedAt: Date
        var milliseconds: Int
    }

    /// Attempts every message due now; returns how many.
    @discardableResult
    func sendDue() async throws -> Int {
        var handled = 0
        while true {
            let due = try await client.transaction(logger: logger) { connection in
                try await WebhookStore(connection: connection, logger: logger).claimDue(at: clock.now(), limit: Self.batch, lease: lease)
            }
            // One message failing to be recorded leaves the others' attempts running; its lease brings it back.
            await withTaskGroup(of: Void.self) { group in
                for delivery in due {
                    group.addTask {
                        let result = await attempt(delivery)
                        do {
                            try await record(result, of: delivery)
                        } catch {
                            logger.warning("Webhook attempt not recorded", metadata: ["delivery": "\(delivery.deliveryID)", "error": "\(error)"])
                        }
                    }
                }
            }
            handled += due.count
            if due.count < Self.batch { return handled }
        }
    }

    func attempt(_ delivery: DueDelivery) async -> Result {
        let attemptedAt = clock.now()
        let started = ContinuousClock.now
        func elapsed() -> Int {
            let duration = ContinuousClock.now - started
            return Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        }
        let pinned: IPAddress?
        do {
            pinned = try await WebhookTargetGuard(policy: settings.policy).check(delivery.url, requireResolution: true)
        } catch {
            return Result(detail: "Not sent: the URL \(error).", outcome: .failed, attemptedAt: attemptedAt, milliseconds: elapsed())
        }
        let body = Array(delivery.body.utf8)
        let id = "msg_\(delivery.deliveryID.key)"
        let timestamp = Int(attemptedAt.timeIntervalSince1970)
        var request = HTTPClientRequest(url: delivery.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "Surge-Webhooks/1")
        request.headers.add(name: WebhookSignature.idHeader, value: id)
        request.headers.add(name: WebhookSignature.timestampHeader, value: String(timestamp))
        request.headers.add(
            name: WebhookSignature.signatureHeader, value: WebhookSigner.signatureHeader(id: id, timestamp: timestamp, body: body, secrets: delivery.secrets))
        request.body = .bytes(ByteBuffer(bytes: body))
        let signed = request
        do {
            let answer = try await withDeadline(.seconds(settings.attemptTimeout)) {
                try await withClient(for: delivery.url, pinnedTo: pinned) { client in
                    let response = try await client.execute(signed, timeout: .seconds(Int64(settings.attemptTimeout)), logger: logger)
                    var excerpt = [UInt8]()
                    for try await chunk in response.body {
                        excerpt += chunk.readableBytesView.prefix(WebhookAnswerExcerpt.limit - excerpt.count)
                        if excerpt.count >= WebhookAnswerExcerpt.limit { break }
                    }
                    return (Int(response.status.code), RetryAfter.seconds(response.headers.first(name: "retry-after"), now: attemptedAt), excerpt)
                }
            }
            let (status, retryAfter, excerpt) = answer
            return Result(
                statusCode: status, retryAfter: retryAfter, detail: WebhookAnswerExcerpt.text(excerpt), outcome: .of(status: status),
                attemptedAt: attemptedAt, milliseconds: elapsed())
        } catch {
            return Result(detail: WebhookAnswerExcerpt.text(Array("No answer: \(error)".utf8)), outcome: .failed, attemptedAt: attemptedAt, milliseconds: elapsed())
        }
    }

    /// Runs `body` with the shared client, or, when the host is a name, with a client of its own that connects to the
    /// address just checked (TLS still verifies the name): the shared client would look the name up again.
    private func withClient<T: Sendable>(
        for url: String, pinnedTo pinned: IPAddress?, _ body: (HTTPClient) async throws -> T
    ) async throws -> T {
        guard let pinned, let host = URLComponents(string: url)?.host else { return try await body(http) }
        var configuration = Self.clientConfiguration(timeout: settings.attemptTimeout)
        configuration.dnsOverride = [host: pinned.description]
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let value = try await body(client)
            try await client.shutdown()
            return value
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// Redirects are not followed: the target they name has not passed the address check.
    static func clientConfiguration(timeout: TimeInterval) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(Int64(timeout)), read: .seconds(Int64(timeout)))
        return configuration
    }

    func record(_ result: Result, of delivery: DueDelivery) async throws {
        let attempts = delivery.attempts + 1
        let counted = try await client.transaction(logger: logger) { connection -> DeliveryMetrics.Result? in
            let store = WebhookStore(connection: connection, logger: logger)
            let state = try await store.lockForRecording(delivery.deliveryID, of: delivery.webhookID)
            guard state != .gone else { return nil }
            try await store.record(
                WebhookAttempt(
                    deliveryID: delivery.deliveryID, notificationID: delivery.notificationID, attempt: attempts, attemptedAt: result.attemptedAt,
                    statusCode: result.statusCode, outcome: result.outcome.rawValue, detail: result.detail, durationMilliseconds: result.milliseconds),
                webhookID: delivery.webhookID)
            let now = clock.now()
            guard result.outcome != .delivered else {
                try await store.settle(delivery.deliveryID, attempts: attempts, nextAttempt: nil, outcome: WebhookAttemptOutcome.delivered.rawValue)
                try await store.noteSuccess(delivery.webhookID)
                _ = try await outbox.append(
                    NotificationSent(
                        notificationID: delivery.notificationID, userID: delivery.userID, kind: delivery.kind, channel: Self.channel, key: delivery.key,
                        sentAt: now), on: connection, at: now, logger: logger)
                return .delivered
            }
            // Disabled while the attempt ran: no retry, and the disabling already announced the message's failure.
            guard state == .live else {
                try await store.settle(delivery.deliveryID, attempts: attempts, nextAttempt: nil, outcome: "cancelled")
                return .failed
            }
            let failure = result.statusCode.map { "HTTP \($0)" + (result.detail.map { ": \($0)" } ?? "") } ?? result.detail ?? "failed"
            let next = result.outcome == .gone
                ? nil
                : WebhookRetrySchedule.nextAttempt(
                    afterFailedAttempts: attempts, failedAt: now, retryAfter: result.retryAfter, spread: Double.random(in: 0...1))
            try await store.settle(delivery.deliveryID, attempts: attempts, nextAttempt: next, outcome: next == nil ? result.outcome.rawValue : nil)
            if next == nil { try await announceFailure(delivery, reason: failure, attempts: attempts, at: now, on: connection) }
            let (since, failures) = try await store.noteFailure(delivery.webhookID, failure, at: now)
            if let reason = settings.disableRule.reason(outcome: result.outcome, failingSince: since, failures: failures, now: now) {
                logger.info("Webhook disabled", metadata: ["webhook": "\(delivery.webhookID)", "reason": "\(reason)"])
                for dropped in try await store.disable(delivery.webhookID, reason: reason, at: now) {
                    try await announceFailure(dropped, reason: "The subscription was disabled: \(reason)", attempts: dropped.attempts, at: now, on: connection)
                }
            }
            return next == nil ? .failed : .retried
        }
        if let counted { DeliveryMetrics.record(Self.channel, counted) }
    }

    private func announceFailure(_ delivery: DueDelivery, reason: String, attempts: Int, at now: Date, on connection: PostgresConnection) async throws {
        _ = try await outbox.append(
            NotificationFailed(
                notificationID: delivery.notificationID, userID: delivery.userID, kind: delivery.kind, channel: Self.channel, key: delivery.key,
                reason: reason, attempts: attempts, failedAt: now), on: connection, at: now, logger: logger)
    }
}

struct DeadlineExceeded: Error, CustomStringConvertible {
    var description: String { "the attempt took too long" }
}

/// Runs `work`, abandoning it once `limit` has passed.
func withDeadline<T: Sendable>(_ limit: Duration, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await work() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let value = try await group.next() ?? nil else { throw DeadlineExceeded() }
        return value
    }
}

/// Shuts the webhook HTTP client down once the service stops (after the dispatcher, which is listed after it).
struct HTTPClientService: Service {
    let client: HTTPClient

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}
