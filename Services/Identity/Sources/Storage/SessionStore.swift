import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgePostgres

/// Refresh-token families (one per signed-in device) and their tokens, over one connection.
struct SessionStore {
    let connection: PostgresConnection
    let logger: Logger

    /// Drops the user's dead families (every token expired) and their sessions.
    func dropDeadFamilies(of userID: UUID, at now: Date) async throws {
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
    }

    func insertSession(_ familyID: UUID, of userID: UUID, name: String, at now: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO sessions (family_id, user_id, name, created_at, last_used_at)
            VALUES (\(familyID), \(userID), \(name), \(now), \(now))
            """, logger: logger)
    }

    func insertToken(_ secret: RefreshTokenSecret, family familyID: UUID, of userID: UUID, at now: Date, expiresAt: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO refresh_tokens (id, token_hash, family_id, user_id, issued_at, expires_at)
            VALUES (\(UUID()), \(secret.hash), \(familyID), \(userID), \(now), \(expiresAt))
            """, logger: logger)
    }

    /// The user's devices that can still refresh, oldest first.
    func liveSessions(of userID: UUID, at now: Date) async throws -> [Sessions.DeviceSession] {
        try await connection.query(
            """
            SELECT s.family_id, s.name, s.created_at, s.last_used_at FROM sessions s
            WHERE s.user_id = \(userID) AND EXISTS (
                SELECT 1 FROM refresh_tokens t
                WHERE t.family_id = s.family_id AND t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > \(now))
            ORDER BY s.created_at, s.family_id
            """, logger: logger
        ).collect().map { row in
            let (id, name, createdAt, lastUsedAt) = try row.decode((UUID, String, Date, Date).self)
            return Sessions.DeviceSession(sessionID: id, name: name, createdAt: createdAt, lastUsedAt: lastUsedAt)
        }
    }

    func owns(_ userID: UUID, session sessionID: UUID) async throws -> Bool {
        try await connection.count("SELECT 1 FROM sessions WHERE family_id = \(sessionID) AND user_id = \(userID)", logger: logger) > 0
    }

    /// The family of a live (unused, unrevoked, unexpired) token of the user.
    func liveFamily(tokenHash: Data, of userID: UUID, at now: Date) async throws -> UUID? {
        try await connection.query(
            """
            SELECT family_id FROM refresh_tokens
            WHERE token_hash = \(tokenHash) AND user_id = \(userID) AND used_at IS NULL AND revoked_at IS NULL AND expires_at > \(now)
            """, logger: logger
        ).collect().first?.decode(UUID.self)
    }

    /// The token, locked until the transaction ends.
    func lockedToken(hash: Data) async throws -> StoredRefreshToken? {
        let rows = try await connection.query(
            """
            SELECT id, family_id, user_id, issued_at, expires_at, used_at, revoked_at FROM refresh_tokens
            WHERE token_hash = \(hash) FOR UPDATE
            """, logger: logger
        ).collect()
        guard let row = rows.first else { return nil }
        let (id, familyID, userID, issuedAt, expiresAt, usedAt, revokedAt) = try row.decode((UUID, UUID, UUID, Date, Date, Date?, Date?).self)
        return StoredRefreshToken(
            id: id, familyID: familyID, userID: userID, issuedAt: issuedAt, expiresAt: expiresAt, usedAt: usedAt, revokedAt: revokedAt)
    }

    /// The family and user of a token, whatever its state.
    func family(ofTokenHash hash: Data) async throws -> (familyID: UUID, userID: UUID)? {
        try await connection.query("SELECT family_id, user_id FROM refresh_tokens WHERE token_hash = \(hash)", logger: logger)
            .collect().first?.decode((UUID, UUID).self)
    }

    func markUsed(_ token: StoredRefreshToken, at now: Date) async throws {
        try await connection.execute("UPDATE refresh_tokens SET used_at = \(now) WHERE id = \(token.id)", logger: logger)
        try await connection.execute("UPDATE sessions SET last_used_at = \(now) WHERE family_id = \(token.familyID)", logger: logger)
    }

    /// Revokes one family and drops its session; returns the family once per token it revoked.
    func revokeFamily(_ familyID: UUID, at now: Date) async throws -> [UUID] {
        let revoked = try await connection.query(
            "UPDATE refresh_tokens SET revoked_at = \(now) WHERE family_id = \(familyID) AND revoked_at IS NULL RETURNING family_id",
            logger: logger)
        let families = try await revoked.collect().map { try $0.decode(UUID.self) }
        try await connection.execute("DELETE FROM sessions WHERE family_id = \(familyID)", logger: logger)
        return families
    }

    /// Revokes every family of the user but `kept` and drops their sessions; returns each family once per token it revoked.
    func revokeFamilies(of userID: UUID, except kept: UUID? = nil, at now: Date) async throws -> [UUID] {
        let revoked = try await connection.query(
            """
            UPDATE refresh_tokens SET revoked_at = \(now)
            WHERE user_id = \(userID) AND revoked_at IS NULL AND (\(kept)::uuid IS NULL OR family_id <> \(kept))
            RETURNING family_id
            """, logger: logger)
        let families = try await revoked.collect().map { try $0.decode(UUID.self) }
        try await connection.execute(
            "DELETE FROM sessions WHERE user_id = \(userID) AND (\(kept)::uuid IS NULL OR family_id <> \(kept))", logger: logger)
        return families
    }

    /// Drops up to `limit` dead families of any user (every token expired); returns how many tokens went.
    func pruneDeadFamilies(limit: Int, at now: Date) async throws -> Int {
        let pruned = try await connection.count(
            """
            WITH dead AS (
                SELECT family_id FROM refresh_tokens GROUP BY family_id HAVING max(expires_at) <= \(now) LIMIT \(limit))
            DELETE FROM refresh_tokens WHERE family_id IN (SELECT family_id FROM dead) RETURNING 1
            """, logger: logger)
        try await connection.execute(
            "DELETE FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = s.family_id)", logger: logger)
        return pruned
    }

    /// The user's families with a current (unused, unrevoked, unexpired) token, for an export.
    func exportedSessions(of userID: UUID, at now: Date) async throws -> [IdentityExport.Session] {
        try await connection.query(
            """
            SELECT family_id, min(issued_at), max(issued_at), max(expires_at) FROM refresh_tokens
            WHERE user_id = \(userID) AND revoked_at IS NULL
            GROUP BY family_id
            HAVING bool_or(used_at IS NULL AND expires_at > \(now))
            ORDER BY min(issued_at)
            """, logger: logger
        ).collect().map { row in
            let (family, started, last, expires) = try row.decode((UUID, Date, Date, Date).self)
            return IdentityExport.Session(id: family, startedAt: started, lastRefreshedAt: last, expiresAt: expires)
        }
    }
}
