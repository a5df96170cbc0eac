import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// Refresh-token families and sign-in throttling (`SignInThrottle`), both in the database so every replica agrees.
/// Every revocation of a family that had anything left to revoke publishes `SessionsRevoked` in its transaction, so
/// the gateway refuses the access tokens naming the family (`sid`) too.
struct SessionStore: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger
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

    /// Starts a new family (a sign-in on one device), named for the session list. The user's dead families (every
    /// token expired) are dropped on the way, so the table does not grow forever; a live family keeps its used tokens
    /// for reuse detection.
    func start(userID: UUID, deviceName: String) async throws -> IssuedRefreshToken {
        let now = clock.now()
        let familyID = UUID()
        return try await client.transaction(logger: logger) { connection in
            try await connection.execute(
                """
                DELETE FROM refresh_tokens WHERE user_id = \(userID) AND family_id IN (
                    SELECT family_id FROM refresh_tokens WHERE user_id = \(userID) GROUP BY family_id HAVING max(expires_at) <= \(now))
                """, logger: logger)
            try await connection.execute(
                """
                DELETE FROM sessions s WHERE s.user_id = \(userID)
                  AND NOT EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = s.family_id)
                """, logger: logger)
            try await connection.execute(
                """
                INSERT INTO sessions (family_id, user_id, name, created_at, last_used_at)
                VALUES (\(familyID), \(userID), \(String(deviceName.prefix(Self.maxNameLength))), \(now), \(now))
                """, logger: logger)
            return try await issue(userID: userID, familyID: familyID, at: now, on: connection)
        }
    }

    /// The user's devices that can still refresh, oldest first.
    func list(_ userID: UUID) async throws -> [DeviceSession] {
        try await client.query(
            """
            SELECT s.family_id, s.name, s.created_at, s.last_used_at FROM sessions s
            WHERE s.user_id = \(userID) AND EXISTS (
                SELECT 1 FROM refresh_tokens t
                WHERE t.family_id = s.family_id AND t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > \(clock.now()))
            ORDER BY s.created_at, s.family_id
            """, logger: logger
        ).collect().map { row in
            let (id, name, createdAt, lastUsedAt) = try row.decode((UUID, String, Date, Date).self)
            return DeviceSession(sessionID: id, name: name, createdAt: createdAt, lastUsedAt: lastUsedAt)
        }
    }

    /// Ends one of the user's sessions; false when the user has no such session.
    func end(_ sessionID: UUID, of userID: UUID, trace: TraceContext? = nil) async throws -> Bool {
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            let owned = try await connection.query(
                "SELECT 1 FROM sessions WHERE family_id = \(sessionID) AND user_id = \(userID)", logger: logger
            ).collect()
            guard !owned.isEmpty else { return false }
            try await revokeFamily(sessionID, of: userID, reason: .sessionEnded, at: now, trace: trace, on: connection)
            return true
        }
    }

    /// Ends every session of the user but the one `token` belongs to; false when the token is not a live token of
    /// theirs (then nothing is ended).
    func endOthers(of userID: UUID, keeping token: String, trace: TraceContext? = nil) async throws -> Bool {
        guard RefreshTokenSecret.isWellFormed(token) else { return false }
        let hash = RefreshTokenSecret.hash(token)
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                SELECT family_id FROM refresh_tokens
                WHERE token_hash = \(hash) AND user_id = \(userID) AND used_at IS NULL AND revoked_at IS NULL AND expires_at > \(now)
                """, logger: logger
            ).collect()
            guard let keep = try rows.first?.decode(UUID.self) else { return false }
            let revoked = try await connection.query(
                """
                UPDATE refresh_tokens SET revoked_at = \(now) WHERE user_id = \(userID) AND family_id <> \(keep) AND revoked_at IS NULL
                RETURNING family_id
                """, logger: logger)
            try await connection.execute("DELETE FROM sessions WHERE user_id = \(userID) AND family_id <> \(keep)", logger: logger)
            try await Self.announce(
                try await revoked.collect().map { try $0.decode(UUID.self) }, of: userID, reason: .otherSessionsEnded, at: now, outbox: outbox, trace: trace,
                on: connection, logger: logger)
            return true
        }
    }

    /// Signs every device of the user out (a password reset or change): each family is revoked, so each refresh
    /// token is refused from now on, and `SessionsRevoked` tells the gateway to refuse their access tokens.
    static func revokeEverySession(
        of userID: UUID, reason: SessionRevocationReason, at now: Date, outbox: Outbox, trace: TraceContext?, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let revoked = try await connection.query(
            "UPDATE refresh_tokens SET revoked_at = \(now) WHERE user_id = \(userID) AND revoked_at IS NULL RETURNING family_id", logger: logger)
        try await connection.execute("DELETE FROM sessions WHERE user_id = \(userID)", logger: logger)
        try await announce(
            try await revoked.collect().map { try $0.decode(UUID.self) }, of: userID, reason: reason, at: now, outbox: outbox, trace: trace, on: connection,
            logger: logger)
    }

    /// Publishes the revocation of `families` (token rows just revoked; a family repeats once per token), if any, in
    /// the revoking transaction. Family ids only: no token, not even its hash, goes on the topic.
    private static func announce(
        _ families: [UUID], of userID: UUID, reason: SessionRevocationReason, at now: Date, outbox: Outbox, trace: TraceContext?,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        var seen: Set<UUID> = []
        let sessionIDs = families.filter { seen.insert($0).inserted }
        guard !sessionIDs.isEmpty else { return }
        try await outbox.append(
            SessionsRevoked(userID: userID, sessionIDs: sessionIDs, reason: reason, revokedAt: now), on: connection, at: now, trace: trace,
            logger: logger)
    }

    /// Drops up to `limit` dead families of any user (every token expired), for users who never sign in again;
    /// returns how many tokens went. Idempotent, so every replica may run it.
    @discardableResult
    func pruneDeadFamilies(limit: Int = 10_000) async throws -> Int {
        let rows = try await client.query(
            """
            WITH dead AS (
                SELECT family_id FROM refresh_tokens GROUP BY family_id HAVING max(expires_at) <= \(clock.now()) LIMIT \(limit))
            DELETE FROM refresh_tokens WHERE family_id IN (SELECT family_id FROM dead) RETURNING 1
            """, logger: logger)
        let pruned = try await rows.collect().count
        try await client.query(
            "DELETE FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = s.family_id)", logger: logger)
        return pruned
    }

    /// Exchanges a refresh token for the next one of its family. Presenting a token that was already used revokes the
    /// whole family (committed before the caller answers 401); a revoked one that was never used is merely refused.
    func rotate(_ token: String, trace: TraceContext? = nil) async throws -> RotationOutcome {
        guard RefreshTokenSecret.isWellFormed(token) else { return .unknown }
        let hash = RefreshTokenSecret.hash(token)
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            let rows = try await connection.run(
                """
                SELECT id, family_id, user_id, issued_at, expires_at, used_at, revoked_at FROM refresh_tokens
                WHERE token_hash = \(hash) FOR UPDATE
                """, logger: logger
            ).collect()
            guard let row = rows.first else { return .unknown }
            let (id, familyID, userID, issuedAt, expiresAt, usedAt, revokedAt) = try row.decode((UUID, UUID, UUID, Date, Date, Date?, Date?).self)
            let stored = StoredRefreshToken(
                id: id, familyID: familyID, userID: userID, issuedAt: issuedAt, expiresAt: expiresAt, usedAt: usedAt, revokedAt: revokedAt)
            switch RefreshTokenDecision.decide(stored, now: now) {
            case .reused:
                try await revokeFamily(familyID, of: userID, reason: .refreshTokenReused, at: now, trace: trace, on: connection)
                logger.warning("Refresh token reused; family revoked", metadata: ["family": "\(familyID)", "user": "\(userID)"])
                return .reused
            case .revoked:
                return .revoked
            case .expired:
                return .expired
            case .rotate:
                try await connection.execute("UPDATE refresh_tokens SET used_at = \(now) WHERE id = \(id)", logger: logger)
                try await connection.execute("UPDATE sessions SET last_used_at = \(now) WHERE family_id = \(familyID)", logger: logger)
                return .rotated(userID: userID, next: try await issue(userID: userID, familyID: familyID, at: now, on: connection))
            }
        }
    }

    /// Signs a device out: revokes the family of the presented token. Unknown tokens are ignored.
    func signOut(_ token: String, trace: TraceContext? = nil) async throws {
        guard RefreshTokenSecret.isWellFormed(token) else { return }
        let hash = RefreshTokenSecret.hash(token)
        let now = clock.now()
        try await client.transaction(logger: logger) { connection in
            let rows = try await connection.run(
                "SELECT family_id, user_id FROM refresh_tokens WHERE token_hash = \(hash)", logger: logger
            ).collect()
            if let (familyID, userID) = try rows.first?.decode((UUID, UUID).self) {
                try await revokeFamily(familyID, of: userID, reason: .signedOut, at: now, trace: trace, on: connection)
            }
        }
    }

    private func revokeFamily(
        _ familyID: UUID, of userID: UUID, reason: SessionRevocationReason, at now: Date, trace: TraceContext?, on connection: PostgresConnection
    ) async throws {
        let revoked = try await connection.query(
            "UPDATE refresh_tokens SET revoked_at = \(now) WHERE family_id = \(familyID) AND revoked_at IS NULL RETURNING family_id",
            logger: logger)
        try await connection.execute("DELETE FROM sessions WHERE family_id = \(familyID)", logger: logger)
        try await Self.announce(
            try await revoked.collect().map { try $0.decode(UUID.self) }, of: userID, reason: reason, at: now, outbox: outbox, trace: trace, on: connection,
            logger: logger)
    }

    private func issue(userID: UUID, familyID: UUID, at now: Date, on connection: PostgresConnection) async throws -> IssuedRefreshToken {
        let secret = RefreshTokenSecret.generate()
        let expiresAt = now.addingTimeInterval(refreshTokenLifetime)
        try await connection.execute(
            """
            INSERT INTO refresh_tokens (id, token_hash, family_id, user_id, issued_at, expires_at)
            VALUES (\(UUID()), \(secret.hash), \(familyID), \(userID), \(now), \(expiresAt))
            """, logger: logger)
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
        return try await client.transaction(logger: logger) { connection in
            // Serialises attempts on one e-mail, then on one source (always in this order, so never a deadlock), for
            // the few milliseconds of this check.
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\(email), 7))", logger: logger)
            if source.isKnown {
                try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\(source.key), 8))", logger: logger)
            }
            let pair = try await failureTimes(
                """
                SELECT failed_at FROM sign_in_failures
                WHERE email = \(email) AND source = \(source.key) AND failed_at > \(now.addingTimeInterval(-throttle.memory))
                ORDER BY failed_at DESC LIMIT \(throttle.pairFailuresConsidered)
                """, on: connection)
            let bySource =
                source.isKnown
                ? try await failureTimes(
                    """
                    SELECT failed_at FROM sign_in_failures
                    WHERE source = \(source.key) AND failed_at > \(now.addingTimeInterval(-throttle.perSource.window))
                    ORDER BY failed_at DESC LIMIT \(throttle.perSource.maxFailures)
                    """, on: connection) : []
            let byAccount = try await failureTimes(
                """
                SELECT failed_at FROM sign_in_failures
                WHERE email = \(email) AND failed_at > \(now.addingTimeInterval(-throttle.perAccount.window))
                ORDER BY failed_at DESC LIMIT \(throttle.perAccount.maxFailures)
                """, on: connection)
            let deviceHash = deviceToken.map(RefreshTokenSecret.hash)
            var deviceFailures: Int?
            if let deviceHash {
                deviceFailures = try await connection.run(
                    """
                    SELECT d.failures FROM known_devices d JOIN users u ON u.id = d.user_id
                    WHERE d.token_hash = \(deviceHash) AND lower(u.email) = \(email) AND d.expires_at > \(now)
                    """, logger: logger
                ).collect().first?.decode(Int.self)
            }
            let knownDevice = deviceFailures.map(throttle.honoursDevice(failures:)) ?? false
            if case .refuse(let retryAfter, let limit) = throttle.decide(
                pair: pair, source: bySource, account: byAccount, now: now, knownDevice: knownDevice)
            {
                return .refused(retryAfter: retryAfter, limit: limit)
            }
            try await connection.execute(
                "INSERT INTO sign_in_failures (id, email, source, failed_at) VALUES (\(UUID()), \(email), \(source.key), \(now))",
                logger: logger)
            if let deviceHash, deviceFailures != nil {
                try await connection.execute("UPDATE known_devices SET failures = failures + 1 WHERE token_hash = \(deviceHash)", logger: logger)
            }
            return .admitted
        }
    }

    /// The attempt succeeded: this source's failures for the e-mail are forgotten. Other sources' are not, so an
    /// attacker's source stays refused after the owner signed in.
    func succeeded(email: String, source: SignInSource) async throws {
        try await client.execute("DELETE FROM sign_in_failures WHERE email = \(email) AND source = \(source.key)", logger: logger)
    }

    /// A new device token for a device that has just proved the account's password, in place of the one it presented
    /// (if that was the account's): 32 random bytes, base64url, of which only the SHA-256 is kept.
    func rememberDevice(userID: UUID, replacing presented: String?) async throws -> String {
        let now = clock.now()
        let secret = RefreshTokenSecret.generate()
        try await client.transaction(logger: logger) { connection in
            if let presented {
                try await connection.execute(
                    "DELETE FROM known_devices WHERE token_hash = \(RefreshTokenSecret.hash(presented)) AND user_id = \(userID)", logger: logger)
            }
            try await connection.execute(
                """
                INSERT INTO known_devices (token_hash, user_id, issued_at, expires_at)
                VALUES (\(secret.hash), \(userID), \(now), \(now.addingTimeInterval(throttle.deviceLifetime)))
                """, logger: logger)
        }
        return secret.token
    }

    /// Drops failures too old to matter to any limit, and expired device tokens; returns how many failures went.
    /// Idempotent, so every replica may run it.
    @discardableResult
    func pruneSignInFailures() async throws -> Int {
        let now = clock.now()
        try await client.execute("DELETE FROM known_devices WHERE expires_at <= \(now)", logger: logger)
        let rows = try await client.query(
            "DELETE FROM sign_in_failures WHERE failed_at < \(now.addingTimeInterval(-throttle.retention)) RETURNING 1", logger: logger)
        return try await rows.collect().count
    }

    private func failureTimes(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [Date] {
        try await connection.run(query, logger: logger).collect().map { try $0.decode(Date.self) }
    }
}
