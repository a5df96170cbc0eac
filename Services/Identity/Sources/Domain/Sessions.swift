import Crypto
import Foundation

/// A refresh token as the client holds it: 32 random bytes, base64url without padding. The server keeps only its
/// SHA-256, so a database leak gives away no usable token.
public struct RefreshTokenSecret: Sendable, Equatable {
    public let token: String
    public let hash: Data

    public static let byteCount = 32

    public static func generate() -> RefreshTokenSecret {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let token = Data(bytes).base64URLEncoded
        return RefreshTokenSecret(token: token, hash: hash(token))
    }

    /// The stored form of a presented token.
    public static func hash(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }

    /// Whether the text has the shape of a token this service issues (43 base64url characters).
    public static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43 && token.utf8.allSatisfy { byte in
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D
                || byte == 0x5F
        }
    }
}

/// One refresh token of a family. A family starts at sign-in; each refresh marks the presented token used and issues
/// the next one of the same family.
public struct StoredRefreshToken: Sendable, Equatable {
    public var id: UUID
    public var familyID: UUID
    public var userID: UUID
    public var issuedAt: Date
    public var expiresAt: Date
    public var usedAt: Date?
    public var revokedAt: Date?

    public init(id: UUID, familyID: UUID, userID: UUID, issuedAt: Date, expiresAt: Date, usedAt: Date? = nil, revokedAt: Date? = nil) {
        self.id = id
        self.familyID = familyID
        self.userID = userID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
        self.revokedAt = revokedAt
    }
}

/// What presenting a refresh token leads to.
public enum RefreshTokenDecision: Sendable, Equatable {
    /// Current and unexpired: mark it used and issue the next token of its family.
    case rotate
    /// Already rotated: someone replays an old token (stolen, or a client bug). The whole family is revoked, so
    /// whoever holds its newest token must sign in again too.
    case reused
    /// Never used but its family was revoked (signed out, or signed out for reuse): sign in again. Not a sign of theft.
    case revoked
    /// Past its expiry: sign in again. Nothing else is revoked.
    case expired

    public static func decide(_ token: StoredRefreshToken, now: Date) -> RefreshTokenDecision {
        if token.usedAt != nil { return .reused }
        if token.revokedAt != nil { return .revoked }
        if token.expiresAt <= now { return .expired }
        return .rotate
    }
}

extension Data {
    /// base64url without padding (RFC 4648 §5).
    var base64URLEncoded: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
