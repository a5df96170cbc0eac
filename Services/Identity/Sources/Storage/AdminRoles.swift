import Foundation
import Logging
import PostgresNIO

/// The admin role of accounts (`users.is_admin`). Never granted through the API: an operator runs
/// `surge-admin grant-admin --email ...` or `revoke-admin`, which call `set` on identity's schema. Identity reads the
/// role whenever it issues an access token (sign-in, refresh, registration, social sign-in), so a change reaches
/// the account's tokens at its next refresh: at most one access-token lifetime (15 minutes) later.
public enum AdminRoles {
    public enum Outcome: Sendable, Equatable {
        /// The account's role is now as asked (`changed` false when it already was).
        case updated(userID: UUID, changed: Bool)
        /// No account has this e-mail address (guests have none: they cannot be admins).
        case noSuchAccount
    }

    /// Grants (`admin` true) or revokes the role of the account with this e-mail address, compared as identity stores
    /// addresses (trimmed, lower case). `client` must use identity's schema as its search path.
    public static func set(_ admin: Bool, email: String, client: PostgresClient, logger: Logger) async throws -> Outcome {
        let normalised = email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let rows = try await client.query(
            """
            UPDATE users SET is_admin = \(admin) FROM (SELECT id, is_admin AS was FROM users WHERE email = \(normalised)) old
            WHERE users.id = old.id RETURNING users.id, old.was
            """, logger: logger
        ).collect()
        guard let row = rows.first else { return .noSuchAccount }
        let (id, was) = try row.decode((UUID, Bool).self)
        return .updated(userID: id, changed: was != admin)
    }
}
