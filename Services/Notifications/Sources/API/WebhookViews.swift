import Foundation
import Hummingbird
import SurgeContracts
import SurgeRuntime

struct CreateWebhookRequest: Codable, Sendable {
    /// Where messages are POSTed: https, and not a loopback, private or link-local address.
    var url: String
    /// A group the caller belongs to: the subscription then hears the notifications of every member of the group.
    var groupID: UUID?
}

extension CreateWebhookRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        // Which URLs are taken depends on where their host points (resolved at creation and before each attempt) and
        // on the operator's settings, which no pattern can state: the document names the rule as a format of its own,
        // `webhook-url`, and a generator of valid data draws from scripts/api-fuzz-hooks.py's list.
        "url": .init(
            maxLength: 2048,
            description: "An absolute https URL (http too where the operator sets WEBHOOKS_ALLOW_HTTP), without user name, password or fragment, whose host is a name or an address literal that resolves to public addresses only (format `webhook-url`); a loopback, private, link-local or metadata address is refused with 422.",
            example: "https://hooks.example.com/surge", schema: .string(format: "webhook-url"))
    ]
}

/// A delivery attempt, newest first.
struct WebhookAttemptView: Codable, Sendable {
    /// The message: the same `webhook-id` on every retry (`msg_` and this id).
    var deliveryID: UUID
    var notificationID: UUID
    /// 1 for the first attempt of the message.
    var attempt: Int
    var attemptedAt: Date
    /// The receiver's status, absent when it did not answer (or the URL was refused).
    var statusCode: Int?
    /// `delivered`, `failed` or `gone`.
    var outcome: String
    /// The first 200 bytes of the answer, or why there was none.
    var detail: String?
    var durationMilliseconds: Int
}

enum WebhookStatus: String, Codable, Sendable, JSONSchemaEnum {
    case active, disabled
}

struct WebhookView: ResponseCodable {
    var webhookID: UUID
    var url: String
    var groupID: UUID?
    var status: WebhookStatus
    /// Why it was disabled (410 Gone, failing for days...); re-enable it once the receiver works.
    var disabledReason: String?
    var disabledAt: Date?
    /// Set while the latest attempts failed: since when.
    var failingSince: Date?
    var lastFailure: String?
    var lastFailureAt: Date?
    /// After a rotation, until when the previous secret signs too.
    var previousSecretValidUntil: Date?
    var createdAt: Date
    /// The latest attempts (at most 20); only in the answer for one subscription.
    var recentAttempts: [WebhookAttemptView]?
}

/// A subscription with its secret: only the answers that make one show it.
struct WebhookWithSecretView: ResponseCodable {
    var webhook: WebhookView
    /// `whsec_` and base64: the key of `webhook-signature` (HMAC-SHA256 over `webhook-id.webhook-timestamp.body`).
    var secret: String
}

struct WebhookPageView: ResponseCodable {
    var items: [WebhookView]
    var nextCursor: String?
}
