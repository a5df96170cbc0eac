import Foundation
import JWTKit
import SurgeContracts

/// The claims of a Surge access token: short-lived, signed by identity with Ed25519, verified by the gateway.
public struct AccessTokenClaims: JWTPayload, Equatable {
    public static let issuer = "surge-identity"
    public static let audience = "surge-api"

    public var sub: SubjectClaim
    public var iss: IssuerClaim
    public var aud: AudienceClaim
    public var iat: IssuedAtClaim
    public var exp: ExpirationClaim
    /// guest, password or social.
    public var kind: String
    /// The account's roles (`admin`), granted with `surge-admin grant-admin`; absent for an ordinary account, so the
    /// tokens of ordinary users look as they always did and a token issued before roles existed still verifies.
    public var roles: [String]?
    /// The session (refresh-token family id, lower case) the token was issued to. The gateway refuses the token once
    /// identity revoked that session (`SessionsRevoked`). Absent from tokens issued before sessions were named: those
    /// still verify, and expire within their 15 minutes.
    public var sid: String?

    /// The role that opens the `.admin` operations and the KPI dashboard's data.
    public static let adminRole = "admin"

    public init(userID: UUID, kind: String, roles: [String] = [], sessionID: UUID? = nil, issuedAt: Date, expiresAt: Date) {
        sub = SubjectClaim(value: userID.key)
        iss = IssuerClaim(value: Self.issuer)
        aud = AudienceClaim(value: [Self.audience])
        iat = IssuedAtClaim(value: issuedAt)
        exp = ExpirationClaim(value: expiresAt)
        self.kind = kind
        self.roles = roles.isEmpty ? nil : roles
        sid = sessionID?.key
    }

    public var userID: UUID? { UUID(text: sub.value) }

    /// The session the token belongs to; nil for a token issued before tokens named it.
    public var sessionID: UUID? { sid.flatMap { UUID(text: $0) } }

    public var isAdmin: Bool { roles?.contains(Self.adminRole) ?? false }

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        try aud.verifyIntendedAudience(includes: Self.audience)
        guard iss.value == Self.issuer else { throw JWTError.claimVerificationFailure(failedClaim: iss, reason: "unexpected issuer") }
        guard userID != nil else { throw JWTError.claimVerificationFailure(failedClaim: sub, reason: "subject is not a user id") }
        if let sid, UUID(text: sid) == nil {
            throw JWTError.claimVerificationFailure(failedClaim: sub, reason: "session is not an id")
        }
    }
}

/// An Ed25519 key that signs access tokens, named by its key id (`kid`).
public struct SigningKey: Sendable {
    public let id: String
    public let privateKey: EdDSA.PrivateKey

    public init(id: String, privateKey: EdDSA.PrivateKey) {
        self.id = id
        self.privateKey = privateKey
    }

    /// Reads the key from its base64url-encoded 32-byte seed (`JWT_SIGNING_KEY`).
    public init(id: String, seed: String) throws {
        self.init(id: id, privateKey: try EdDSA.PrivateKey(d: seed, curve: .ed25519))
    }

    /// A fresh key: for development and tests, never for production (other replicas would not know it).
    public static func generate(id: String = "dev-" + UUID().uuidString.prefix(8).lowercased()) throws -> SigningKey {
        SigningKey(id: id, privateKey: try EdDSA.PrivateKey(curve: .ed25519))
    }

    /// The base64url seed, as `JWT_SIGNING_KEY` takes it.
    public var seed: String { Base64URL.encode(privateKey.rawRepresentation) }

    /// The public half as a JWK, for the JWKS document.
    public var publicJWK: JWK {
        .octetKeyPair(.eddsa, identifier: JWKIdentifier(string: id), x: Base64URL.encode(privateKey.publicKey.rawRepresentation), y: nil, curve: .ed25519)
    }
}

/// A published public key: the current signing key, or a retired one whose tokens may still be alive.
public struct PublicSigningKey: Sendable, Equatable {
    public let id: String
    /// base64url of the 32-byte Ed25519 public key.
    public let x: String

    public init(id: String, x: String) {
        self.id = id
        self.x = x
    }

    public var jwk: JWK {
        .octetKeyPair(.eddsa, identifier: JWKIdentifier(string: id), x: x, y: nil, curve: .ed25519)
    }

    /// Parses `kid:x,kid:x` (the `JWT_RETIRED_PUBLIC_KEYS` setting).
    public static func parseList(_ text: String) -> [PublicSigningKey]? {
        var keys: [PublicSigningKey] = []
        for entry in text.split(separator: ",") {
            let parts = entry.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
            keys.append(PublicSigningKey(id: parts[0], x: parts[1]))
        }
        return keys
    }
}

/// Signs access tokens and publishes the JWKS that verifies them.
public struct AccessTokenIssuer: Sendable {
    public let signingKey: SigningKey
    public let retiredKeys: [PublicSigningKey]
    public let lifetime: Duration
    private let keys: JWTKeyCollection

    public init(signingKey: SigningKey, retiredKeys: [PublicSigningKey] = [], lifetime: Duration = .seconds(900)) async {
        self.signingKey = signingKey
        self.retiredKeys = retiredKeys
        self.lifetime = lifetime
        keys = JWTKeyCollection()
        await keys.add(eddsa: signingKey.privateKey, kid: JWKIdentifier(string: signingKey.id))
    }

    public struct IssuedToken: Sendable, Equatable {
        public var token: String
        public var expiresAt: Date
    }

    /// `roles` go into the token only when there are any (`AccessTokenClaims.roles`); `sessionID` is the refresh-token
    /// family the token is issued with (`sid`).
    public func issue(userID: UUID, kind: String, roles: [String] = [], sessionID: UUID? = nil, now: Date = Date()) async throws -> IssuedToken {
        let expiresAt = now.addingTimeInterval(Double(lifetime.components.seconds))
        let claims = AccessTokenClaims(userID: userID, kind: kind, roles: roles, sessionID: sessionID, issuedAt: now, expiresAt: expiresAt)
        return IssuedToken(token: try await keys.sign(claims, kid: JWKIdentifier(string: signingKey.id)), expiresAt: expiresAt)
    }

    /// `{"keys": [...]}` with the current and retired public keys.
    public var jwks: JWKS {
        JWKS(keys: [signingKey.publicJWK] + retiredKeys.map(\.jwk))
    }
}
