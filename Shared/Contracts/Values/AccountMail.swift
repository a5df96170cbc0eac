import Foundation

/// A mail about an account, which identity hands to the notification service over the internal signed HTTP call
/// `POST /internal/mail` (never over Kafka): the link may carry a secret token. docs/accounts.md says where the token
/// travels and why that is safe.
public struct AccountMail: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// A link that sets a new password (`link`, `validForMinutes`).
        case passwordReset = "password-reset"
        /// A link that proves the address (`link`, `validForMinutes`): after registration, after an address change, and
        /// instead of a reset link while the account's address is not verified.
        case emailVerification = "email-verification"
        /// Sent to the old address when a change takes effect; `newAddress` is the new one, masked.
        case emailChanged = "email-changed"
    }

    /// Unique per mail: a second hand-over of the same mail replaces the first if it is not sent yet.
    public var mailID: UUID
    public var kind: Kind
    public var to: String
    public var displayName: String
    public var locale: String?
    public var link: String?
    public var validForMinutes: Int?
    public var newAddress: String?

    public init(
        mailID: UUID, kind: Kind, to: String, displayName: String, locale: String?, link: String? = nil, validForMinutes: Int? = nil,
        newAddress: String? = nil
    ) {
        self.mailID = mailID
        self.kind = kind
        self.to = to
        self.displayName = displayName
        self.locale = locale
        self.link = link
        self.validForMinutes = validForMinutes
        self.newAddress = newAddress
    }

    public static let path = "/internal/mail"
}
