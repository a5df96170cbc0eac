import Foundation
import Logging
import NotificationsDomain
import SurgeRuntime

/// Sends the pushes that are due: claims a batch (no other replica takes it while the lease runs), sends up to
/// `concurrency` at a time to their platforms' channels (over HTTP/2, many requests share a connection), and records
/// what came of the whole batch in one transaction. Delivered: announced as `notification.sent` on channel `push`. A
/// device gone: the token is forgotten. A transient failure: tried again after the `RetryPolicy`'s backoff (never
/// sooner than the provider's `Retry-After`) until it gives up. Given up or refused: `notification.failed`.
struct PushDispatcher: Sendable {
    let store: PushDeliveryStore
    let channels: [PushPlatform: any DeliveryChannel<PushMessage>]
    let retry: RetryPolicy
    let concurrency: Int
    let now: @Sendable () -> Date
    let logger: Logger

    /// Longer than a batch's sends can take (each provider call times out after 10 s, and a batch is four rounds of
    /// `concurrency`), so a live claim never lapses.
    static let lease: TimeInterval = 60

    var batch: Int { concurrency * 4 }

    /// Sends every push due now; returns how many were tried.
    @discardableResult
    func sendDue() async throws -> Int {
        try await handleDue(batch: batch) {
            let start = now()
            return try await store.claimDue(now: start, leaseEnd: start.addingTimeInterval(Self.lease), limit: batch)
        } handle: { claimed in
            let resolutions = try await mapConcurrently(claimed, limit: concurrency) { ($0, await send($0)) }
            try await store.record(resolutions, at: now())
        }
    }

    private func send(_ delivery: ClaimedDelivery) async -> DeliveryResolution {
        let outcome: DeliveryOutcome
        if let platform = PushPlatform(rawValue: delivery.platform), let channel = channels[platform] {
            outcome = await channel.send(delivery.message, to: delivery.token)
        } else {
            outcome = .failed(reason: "\(delivery.platform)-not-configured")
        }
        let resolution = retry.resolve(outcome, afterAttempts: delivery.attempts, createdAt: delivery.createdAt, now: now(), jitter: .random(in: 0..<1))
        DeliveryMetrics.report(
            resolution, channel: "push",
            metadata: [
                "delivery": "\(delivery.deliveryID)", "notification": "\(delivery.message.notificationID)", "platform": "\(delivery.platform)",
                "attempt": "\(delivery.attempts)",
            ], logger: logger)
        return resolution
    }
}
