import Foundation
import SurgeCalendar
import SurgeContracts

/// A person's account, as its owner sees it. Guests have no credentials yet and can attach them later without losing
/// anything. Other users only ever see the `PublicProfile`.
public struct Account: Codable, Sendable, Equatable {
    public var id: UUID
    public var displayName: String
    public var avatarURL: String?
    /// Normalised (trimmed, lowercased); absent for guests and for social accounts without a verified e-mail.
    public var email: String?
    public var timeZone: String
    public var locale: String?
    public var kind: AccountKind
    public var createdAt: Date

    public init(
        id: UUID, displayName: String, avatarURL: String? = nil, email: String? = nil, timeZone: String, locale: String?,
        kind: AccountKind, createdAt: Date
    ) {
        self.id = id
        self.displayName = displayName
        self.avatarURL = avatarURL
        self.email = email
        self.timeZone = timeZone
        self.locale = locale
        self.kind = kind
        self.createdAt = createdAt
    }

    public var publicProfile: PublicProfile {
        PublicProfile(id: id, displayName: displayName, avatarURL: avatarURL)
    }
}

/// What any signed-in user may see about another: never the e-mail, time zone or anything else.
public struct PublicProfile: Codable, Sendable, Equatable {
    public var id: UUID
    public var displayName: String
    public var avatarURL: String?

    public init(id: UUID, displayName: String, avatarURL: String?) {
        self.id = id
        self.displayName = displayName
        self.avatarURL = avatarURL
    }
}

/// The rules of the fields a profile is made of, shared by every request that sets them. Each check appends the
/// broken rule to `errors`, so a request reports all its problems at once.
public enum ProfileRules {
    public static let maxDisplayNameLength = 50
    public static let maxAvatarURLLength = 2048

    /// The trimmed display name, or nil after recording why it is not acceptable.
    public static func displayName(
        _ raw: String, field: String = "displayName", maxLength: Int = maxDisplayNameLength, errors: inout [FieldError]
    ) -> String? {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty {
            errors.append(.init(field: field, message: "must not be empty"))
            return nil
        }
        if name.count > maxLength {
            errors.append(.init(field: field, message: "must be at most \(maxLength) characters"))
            return nil
        }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            errors.append(.init(field: field, message: "must not contain control characters"))
            return nil
        }
        return name
    }

    public static func timeZone(_ name: String, field: String = "timeZone", errors: inout [FieldError]) -> String? {
        guard IANATimeZone.isValid(name) else {
            errors.append(.init(field: field, message: "must be an IANA time zone such as Europe/Rome"))
            return nil
        }
        return name
    }

    /// A BCP 47 language tag, loosely: a 2-3 letter language and up to a few alphanumeric subtags (`en`, `it-IT`,
    /// `zh-Hant-TW`).
    public static func locale(_ tag: String, field: String = "locale", errors: inout [FieldError]) -> String? {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        let valid =
            tag.count <= 35 && !parts.isEmpty
            && (2...3).contains(parts[0].count) && parts[0].allSatisfy { $0.isASCII && $0.isLetter }
            && parts.dropFirst().allSatisfy { part in
                (1...8).contains(part.count) && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            }
        guard valid else {
            errors.append(.init(field: field, message: "must be a BCP 47 language tag such as en-US"))
            return nil
        }
        return tag
    }

    /// An absolute https URL of at most 2048 characters.
    public static func avatarURL(_ text: String, field: String = "avatarURL", errors: inout [FieldError]) -> String? {
        guard text.count <= maxAvatarURLLength, let components = URLComponents(string: text), components.scheme?.lowercased() == "https",
            let host = components.host, !host.isEmpty, !text.contains(where: \.isWhitespace)
        else {
            errors.append(.init(field: field, message: "must be an https URL of at most \(maxAvatarURLLength) characters, or empty to remove it"))
            return nil
        }
        return text
    }
}

/// A validated request for a guest account.
public struct GuestRegistration: Sendable, Equatable {
    public var displayName: String
    public var timeZone: String
    public var locale: String?

    public static var maxDisplayNameLength: Int { ProfileRules.maxDisplayNameLength }

    /// Validates every field and reports all broken rules at once.
    public init(displayName: String, timeZone: String, locale: String?) throws(IdentityError) {
        var errors: [FieldError] = []
        let name = ProfileRules.displayName(displayName, errors: &errors)
        let zone = ProfileRules.timeZone(timeZone, errors: &errors)
        let tag = locale.map { ProfileRules.locale($0, errors: &errors) } ?? nil
        guard errors.isEmpty, let name, let zone else { throw IdentityError.invalidFields(errors) }
        self.displayName = name
        self.timeZone = zone
        self.locale = tag
    }
}

/// A validated e-mail/password sign-up.
public struct PasswordRegistration: Sendable {
    public var email: EmailAddress
    public var password: String
    public var displayName: String
    public var timeZone: String
    public var locale: String?

    public init(email: String, password: String, displayName: String, timeZone: String, locale: String?) throws(IdentityError) {
        var errors: [FieldError] = []
        let address = EmailAddress.validate(email, errors: &errors)
        errors += PasswordPolicy.fieldErrors(password, email: address)
        let name = ProfileRules.displayName(displayName, errors: &errors)
        let zone = ProfileRules.timeZone(timeZone, errors: &errors)
        let tag = locale.map { ProfileRules.locale($0, errors: &errors) } ?? nil
        guard errors.isEmpty, let address, let name, let zone else { throw IdentityError.invalidFields(errors) }
        self.email = address
        self.password = password
        self.displayName = name
        self.timeZone = zone
        self.locale = tag
    }
}

/// A guest attaching an e-mail and password.
public struct CredentialsAttachment: Sendable {
    public var email: EmailAddress
    public var password: String

    public init(email: String, password: String) throws(IdentityError) {
        var errors: [FieldError] = []
        let address = EmailAddress.validate(email, errors: &errors)
        errors += PasswordPolicy.fieldErrors(password, email: address)
        guard errors.isEmpty, let address else { throw IdentityError.invalidFields(errors) }
        self.email = address
        self.password = password
    }
}

/// A validated partial profile change: nil leaves a field as it is; `avatarURL` of `.some(nil)` removes the avatar.
public struct ProfileUpdate: Sendable, Equatable {
    public var displayName: String?
    public var avatarURL: String??
    public var timeZone: String?
    public var locale: String?

    public init(displayName: String?, avatarURL: String?, timeZone: String?, locale: String?) throws(IdentityError) {
        var errors: [FieldError] = []
        self.displayName = displayName.map { ProfileRules.displayName($0, errors: &errors) } ?? nil
        if let avatarURL {
            self.avatarURL = avatarURL.isEmpty ? .some(nil) : ProfileRules.avatarURL(avatarURL, errors: &errors).map { .some($0) }
        } else {
            self.avatarURL = nil
        }
        self.timeZone = timeZone.map { ProfileRules.timeZone($0, errors: &errors) } ?? nil
        self.locale = locale.map { ProfileRules.locale($0, errors: &errors) } ?? nil
        guard errors.isEmpty else { throw IdentityError.invalidFields(errors) }
    }

    /// The account with the change applied.
    public func applied(to account: Account) -> Account {
        var updated = account
        if let displayName { updated.displayName = displayName }
        if let avatarURL { updated.avatarURL = avatarURL }
        if let timeZone { updated.timeZone = timeZone }
        if let locale { updated.locale = locale }
        return updated
    }
}
