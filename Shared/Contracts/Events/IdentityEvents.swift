import Foundation

public enum AccountKind: String, Codable, Sendable, JSONSchemaEnum {
    case guest
    case password
    case social
}

/// A person got an account. Every service that keeps per-user state learns the user's time zone from here.
public struct UserRegistered: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.user.registered.v1", topic: .identity,
        summary: "An account was created (guest, e-mail/password or social sign-in).")

    public var userID: UUID
    public var displayName: String
    public var timeZone: String
    public var locale: String?
    public var kind: AccountKind
    public var registeredAt: Date

    public init(userID: UUID, displayName: String, timeZone: String, locale: String?, kind: AccountKind, registeredAt: Date) {
        self.userID = userID
        self.displayName = displayName
        self.timeZone = timeZone
        self.locale = locale
        self.kind = kind
        self.registeredAt = registeredAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)" }
}
