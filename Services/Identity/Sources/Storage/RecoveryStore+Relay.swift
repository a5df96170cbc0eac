import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres

/// The relay's side of the mail requests (`AccountMailRelay`): claiming them, finding whom a mail goes to, storing the
/// token it carries, and recording how the hand-over went.
extension RecoveryStore {
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

    /// The request due longest ago, locked for the caller's transaction; requests other relays hold are passed over.
    static func nextDueMailRequest(at now: Date, on connection: PostgresConnection, logger: Logger) async throws -> MailRequest? {
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

    static func markNothingToSend(_ requestID: UUID, at now: Date, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.execute(
            "UPDATE mail_requests SET handled_at = \(now), attempts = attempts + 1, outcome = 'nothing-to-send' WHERE id = \(requestID)",
            logger: logger)
    }

    /// Keeps the request from every relay until `until`.
    static func leaseMailRequest(_ requestID: UUID, until: Date, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.execute("UPDATE mail_requests SET next_attempt_at = \(until) WHERE id = \(requestID)", logger: logger)
    }

    static func markHandedOver(_ requestID: UUID, as kind: AccountMail.Kind, at now: Date, client: PostgresClient, logger: Logger) async throws {
        try await client.query(
            "UPDATE mail_requests SET handled_at = \(now), attempts = attempts + 1, outcome = \(kind.rawValue) WHERE id = \(requestID)",
            logger: logger)
    }

    /// A hand-over that failed, in one transaction: the token the mail carried is deleted, and the request waits until
    /// `nextAttemptAt`, or is handled as given up.
    static func markHandOverFailed(
        _ requestID: UUID, tokenSelector: Data?, attempts: Int, nextAttemptAt: Date, givingUp: Bool, at now: Date, client: PostgresClient,
        logger: Logger
    ) async throws {
        try await client.transaction(logger: logger) { connection in
            if let selector = tokenSelector {
                try await connection.execute("DELETE FROM account_tokens WHERE selector = \(selector)", logger: logger)
            }
            try await connection.execute(
                """
                UPDATE mail_requests SET attempts = \(attempts), next_attempt_at = \(nextAttemptAt),
                    handled_at = \(givingUp ? now : nil), outcome = \(givingUp ? "gave-up" : nil)
                WHERE id = \(requestID)
                """, logger: logger)
        }
    }

    /// The account with a password whose address is this one, whatever its case, and whether the address is verified.
    static func passwordAccount(
        withEmail email: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> (userID: UUID, name: String, locale: String?, verified: Bool)? {
        let rows = try await connection.query(
            """
            SELECT u.id, u.display_name, u.locale, u.email_verified_at IS NOT NULL FROM users u
            JOIN password_credentials p ON p.user_id = u.id WHERE lower(u.email) = \(email)
            """, logger: logger
        ).collect()
        return try rows.first?.decode((UUID, String, String?, Bool).self)
    }

    /// The user's name and locale, while the address is still the account's unverified one or the one a change waits for.
    static func recipientAwaitingVerification(
        _ userID: UUID, email: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> (name: String, locale: String?)? {
        let rows = try await connection.query(
            """
            SELECT display_name, locale FROM users
            WHERE id = \(userID) AND ((email = \(email) AND email_verified_at IS NULL) OR pending_email = \(email))
            """, logger: logger
        ).collect()
        return try rows.first?.decode((String, String?).self)
    }

    static func recipient(_ userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> (name: String, locale: String?)? {
        let rows = try await connection.query("SELECT display_name, locale FROM users WHERE id = \(userID)", logger: logger).collect()
        return try rows.first?.decode((String, String?).self)
    }

    /// Stores a mailed token: its selector and the hash of its verifier, never the verifier itself.
    static func storeMailedToken(
        _ token: AccountToken, purpose: AccountTokenPurpose, userID: UUID, to email: String, at now: Date, expiresAt: Date,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.execute(
            """
            INSERT INTO account_tokens (selector, verifier_hash, purpose, user_id, email, created_at, expires_at)
            VALUES (\(Data(token.selector)), \(Data(AccountTokenSecret.hash(token.verifier))), \(purpose.rawValue), \(userID), \(email),
                    \(now), \(expiresAt))
            """, logger: logger)
    }
}
