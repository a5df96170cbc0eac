import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeRuntime

/// A person's account. Guests have no credentials yet and can attach them later without losing anything.
public struct Account: Codable, Sendable, Equatable {
    public var id: UUID
    public var displayName: String
    public var timeZone: String
    public var locale: String?
    public var kind: AccountKind
    public var createdAt: Date
}

/// A validated request for a guest account.
public struct GuestRegistration: Sendable, Equatable {
    public var displayName: String
    public var timeZone: String
    public var locale: String?

    public static let maxDisplayNameLength = 50

    /// Validates every field and reports all broken rules at once.
    public init(displayName: String, timeZone: String, locale: String?) throws {
        var errors: [Problem.FieldError] = []
        let name = displayName.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty {
            errors.append(.init(field: "displayName", message: "must not be empty"))
        } else if name.count > Self.maxDisplayNameLength {
            errors.append(.init(field: "displayName", message: "must be at most \(Self.maxDisplayNameLength) characters"))
        }
        if !IANATimeZone.isValid(timeZone) {
            errors.append(.init(field: "timeZone", message: "must be an IANA time zone such as Europe/Rome"))
        }
        if let locale, locale.isEmpty || locale.count > 35 {
            errors.append(.init(field: "locale", message: "must be a BCP 47 language tag such as en-US"))
        }
        guard errors.isEmpty else { throw Problem.validation(errors) }
        self.displayName = name
        self.timeZone = timeZone
        self.locale = locale
    }
}
