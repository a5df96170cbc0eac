import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgePostgres

/// Failed sign-in attempts and remembered devices (`SignInThrottle`), over one connection.
struct SignInAttemptStore {
    let connection: PostgresConnection
    let logger: Logger

    /// Serialises attempts on one e-mail, then on one source (always in this order, so never a deadlock), until the
    /// transaction ends.
    func lock(email: String, source: SignInSource) async throws {
        try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\(email), 7))", logger: logger)
        if source.isKnown {
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\(source.key), 8))", logger: logger)
        }
    }

    /// The latest failures of this e-mail from this source since `since`, newest first.
    func failures(email: String, source: SignInSource, since: Date, limit: Int) async throws -> [Date] {
        try await times(
            """
            SELECT failed_at FROM sign_in_failures
            WHERE email = \(email) AND source = \(source.key) AND failed_at > \(since)
            ORDER BY failed_at DESC LIMIT \(limit)
            """)
    }

    /// The latest failures from this source, any e-mail.
    func failures(source: SignInSource, since: Date, limit: Int) async throws -> [Date] {
        try await times(
            """
            SELECT failed_at FROM sign_in_failures
            WHERE source = \(source.key) AND failed_at > \(since)
            ORDER BY failed_at DESC LIMIT \(limit)
            """)
    }

    /// The latest failures of this e-mail, any source.
    func failures(email: String, since: Date, limit: Int) async throws -> [Date] {
        try await times(
            """
            SELECT failed_at FROM sign_in_failures
            WHERE email = \(email) AND failed_at > \(since)
            ORDER BY failed_at DESC LIMIT \(limit)
            """)
    }

    func recordFailure(email: String, source: SignInSource, at now: Date) async throws {
        try await connection.execute(
            "INSERT INTO sign_in_failures (id, email, source, failed_at) VALUES (\(UUID()), \(email), \(source.key), \(now))", logger: logger)
    }

    /// This source's failures for the e-mail.
    func clearFailures(email: String, source: SignInSource) async throws {
        try await connection.execute("DELETE FROM sign_in_failures WHERE email = \(email) AND source = \(source.key)", logger: logger)
    }

    /// Every failure recorded against the e-mail (its account is deleted).
    func forget(email: String) async throws {
        try await connection.execute("DELETE FROM sign_in_failures WHERE email = \(email)", logger: logger)
    }

    /// The failures counted against a remembered device of the account with this e-mail, if the device token is live.
    func deviceFailures(tokenHash: Data, email: String, at now: Date) async throws -> Int? {
        try await connection.query(
            """
            SELECT d.failures FROM known_devices d JOIN users u ON u.id = d.user_id
            WHERE d.token_hash = \(tokenHash) AND lower(u.email) = \(email) AND d.expires_at > \(now)
            """, logger: logger
        ).collect().first?.decode(Int.self)
    }

    func countDeviceFailure(tokenHash: Data) async throws {
        try await connection.execute("UPDATE known_devices SET failures = failures + 1 WHERE token_hash = \(tokenHash)", logger: logger)
    }

    func forgetDevice(tokenHash: Data, of userID: UUID) async throws {
        try await connection.execute("DELETE FROM known_devices WHERE token_hash = \(tokenHash) AND user_id = \(userID)", logger: logger)
    }

    func rememberDevice(tokenHash: Data, of userID: UUID, at now: Date, expiresAt: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO known_devices (token_hash, user_id, issued_at, expires_at)
            VALUES (\(tokenHash), \(userID), \(now), \(expiresAt))
            """, logger: logger)
    }

    /// Drops expired device tokens and failures older than `before`; returns how many failures went.
    func prune(failuresBefore before: Date, at now: Date) async throws -> Int {
        try await connection.execute("DELETE FROM known_devices WHERE expires_at <= \(now)", logger: logger)
        return try await connection.count("DELETE FROM sign_in_failures WHERE failed_at < \(before) RETURNING 1", logger: logger)
    }

    private func times(_ query: PostgresQuery) async throws -> [Date] {
        try await connection.query(query, logger: logger).collect().map { try $0.decode(Date.self) }
    }
}
