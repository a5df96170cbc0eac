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
        // The pattern states what a pattern can: a host name whose last label starts with a letter (an address literal,
        // `https://0` or `https://0x7f.1`, can name a private address, which no schema tells from a public one) and the
        // characters a URL may hold; where the name points is checked by resolving it.
        "url": .init(
            maxLength: 2048,
            pattern: "^https://([A-Za-z0-9_~-]+\\.)*[A-Za-z][A-Za-z0-9_~-]*\\.?(:[0-9]{1,5})?([/?](%[0-9A-Fa-f]{2}|[A-Za-z0-9._~!$&'()*+,;=:@/?-])*)?$",
            description: "An https URL whose host name resolves to public addresses only (an address literal is taken too, under the same rule).",
            example: "https://hooks.example.com/surge")
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
