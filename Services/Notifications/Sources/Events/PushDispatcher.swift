import Foundation
import Logging
import NotificationsDomain

/// Sends the pushes that are due: claims a batch (no other replica takes it while the lease runs), sends each to its
/// platform's channel at once, and records what came of it. Delivered: announced as `notification.sent` on channel
/// `push`. A device gone: the token is forgotten. A transient failure: tried again after the `RetryPolicy`'s backoff
/// (never sooner than the provider's `Retry-After`) until it gives up. Given up or refused: `notification.failed`.
struct PushDispatcher: Sendable {
    let store: PushDeliveryStore
    let channels: [PushPlatform: any DeliveryChannel<PushMessage>]
    let retry: RetryPolicy
    let now: @Sendable () -> Date
    let logger: Logger

    static let batch = 32
    /// Longer than a send can take (the provider calls time out after 10 s), so a live claim never lapses.
    static let lease: TimeInterval = 60

    /// Sends every push due now; returns how many were tried.
    @discardableResult
    func sendDue() async throws -> Int {
        try await handleDue(batch: Self.batch) {
            let start = now()
            return try await store.claimDue(now: start, leaseEnd: start.addingTimeInterval(Self.lease), limit: Self.batch)
        } handle: { try await send($0) }
    }

    private func send(_ delivery: ClaimedDelivery) async throws {
        let outcome: DeliveryOutcome
        if let platform = PushPlatform(rawValue: delivery.platform), let channel = channels[platform] {
            outcome = await channel.send(delivery.message, to: delivery.token)
        } else {
            outcome = .failed(reason: "\(delivery.platform)-not-configured")
        }
        let at = now()
        var metadata: Logger.Metadata = [
            "delivery": "\(delivery.deliveryID)", "notification": "\(delivery.message.notificationID)", "platform": "\(delivery.platform)",
            "attempt": "\(delivery.attempts)",
        ]
        switch outcome {
        case .delivered, .accepted:
            try await store.delivered(delivery, at: at)
            DeliveryMetrics.record("push", .delivered)
            logger.debug("Push delivered", metadata: metadata)
        case .targetGone(let reason):
            metadata["reason"] = "\(reason)"
            try await store.failed(delivery, reason: reason, forgettingDevice: true, at: at)
            DeliveryMetrics.record("push", .failed)
            logger.info("Push device gone: token forgotten", metadata: metadata)
        case .failed(let reason):
            metadata["reason"] = "\(reason)"
            try await store.failed(delivery, reason: reason, forgettingDevice: false, at: at)
            DeliveryMetrics.record("push", .failed)
            logger.warning("Push refused", metadata: metadata)
        case .retry(let after, let reason):
            metadata["reason"] = "\(reason)"
            switch retry.decide(afterAttempts: delivery.attempts, createdAt: delivery.createdAt, now: at, retryAfter: after, jitter: .random(in: 0..<1)) {
            case .retry(let next):
                try await store.retry(delivery, at: next, reason: reason)
                DeliveryMetrics.record("push", .retried)
                logger.info("Push will be retried", metadata: metadata)
            case .giveUp:
                try await store.failed(delivery, reason: "gave-up: \(reason)", forgettingDevice: false, at: at)
                DeliveryMetrics.record("push", .failed)
                logger.warning("Push given up", metadata: metadata)
            }
        }
    }
}
