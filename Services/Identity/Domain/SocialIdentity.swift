import Foundation
import SurgeContracts

public enum SocialProvider: String, Codable, Sendable, CaseIterable, JSONSchemaEnum {
    case apple, google

    /// The `iss` values the provider's ID tokens carry.
    public var issuers: Set<String> {
        switch self {
        case .apple: ["https://appleid.apple.com"]
        case .google: ["https://accounts.google.com", "accounts.google.com"]
        }
    }

    public var defaultJWKSURL: String {
        switch self {
        case .apple: "https://appleid.apple.com/auth/keys"
        case .google: "https://www.googleapis.com/oauth2/v3/certs"
        }
    }
}

/// Where a provider's keys are and which audiences (our app's client ids) its tokens must name. A provider without
/// client ids is switched off.
public struct SocialProviderConfiguration: Sendable, Equatable {
    public var provider: SocialProvider
    public var jwksURL: String
    public var clientIDs: Set<String>

    public init(provider: SocialProvider, jwksURL: String, clientIDs: Set<String>) {
        self.provider = provider
        self.jwksURL = jwksURL
        self.clientIDs = clientIDs
    }

    public var isEnabled: Bool { !clientIDs.isEmpty }
}

/// The claims of a provider's ID token this service relies on, after the signature was checked.
public struct SocialClaims: Sendable, Equatable {
    public var issuer: String
    public var audiences: [String]
    public var subject: String
    public var expiresAt: Date
    public var email: String?
    public var emailVerified: Bool
    public var name: String?

    public init(issuer: String, audiences: [String], subject: String, expiresAt: Date, email: String?, emailVerified: Bool, name: String?) {
        self.issuer = issuer
        self.audiences = audiences
        self.subject = subject
        self.expiresAt = expiresAt
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
    }
}

/// A provider's proof of who someone is: the provider's stable subject id and, when the provider vouches for it, the
/// e-mail address.
public struct SocialIdentity: Sendable, Equatable {
    public var provider: SocialProvider
    public var subject: String
    /// Only set when the provider says the address is verified.
    public var verifiedEmail: EmailAddress?
    public var name: String?

    public enum Rejection: Error, Equatable {
        case wrongIssuer, wrongAudience, expired, missingSubject
    }

    /// Checks issuer, audience, expiry and subject of signature-checked claims.
    public static func verify(_ claims: SocialClaims, configuration: SocialProviderConfiguration, now: Date) throws(Rejection) -> SocialIdentity {
        guard configuration.provider.issuers.contains(claims.issuer) else { throw .wrongIssuer }
        guard claims.audiences.contains(where: configuration.clientIDs.contains) else { throw .wrongAudience }
        guard claims.expiresAt > now else { throw .expired }
        guard !claims.subject.isEmpty, claims.subject.count <= 255 else { throw .missingSubject }
        let email = claims.emailVerified ? claims.email.flatMap(EmailAddress.init) : nil
        let name = claims.name?.trimmingCharacters(in: .whitespacesAndNewlines)
        return SocialIdentity(provider: configuration.provider, subject: claims.subject, verifiedEmail: email, name: name?.isEmpty == false ? name : nil)
    }

    /// The display name of an account created from this identity: the one the client sent, else the provider's,
    /// else the e-mail's local part, else a neutral one.
    public func displayName(requested: String?) -> String {
        var ignored: [FieldError] = []
        for candidate in [requested, name, verifiedEmail?.localPart] {
            if let candidate, let valid = ProfileRules.displayName(String(candidate.prefix(ProfileRules.maxDisplayNameLength)), errors: &ignored) {
                return valid
            }
        }
        return "Surge user"
    }
}
