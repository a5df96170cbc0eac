import Foundation
import Logging
import NotificationsDomain
import SurgeRuntime

/// Sends the account mails that are due, like `PushDispatcher` sends pushes: claims a batch under a lease, sends each
/// through the e-mail channel, and records what came of it on the row (sent, with the provider's message id; refused
/// by the provider, which covers an address it suppressed; or given up after retries). A mail to an address that
/// hard-bounced or complained before (`email_suppressions`) is not sent: it fails as `email-suppressed`. With no
/// provider configured, a mail is recorded as failed at once. Logs name the mail and the outcome, never the address or
/// the content.
struct EmailDispatcher: Sendable {
    let store: EmailDeliveryStore
    let channel: (any DeliveryChannel<EmailChannel.Addressed>)?
    let retry: RetryPolicy
    let now: @Sendable () -> Date
    let logger: Logger

    static let batch = 16
    static let lease: TimeInterval = 60
    /// A reset link lives 30 minutes by default: a mail much later than that is no use.
    static let defaultRetry = RetryPolicy(maxAttempts: 8, baseDelay: 2, maxDelay: 300, giveUpAfter: 3600)

    @discardableResult
    func sendDue() async throws -> Int {
        try await handleDue(batch: Self.batch) {
            let start = now()
            return try await store.claimDue(now: start, leaseEnd: start.addingTimeInterval(Self.lease), limit: Self.batch)
        } handle: { claimed in
            _ = try await mapConcurrently(claimed, limit: Self.batch) { try await send($0) }
        }
    }

    private func send(_ email: ClaimedEmail) async throws {
        let outcome: DeliveryOutcome
        if email.suppressed {
            outcome = .failed(reason: "email-suppressed")
        } else {
            outcome = await channel?.send(EmailChannel.Addressed(mailID: email.mailID, mail: email.mail), to: email.address)
                ?? .failed(reason: "email-not-configured")
        }
        let at = now()
        let resolution = retry.resolve(outcome, afterAttempts: email.attempts, createdAt: email.createdAt, now: at, jitter: .random(in: 0..<1))
        switch resolution {
        case .delivered(let providerMessageID):
            try await store.finish(email, status: "sent", reason: nil, providerMessageID: providerMessageID, at: at)
        case .failed(let reason, _), .gaveUp(let reason):
            try await store.finish(email, status: "failed", reason: reason, at: at)
        case .retry(let next, let reason):
            try await store.retry(email, at: next, reason: reason)
        }
        DeliveryMetrics.report(
            resolution, channel: "email", metadata: ["mail": "\(email.mailID)", "kind": "\(email.kind)", "attempt": "\(email.attempts)"], logger: logger)
    }
}
