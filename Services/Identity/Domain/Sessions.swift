import Foundation

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
