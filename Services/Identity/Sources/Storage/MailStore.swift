import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres

/// The mail requests the relay turns into mails (`AccountMailRelay`), and the mailed tokens (selector and verifier hash
/// only) that come back in links, over one connection.
struct MailStore {
    let connection: PostgresConnection
    let logger: Logger

    /// A mail request as queued.
    struct MailRequest: Sendable {
        var id: UUID
        /// Nil for a kind this version does not know.
        var kind: AccountMail.Kind?
        var email: String
        var userID: UUID?
        var detail: String?
        var attempts: Int
    }

    // MARK: Requests

    /// Queues a mail; the relay sends it.
    func enqueue(_ kind: AccountMail.Kind, to email: String, userID: UUID?, source: String = "", detail: String? = nil, at now: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO mail_requests (id, kind, email, user_id, source, detail, requested_at, next_attempt_at)
            VALUES (\(UUID()), \(kind.rawValue), \(email), \(userID), \(source), \(detail), \(now), \(now))
            """, logger: logger)
    }

    /// Serialises reset requests for one address, then from one source (always in this order, so never a deadlock),
    /// until the transaction ends.
    func lockResetRequests(email: String, source: SignInSource) async throws {
        try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\(email), 17))", logger: logger)
        if source.isKnown {
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\(source.key), 18))", logger: logger)
        }
    }

    /// When the latest reset requests for the address were made since `since`, newest first.
    func resetRequests(email: String, since: Date, limit: Int) async throws -> [Date] {
        try await times(
            """
            SELECT requested_at FROM mail_requests WHERE email = \(email) AND kind = \(AccountMail.Kind.passwordReset.rawValue)
              AND requested_at > \(since)
            ORDER BY requested_at DESC LIMIT \(limit)
            """)
    }

    /// When the latest reset requests from the source were made since `since`, newest first.
    func resetRequests(source: SignInSource, since: Date, limit: Int) async throws -> [Date] {
        try await times(
            """
            SELECT requested_at FROM mail_requests WHERE source = \(source.key) AND kind = \(AccountMail.Kind.passwordReset.rawValue)
              AND requested_at > \(since)
            ORDER BY requested_at DESC LIMIT \(limit)
            """)
    }

    /// Every request to the address (its account is deleted).
    func forgetRequests(to email: String) async throws {
        try await connection.execute("DELETE FROM mail_requests WHERE email = \(email)", logger: logger)
    }

    /// The request due longest ago, locked for the transaction; requests other relays hold are passed over.
    func nextDueRequest(at now: Date) async throws -> MailRequest? {
        let rows = try await connection.query(
            """
            SELECT id, kind, email, user_id, detail, attempts FROM mail_requests
            WHERE handled_at IS NULL AND next_attempt_at <= \(now)
            ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED
            """, logger: logger
        ).collect()
        guard let row = rows.first else { return nil }
        let (id, kind, email, userID, detail, attempts) = try row.decode((UUID, String, String, UUID?, String?, Int).self)
        return MailRequest(id: id, kind: AccountMail.Kind(rawValue: kind), email: email, userID: userID, detail: detail, attempts: attempts)
    }

    func markNothingToSend(_ requestID: UUID, at now: Date) async throws {
        try await connection.execute(
            "UPDATE mail_requests SET handled_at = \(now), attempts = attempts + 1, outcome = 'nothing-to-send' WHERE id = \(requestID)",
            logger: logger)
    }

    /// Keeps the request from every relay until `until`.
    func lease(_ requestID: UUID, until: Date) async throws {
        try await connection.execute("UPDATE mail_requests SET next_attempt_at = \(until) WHERE id = \(requestID)", logger: logger)
    }

    func markHandedOver(_ requestID: UUID, as kind: AccountMail.Kind, at now: Date) async throws {
        try await connection.execute(
            "UPDATE mail_requests SET handled_at = \(now), attempts = attempts + 1, outcome = \(kind.rawValue) WHERE id = \(requestID)",
            logger: logger)
    }

    /// The request waits until `nextAttemptAt`, or is handled as given up.
    func markHandOverFailed(_ requestID: UUID, attempts: Int, nextAttemptAt: Date, givingUp: Bool, at now: Date) async throws {
        try await connection.execute(
            """
            UPDATE mail_requests SET attempts = \(attempts), next_attempt_at = \(nextAttemptAt),
                handled_at = \(givingUp ? now : nil), outcome = \(givingUp ? "gave-up" : nil)
            WHERE id = \(requestID)
            """, logger: logger)
    }

    // MARK: Tokens

    /// Stores a mailed token: its selector and the hash of its verifier, never the verifier itself.
    func storeToken(_ token: AccountToken, purpose: AccountTokenPurpose, userID: UUID, to email: String, at now: Date, expiresAt: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO account_tokens (selector, verifier_hash, purpose, user_id, email, created_at, expires_at)
            VALUES (\(Data(token.selector)), \(Data(AccountTokenSecret.hash(token.verifier))), \(purpose.rawValue), \(userID), \(email),
                    \(now), \(expiresAt))
            """, logger: logger)
    }

    func token(_ token: AccountToken) async throws -> StoredAccountToken? {
        let rows = try await connection.query(
            "SELECT user_id, purpose, email, verifier_hash, expires_at, used_at FROM account_tokens WHERE selector = \(Data(token.selector))",
            logger: logger
        ).collect()
        guard let row = rows.first else { return nil }
        let (userID, purpose, email, hash, expiresAt, usedAt) = try row.decode((UUID, String, String, Data, Date, Date?).self)
        guard let purpose = AccountTokenPurpose(rawValue: purpose) else { return nil }
        return StoredAccountToken(userID: userID, purpose: purpose, email: email, verifierHash: Array(hash), expiresAt: expiresAt, usedAt: usedAt)
    }

    func deleteToken(selector: Data) async throws {
        try await connection.execute("DELETE FROM account_tokens WHERE selector = \(selector)", logger: logger)
    }

    func useToken(_ token: AccountToken, at now: Date) async throws {
        try await connection.execute("UPDATE account_tokens SET used_at = \(now) WHERE selector = \(Data(token.selector))", logger: logger)
    }

    /// Uses up every unused token of the user, or only those for `purpose`.
    func useTokens(of userID: UUID, purpose: AccountTokenPurpose? = nil, at now: Date) async throws {
        try await connection.execute(
            """
            UPDATE account_tokens SET used_at = \(now)
            WHERE user_id = \(userID) AND (\(purpose?.rawValue)::text IS NULL OR purpose = \(purpose?.rawValue)) AND used_at IS NULL
            """, logger: logger)
    }

    /// Drops tokens expired before `tokensBefore` and handled requests older than `requestsBefore`.
    func prune(tokensExpiredBefore tokensBefore: Date, requestsBefore: Date) async throws {
        try await connection.execute("DELETE FROM account_tokens WHERE expires_at < \(tokensBefore)", logger: logger)
        try await connection.execute(
            "DELETE FROM mail_requests WHERE handled_at IS NOT NULL AND requested_at < \(requestsBefore)", logger: logger)
    }

    private func times(_ query: PostgresQuery) async throws -> [Date] {
        try await connection.query(query, logger: logger).collect().map { try $0.decode(Date.self) }
    }
}
