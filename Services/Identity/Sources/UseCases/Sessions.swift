import Foundation
import IdentityDomain
import Logging
import SurgeContracts
import SurgeRuntime

/// Refresh-token families and sign-in throttling (`SignInThrottle`), both in the database so every replica agrees.
/// Every revocation of a family that had anything left to revoke publishes `SessionsRevoked` in its transaction, so
/// the gateway refuses the access tokens naming the family (`sid`) too.
struct Sessions: Sendable {
    let storage: IdentityStorage
    let clock: ServiceClock
    let refreshTokenLifetime: TimeInterval
    let throttle: SignInThrottle

    struct IssuedRefreshToken: Sendable {
        var token: String
        var familyID: UUID
        var expiresAt: Date
    }

    enum RotationOutcome: Sendable {
        case rotated(userID: UUID, next: IssuedRefreshToken)
        case reused
        case revoked
        case expired
        case unknown
    }

    /// A device as its owner sees it in the session list: one refresh-token family.
    struct DeviceSession: Sendable {
        var sessionID: UUID
        var name: String
        var createdAt: Date
        var lastUsedAt: Date
    }

    /// The longest device name kept; a longer user agent is cut.
    static let maxNameLength = 100

    private var logger: Logger { storage.logger }

    /// Starts a new family (a sign-in on one device), named for the session list. The user's dead families (every
    /// token expired) are dropped on the way, so the table does not grow forever; a live family keeps its used tokens
    /// for reuse detection.
    func start(userID: UUID, deviceName: String) async throws -> IssuedRefreshToken {
        let now = clock.now()
        let familyID = UUID()
        return try await storage.transaction { stores in
            try await stores.sessions.dropDeadFamilies(of: userID, at: now)
            try await stores.sessions.insertSession(familyID, of: userID, name: String(deviceName.prefix(Self.maxNameLength)), at: now)
            return try await issue(userID: userID, familyID: familyID, at: now, in: stores)
        }
    }

    /// The user's devices that can still refresh, oldest first.
    func list(_ userID: UUID) async throws -> [DeviceSession] {
        let now = clock.now()
        return try await storage.read { stores in try await stores.sessions.liveSessions(of: userID, at: now) }
    }

    /// Ends one of the user's sessions; false when the user has no such session.
    func end(_ sessionID: UUID, of userID: UUID, trace: TraceContext? = nil) async throws -> Bool {
        let now = clock.now()
        return try await storage.transaction { stores in
            guard try await stores.sessions.owns(userID, session: sessionID) else { return false }
            let revoked = try await stores.sessions.revokeFamily(sessionID, at: now)
            try await Self.announce(revoked, of: userID, reason: .sessionEnded, at: now, trace: trace, in: stores)
            return true
        }
    }

    /// Ends every session of the user but the one `token` belongs to; false when the token is not a live token of
    /// theirs (then nothing is ended).
    func endOthers(of userID: UUID, keeping token: String, trace: TraceContext? = nil) async throws -> Bool {
        guard RefreshTokenSecret.isWellFormed(token) else { return false }
        let hash = RefreshTokenSecret.hash(token)
        let now = clock.now()
        return try await storage.transaction { stores in
            guard let keep = try await stores.sessions.liveFamily(tokenHash: hash, of: userID, at: now) else { return false }
            let revoked = try await stores.sessions.revokeFamilies(of: userID, except: keep, at: now)
            try await Self.announce(revoked, of: userID, reason: .otherSessionsEnded, at: now, trace: trace, in: stores)
            return true
        }
    }

    /// Signs every device of the user out (a password reset or change), inside the caller's transaction: each family
    /// is revoked, so each refresh token is refused from now on, and `SessionsRevoked` tells the gateway to refuse
    /// their access tokens.
    static func revokeEverySession(
        of userID: UUID, reason: SessionRevocationReason, at now: Date, trace: TraceContext?, in stores: IdentityStores
    ) async throws {
        let revoked = try await stores.sessions.revokeFamilies(of: userID, at: now)
        try await announce(revoked, of: userID, reason: reason, at: now, trace: trace, in: stores)
    }

    /// Publishes the revocation of `families` (token rows just revoked; a family repeats once per token), if any, in
    /// the revoking transaction. Family ids only: no token, not even its hash, goes on the topic.
    private static func announce(
        _ families: [UUID], of userID: UUID, reason: SessionRevocationReason, at now: Date, trace: TraceContext?, in stores: IdentityStores
    ) async throws {
        var seen: Set<UUID> = []
        let sessionIDs = families.filter { seen.insert($0).inserted }
        guard !sessionIDs.isEmpty else { return }
        try await stores.events.append(SessionsRevoked(userID: userID, sessionIDs: sessionIDs, reason: reason, revokedAt: now), at: now, trace: trace)
    }

    /// Drops up to `limit` dead families of any user (every token expired), for users who never sign in again;
    /// returns how many tokens went. Idempotent, so every replica may run it.
    @discardableResult
    func pruneDeadFamilies(limit: Int = 10_000) async throws -> Int {
        let now = clock.now()
        return try await storage.read { stores in try await stores.sessions.pruneDeadFamilies(limit: limit, at: now) }
    }

    /// Exchanges a refresh token for the next one of its family. Presenting a token that was already used revokes the
    /// whole family (committed before the caller answers 401); a revoked one that was never used is merely refused.
    func rotate(_ token: String, trace: TraceContext? = nil) async throws -> RotationOutcome {
        guard RefreshTokenSecret.isWellFormed(token) else { return .unknown }
        let hash = RefreshTokenSecret.hash(token)
        let now = clock.now()
        return try await storage.transaction { stores in
            guard let stored = try await stores.sessions.lockedToken(hash: hash) else { return .unknown }
            switch RefreshTokenDecision.decide(stored, now: now) {
            case .reused:
                let revoked = try await stores.sessions.revokeFamily(stored.familyID, at: now)
                try await Self.announce(revoked, of: stored.userID, reason: .refreshTokenReused, at: now, trace: trace, in: stores)
                logger.warning("Refresh token reused; family revoked", metadata: ["family": "\(stored.familyID)", "user": "\(stored.userID)"])
                return .reused
            case .revoked:
                return .revoked
            case .expired:
                return .expired
            case .rotate:
                try await stores.sessions.markUsed(stored, at: now)
                return .rotated(userID: stored.userID, next: try await issue(userID: stored.userID, familyID: stored.familyID, at: now, in: stores))
            }
        }
    }

    /// Signs a device out: revokes the family of the presented token. Unknown tokens are ignored.
    func signOut(_ token: String, trace: TraceContext? = nil) async throws {
        guard RefreshTokenSecret.isWellFormed(token) else { return }
        let hash = RefreshTokenSecret.hash(token)
        let now = clock.now()
        try await storage.transaction { stores in
            if let family = try await stores.sessions.family(ofTokenHash: hash) {
                let revoked = try await stores.sessions.revokeFamily(family.familyID, at: now)
                try await Self.announce(revoked, of: family.userID, reason: .signedOut, at: now, trace: trace, in: stores)
            }
        }
    }

    private func issue(userID: UUID, familyID: UUID, at now: Date, in stores: IdentityStores) async throws -> IssuedRefreshToken {
        let secret = RefreshTokenSecret.generate()
        let expiresAt = now.addingTimeInterval(refreshTokenLifetime)
        try await stores.sessions.insertToken(secret, family: familyID, of: userID, at: now, expiresAt: expiresAt)
        return IssuedRefreshToken(token: secret.token, familyID: familyID, expiresAt: expiresAt)
    }

    // MARK: Sign-in throttling

    /// Either refuses the attempt (seconds to wait, and which limit) or records it as a failure in advance, so that
    /// concurrent attempts on any replica count it. A successful attempt then clears its pair with `succeeded`.
    enum AttemptAdmission: Sendable, Equatable {
        case refused(retryAfter: Int, limit: SignInThrottle.Limit)
        case admitted
    }

    /// `deviceToken` is what the client presented as its device token (`rememberDevice`), if anything: a wrong
    /// password counts against it, in advance as well.
    func admitAttempt(email: String, source: SignInSource, deviceToken: String? = nil) async throws -> AttemptAdmission {
        let now = clock.now()
        return try await storage.transaction { stores in
            let attempts = stores.signInAttempts
            // Held for the few milliseconds of this check.
            try await attempts.lock(email: email, source: source)
            let pair = try await attempts.failures(
                email: email, source: source, since: now.addingTimeInterval(-throttle.memory), limit: throttle.pairFailuresConsidered)
            let bySource =
                source.isKnown
                ? try await attempts.failures(
                    source: source, since: now.addingTimeInterval(-throttle.perSource.window), limit: throttle.perSource.maxFailures) : []
            let byAccount = try await attempts.failures(
                email: email, since: now.addingTimeInterval(-throttle.perAccount.window), limit: throttle.perAccount.maxFailures)
            let deviceHash = deviceToken.map(RefreshTokenSecret.hash)
            var deviceFailures: Int?
            if let deviceHash {
                deviceFailures = try await attempts.deviceFailures(tokenHash: deviceHash, email: email, at: now)
            }
            let knownDevice = deviceFailures.map(throttle.honoursDevice(failures:)) ?? false
            if case .refuse(let retryAfter, let limit) = throttle.decide(
                pair: pair, source: bySource, account: byAccount, now: now, knownDevice: knownDevice)
            {
                return .refused(retryAfter: retryAfter, limit: limit)
            }
            try await attempts.recordFailure(email: email, source: source, at: now)
            if let deviceHash, deviceFailures != nil {
                try await attempts.countDeviceFailure(tokenHash: deviceHash)
            }
            return .admitted
        }
    }

    /// The attempt succeeded: this source's failures for the e-mail are forgotten. Other sources' are not, so an
    /// attacker's source stays refused after the owner signed in.
    func succeeded(email: String, source: SignInSource) async throws {
        try await storage.read { stores in try await stores.signInAttempts.clearFailures(email: email, source: source) }
    }

    /// A new device token for a device that has just proved the account's password, in place of the one it presented
    /// (if that was the account's): 32 random bytes, base64url, of which only the SHA-256 is kept.
    func rememberDevice(userID: UUID, replacing presented: String?) async throws -> String {
        let now = clock.now()
        let secret = RefreshTokenSecret.generate()
        try await storage.transaction { stores in
            if let presented {
                try await stores.signInAttempts.forgetDevice(tokenHash: RefreshTokenSecret.hash(presented), of: userID)
            }
            try await stores.signInAttempts.rememberDevice(
                tokenHash: secret.hash, of: userID, at: now, expiresAt: now.addingTimeInterval(throttle.deviceLifetime))
        }
        return secret.token
    }

    /// Drops failures too old to matter to any limit, and expired device tokens; returns how many failures went.
    /// Idempotent, so every replica may run it.
    @discardableResult
    func pruneSignInFailures() async throws -> Int {
        let now = clock.now()
        return try await storage.read { stores in
            try await stores.signInAttempts.prune(failuresBefore: now.addingTimeInterval(-throttle.retention), at: now)
        }
    }
}
