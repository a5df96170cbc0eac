import Foundation
import SurgeContracts

/// What the e-mail provider reported about a mail it accepted earlier: it bounced for good (hard), bounced for now or
/// was delayed (soft), or the recipient marked it as spam (complaint).
public struct EmailBounce: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        case hard, soft, complaint

        /// A hard bounce or a complaint stops every later mail to the address. A soft bounce (a full mailbox, a
        /// greylisting server, a delay) does not: the provider has retried already, it passes, and suppressing the
        /// address would lock its owner out of password resets for a passing reason.
        public var suppressesAddress: Bool { self != .soft }
    }

    public var kind: Kind
    /// The provider's id of the mail (the `id` it answered the send with).
    public var providerMessageID: String?
    /// The recipients as the provider names them, lower case.
    public var addresses: [String]
    /// The provider's own words for it (`Suppressed`, `MailboxFull`...), short and without the address.
    public var detail: String?
    public var reportedAt: Date?

    public init(kind: Kind, providerMessageID: String?, addresses: [String], detail: String?, reportedAt: Date?) {
        self.kind = kind
        self.providerMessageID = providerMessageID
        self.addresses = addresses
        self.detail = detail
        self.reportedAt = reportedAt
    }
}

/// A webhook event of an HTTP e-mail provider of Resend's shape: `{"type": "email.bounced", "created_at", "data":
/// {"email_id", "to": [...], "bounce": {"type": "Permanent", "subType": ...}}}`. The provider's other fields are
/// ignored, as are the event types that say nothing about bounces (sent, delivered, opened...).
public struct EmailProviderEvent: Decodable, Sendable {
    public struct Bounce: Decodable, Sendable {
        public var type: String?
        public var subType: String?
    }

    public struct Payload: Decodable, Sendable {
        public var emailID: String?
        public var to: [String]?
        public var bounce: Bounce?

        enum CodingKeys: String, CodingKey {
            case emailID = "email_id"
            case to, bounce
        }
    }

    public var type: String
    public var createdAt: String?
    public var data: Payload?

    enum CodingKeys: String, CodingKey {
        case type, data
        case createdAt = "created_at"
    }

    public static let bounced = "email.bounced"
    public static let delayed = "email.delivery_delayed"
    public static let complained = "email.complained"

    /// The bounce this event reports; nil for an event of another kind.
    public var bounce: EmailBounce? {
        let kind: EmailBounce.Kind
        switch type {
        case Self.bounced:
            // Permanent unless the provider says otherwise (Resend sends `email.bounced` for permanent ones).
            let permanent = data?.bounce?.type.map { $0.lowercased() == "permanent" } ?? true
            kind = permanent ? .hard : .soft
        case Self.delayed: kind = .soft
        case Self.complained: kind = .complaint
        default: return nil
        }
        let addresses = (data?.to ?? []).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        return EmailBounce(
            kind: kind, providerMessageID: data?.emailID, addresses: addresses,
            detail: (data?.bounce?.subType ?? data?.bounce?.type).map { String($0.prefix(100)) }, reportedAt: createdAt.flatMap(Timestamp.parse))
    }
}
