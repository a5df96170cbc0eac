import Foundation
import SurgeContracts

/// An e-mail address, normalised: surrounding whitespace trimmed and lowercased, so `" Ann@Example.COM "` and
/// `"ann@example.com"` are the same account. The syntax check is deliberately basic (one `@`, a non-empty local part,
/// a dotted domain, no spaces): the only real proof of an address is a message that arrives.
public struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    public let value: String

    public static let maxLength = 254

    public static func normalise(_ raw: String) -> String {
        raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    public init?(_ raw: String) {
        let text = Self.normalise(raw)
        guard text.count <= Self.maxLength, !text.contains(where: { $0.isWhitespace || $0.isNewline }),
            !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let local = parts[0]
        let domain = parts[1]
        guard !local.isEmpty, local.count <= 64, !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..") else { return nil }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2,
            labels.allSatisfy({ label in
                !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
            })
        else { return nil }
        value = text
    }

    /// The address, or nil after recording that it is not one.
    public static func validate(_ raw: String, field: String = "email", errors: inout [FieldError]) -> EmailAddress? {
        guard let address = EmailAddress(raw) else {
            errors.append(.init(field: field, message: "must be an e-mail address such as ann@example.com"))
            return nil
        }
        return address
    }

    /// What comes before the `@`.
    public var localPart: String { String(value.prefix { $0 != "@" }) }

    public var description: String { value }
}

/// The password rules. Each broken rule is reported on its own, so a client can show them all next to the field.
public enum PasswordPolicy {
    /// Lengths count Unicode code points, as JSON Schema's `minLength` and `maxLength` do.
    public static let minimumLength = 10
    /// Long passphrases are welcome: bcrypt sees a fixed-length digest of the password, not the password itself, so
    /// its 72-byte limit does not apply.
    public static let maximumLength = 256
    /// The e-mail's local part counts only from this length on ("al" inside a password is no hint).
    public static let minimumLocalPartLength = 3

    public enum Violation: String, Sendable, CaseIterable {
        case tooShort, tooLong, oneRepeatedCharacter, containsEmail, common

        public var message: String {
            switch self {
            case .tooShort: "must be at least \(PasswordPolicy.minimumLength) characters"
            case .tooLong: "must be at most \(PasswordPolicy.maximumLength) characters"
            case .oneRepeatedCharacter: "must not be one character repeated"
            case .containsEmail: "must not contain your e-mail address's name"
            case .common: "is too common; choose something less guessable"
            }
        }
    }

    public static func violations(_ password: String, email: EmailAddress?) -> [Violation] {
        var broken: [Violation] = []
        let scalars = password.unicodeScalars
        if scalars.count < minimumLength { broken.append(.tooShort) }
        if scalars.count > maximumLength { broken.append(.tooLong) }
        if let first = scalars.first, scalars.allSatisfy({ $0 == first }) { broken.append(.oneRepeatedCharacter) }
        if let local = email?.localPart, local.count >= minimumLocalPartLength, password.lowercased().contains(local) {
            broken.append(.containsEmail)
        }
        if commonPasswords.contains(password.lowercased()) { broken.append(.common) }
        return broken
    }

    public static func fieldErrors(_ password: String, email: EmailAddress?, field: String = "password") -> [FieldError] {
        violations(password, email: email).map { .init(field: field, message: $0.message) }
    }

    /// Passwords of ten or more characters that top the published breach lists.
    public static let commonPasswords: Set<String> = [
        "1234567890", "0987654321", "12345678910", "123456789a", "a123456789", "1q2w3e4r5t", "1qaz2wsx3edc",
        "zaq12wsxcde", "qwertyuiop", "qwerty1234", "qwerty12345", "qwertyuiop123", "asdfghjkl1", "asdfghjkl;",
        "abcdefghij", "abcd123456", "abc1234567", "password12", "password123", "password1234", "passw0rd123",
        "p@ssw0rd123", "iloveyou12", "iloveyou123", "letmein123", "welcome123", "changeme123", "administrator",
        "football123", "baseball123", "superman123", "sunshine123", "princess123", "starwars123", "dragon12345",
        "monkey12345", "trustno1234", "myp@ssw0rd", "mypassword", "mypassword1", "mypassword123", "1234qwerty",
        "12345qwert", "123456789q", "q123456789", "1111122222", "1212121212", "1234512345", "1234554321",
        "0123456789", "9876543210", "pokemon123", "liverpool1", "chocolate1", "basketball", "basketball1",
        "michael123", "jennifer12", "charlie123", "computer12", "internet12", "whatever12",
    ]
}
