import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// Password resets, address verification and address changes: the mail requests the relay turns into mails, and the
/// mailed tokens (selector and verifier hash only) that come back in links.
struct RecoveryStore: Sendable {
    let client: PostgresClient
    /// For `SessionsRevoked` when a reset signs every device out.
    let outbox: Outbox
    let logger: Logger
    let clock: ServiceClock
    let throttle: MailRequestThrottle

    enum TokenOutcome: Sendable, Equatable {
        case done
        case refused(AccountTokenDecision.Refusal)
        /// A verified address change found its new address taken meanwhile.
        case emailTaken
    }

    // MARK: Requests

    /// Records a reset request for the address as typed, or refuses it: the throttle decides before anything is
    /// looked up, and nothing here depends on whether an account has the address (the relay finds that out later),
    /// so the answer and its time are the same either way.
    func requestPasswordReset(email: String, source: SignInSource) async throws -> MailRequestThrottle.Decision {
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\(email), 17))", logger: logger)
            if source.isKnown {
                try await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(\(source.key), 18))", logger: logger)
            }
            let byAddress = try await times(
                """
                SELECT requested_at FROM mail_requests WHERE email = \(email) AND kind = \(AccountMail.Kind.passwordReset.rawValue)
                  AND requested_at > \(now.addingTimeInterval(-throttle.perAddress.window))
                ORDER BY requested_at DESC LIMIT \(throttle.perAddress.maxFailures)
                """, on: connection)
            let bySource =
                source.isKnown
                ? try await times(
                    """
                    SELECT requested_at FROM mail_requests WHERE source = \(source.key) AND kind = \(AccountMail.Kind.passwordReset.rawValue)
                      AND requested_at > \(now.addingTimeInterval(-throttle.perSource.window))
                    ORDER BY requested_at DESC LIMIT \(throttle.perSource.maxFailures)
                    """, on: connection) : []
            let decision = throttle.decide(address: byAddress, source: bySource, now: now)
            if decision == .send {
                try await Self.enqueue(.passwordReset, to: email, userID: nil, source: source.key, at: now, on: connection, logger: logger)
            }
            return decision
        }
    }

    /// Queues a mail inside the caller's transaction; the relay sends it.
    static func enqueue(
        _ kind: AccountMail.Kind, to email: String, userID: UUID?, source: String = "", detail: String? = nil, at now: Date,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.execute(
            """
            INSERT INTO mail_requests (id, kind, email, user_id, source, detail, requested_at, next_attempt_at)
            VALUES (\(UUID()), \(kind.rawValue), \(email), \(userID), \(source), \(detail), \(now), \(now))
            """, logger: logger)
    }

    /// The address, whether it is verified, and the address a change waits to verify.
    func emailStatus(_ userID: UUID) async throws -> (email: String?, verified: Bool, pending: String?)? {
        let rows = try await client.query(
            "SELECT email, email_verified_at IS NOT NULL, pending_email FROM users WHERE id = \(userID)", logger: logger
        ).collect()
        return try rows.first.map { try $0.decode((String?, Bool, String?).self) }
    }

    /// Asks for an address change: the new address waits, unused, until its owner follows the link mailed to it.
    /// A later request replaces an earlier one.
    func requestEmailChange(_ userID: UUID, to email: EmailAddress) async throws {
        let now = clock.now()
        try await client.transaction(logger: logger) { connection in
            let taken = try await connection.query(
                "SELECT 1 FROM users WHERE lower(email) = \(email.value) AND id <> \(userID)", logger: logger
            ).collect()
            guard taken.isEmpty else { throw IdentityError.emailTaken }
            try await connection.execute(
                "UPDATE users SET pending_email = \(email.value), updated_at = \(now) WHERE id = \(userID)", logger: logger)
            try await Self.enqueue(.emailVerification, to: email.value, userID: userID, at: now, on: connection, logger: logger)
        }
    }

    // MARK: Links

    /// Sets a new password with a reset token: the token is used up, every other reset token of the account dies, and
    /// every refresh-token family is revoked (every device signed out), all in one transaction.
    func resetPassword(_ token: AccountToken, passwordHash hash: String, trace: TraceContext? = nil) async throws -> TokenOutcome {
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            let stored = try await self.stored(token, on: connection)
            let decision = AccountTokenDecision.decide(
                stored, presentedHash: AccountTokenSecret.hash(token.verifier), purpose: .passwordReset, now: now)
            guard case .accept = decision, let stored else {
                if case .refuse(let refusal) = decision { return .refused(refusal) }
                return .refused(.unknown)
            }
            try await connection.execute(
                "UPDATE password_credentials SET password_hash = \(hash), updated_at = \(now) WHERE user_id = \(stored.userID)", logger: logger)
            try await connection.execute(
                """
                UPDATE account_tokens SET used_at = \(now)
                WHERE user_id = \(stored.userID) AND purpose = \(AccountTokenPurpose.passwordReset.rawValue) AND used_at IS NULL
                """, logger: logger)
            try await SessionStore.revokeEverySession(
                of: stored.userID, reason: .passwordReset, at: now, outbox: outbox, trace: trace, on: connection, logger: logger)
            return .done
        }
    }

    /// Whether the token is a live reset token, without using it (the new password is checked before it is spent).
    func isLiveResetToken(_ token: AccountToken) async throws -> (userID: UUID, email: String)? {
        let stored = try await self.stored(token, on: client)
        let decision = AccountTokenDecision.decide(
            stored, presentedHash: AccountTokenSecret.hash(token.verifier), purpose: .passwordReset, now: clock.now())
        guard decision == .accept, let stored else { return nil }
        return (stored.userID, stored.email)
    }

    /// Verifies an address with its token. The account's own address becomes verified; an address a change waits for
    /// becomes the account's address (verified), the old address is told, and reset links mailed to the old address die.
    func verifyEmail(_ token: AccountToken) async throws -> TokenOutcome {
        let now = clock.now()
        do {
            return try await client.transaction(logger: logger) { connection in
                let stored = try await self.stored(token, on: connection)
                let decision = AccountTokenDecision.decide(
                    stored, presentedHash: AccountTokenSecret.hash(token.verifier), purpose: .emailVerification, now: now)
                guard case .accept = decision, let stored else {
                    if case .refuse(let refusal) = decision { return .refused(refusal) }
                    return .refused(.unknown)
                }
                let rows = try await connection.query(
                    "SELECT email, pending_email FROM users WHERE id = \(stored.userID) FOR UPDATE", logger: logger
                ).collect()
                guard let (current, pending) = try rows.first?.decode((String?, String?).self) else { return .refused(.unknown) }
                try await connection.execute("UPDATE account_tokens SET used_at = \(now) WHERE selector = \(Data(token.selector))", logger: logger)
                if stored.email == current {
                    try await connection.execute(
                        "UPDATE users SET email_verified_at = \(now), updated_at = \(now) WHERE id = \(stored.userID)", logger: logger)
                } else if stored.email == pending {
                    try await connection.execute(
                        """
                        UPDATE users SET email = \(stored.email), pending_email = NULL, email_verified_at = \(now), updated_at = \(now)
                        WHERE id = \(stored.userID)
                        """, logger: logger)
                    try await connection.execute(
                        """
                        UPDATE account_tokens SET used_at = \(now) WHERE user_id = \(stored.userID) AND used_at IS NULL
                        """, logger: logger)
                    if let current, let new = EmailAddress(stored.email) {
                        try await Self.enqueue(
                            .emailChanged, to: current, userID: stored.userID, detail: new.masked, at: now, on: connection, logger: logger)
                    }
                } else {
                    // The address is neither the account's nor the one it is changing to any more: a link to an
                    // abandoned change.
                    return .refused(.unknown)
                }
                return .done
            }
        } catch where error.isUniqueViolation {
            return .emailTaken
        }
    }

    private func stored(_ token: AccountToken, on runner: some QueryRunner) async throws -> StoredAccountToken? {
        let rows = try await runner.run(
            "SELECT user_id, purpose, email, verifier_hash, expires_at, used_at FROM account_tokens WHERE selector = \(Data(token.selector))",
            logger: logger
        ).collect()
        guard let row = rows.first else { return nil }
        let (userID, purpose, email, hash, expiresAt, usedAt) = try row.decode((UUID, String, String, Data, Date, Date?).self)
        guard let purpose = AccountTokenPurpose(rawValue: purpose) else { return nil }
        return StoredAccountToken(userID: userID, purpose: purpose, email: email, verifierHash: Array(hash), expiresAt: expiresAt, usedAt: usedAt)
    }

    /// Drops tokens a day past their expiry and mail requests too old to matter to the throttle; idempotent.
    func prune() async throws {
        let now = clock.now()
        try await client.query("DELETE FROM account_tokens WHERE expires_at < \(now.addingTimeInterval(-86_400))", logger: logger)
        try await client.query(
            "DELETE FROM mail_requests WHERE handled_at IS NOT NULL AND requested_at < \(now.addingTimeInterval(-throttle.retention))",
            logger: logger)
    }

    private func times(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [Date] {
        try await connection.query(query, logger: logger).collect().map { try $0.decode(Date.self) }
    }
}
