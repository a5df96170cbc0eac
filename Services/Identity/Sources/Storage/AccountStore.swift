import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeAuth
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// Accounts, their credentials and linked identities, their profile, preferences and training plan, and who account
/// mails go to, over one connection.
struct AccountStore {
    let connection: PostgresConnection
    let logger: Logger

    private static let columns = "u.id, u.display_name, u.avatar_url, u.email, u.time_zone, u.locale, u.kind, u.created_at"

    // MARK: Accounts

    /// The account; `locking` holds its row until the transaction ends.
    func account(_ id: UUID, locking: Bool = false) async throws -> Account? {
        let rows = try await connection.query(
            "SELECT \(unescaped: Self.columns) FROM users u WHERE u.id = \(id) \(unescaped: locking ? "FOR UPDATE" : "")", logger: logger)
        return try await rows.collect().first.map(Self.decode)
    }

    func exists(_ id: UUID) async throws -> Bool {
        try await connection.count("SELECT 1 FROM users WHERE id = \(id)", logger: logger) > 0
    }

    func insert(_ account: Account) async throws {
        try await connection.execute(
            """
            INSERT INTO users (id, display_name, avatar_url, email, time_zone, locale, kind, created_at, updated_at, email_verified_at)
            VALUES (\(account.id), \(account.displayName), \(account.avatarURL), \(account.email), \(account.timeZone), \(account.locale),
                    \(account.kind.rawValue), \(account.createdAt), \(account.createdAt), \(Self.verifiedAt(account)))
            """, logger: logger)
    }

    /// A social provider vouched for a new social account's address; anyone else's address waits for its link.
    private static func verifiedAt(_ account: Account) -> Date? {
        account.kind == .social && account.email != nil ? account.createdAt : nil
    }

    /// Writes the account's e-mail and kind (a guest attaching credentials).
    func setEmailAndKind(of account: Account, at now: Date) async throws {
        try await connection.execute(
            "UPDATE users SET email = \(account.email), kind = \(account.kind.rawValue), updated_at = \(now) WHERE id = \(account.id)",
            logger: logger)
    }

    func updateProfile(_ account: Account, at now: Date) async throws {
        try await connection.execute(
            """
            UPDATE users SET display_name = \(account.displayName), avatar_url = \(account.avatarURL), time_zone = \(account.timeZone),
                locale = \(account.locale), updated_at = \(now)
            WHERE id = \(account.id)
            """, logger: logger)
    }

    func delete(_ userID: UUID) async throws {
        try await connection.execute("DELETE FROM users WHERE id = \(userID)", logger: logger)
    }

    /// Public profiles whose display name contains `query` (case-insensitive), by name; never the caller. Both the
    /// pattern and the cursor's name are lowercased by PostgreSQL, like the sort key: Swift's `lowercased()`
    /// disagrees with it for some characters ("İ"), which would skip or repeat rows.
    func search(_ query: String, excluding caller: UUID, page: PageRequest<NamePosition>) async throws -> Page<PublicProfile> {
        let pattern = "%" + Self.escapeLike(query) + "%"
        let rows = try await connection.query(
            """
            SELECT u.id, u.display_name, u.avatar_url, lower(u.display_name) FROM users u
            WHERE lower(u.display_name) LIKE lower(\(pattern)) ESCAPE '\\' AND u.id <> \(caller)
              AND (\(page.after?.name)::text IS NULL OR (lower(u.display_name), u.id) > (\(page.after?.name), \(page.after?.id)))
            ORDER BY lower(u.display_name), u.id
            LIMIT \(page.limit + 1)
            """, logger: logger
        ).collect()
        var positions: [UUID: String] = [:]
        let profiles = try rows.map { row in
            let (id, name, avatar, sortName) = try row.decode((UUID, String, String?, String).self)
            positions[id] = sortName
            return PublicProfile(id: id, displayName: name, avatarURL: avatar)
        }
        return page.page(profiles) { NamePosition(name: positions[$0.id] ?? "", id: $0.id) }
    }

    static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }

    /// The roles an access token issued now for this account carries: `["admin"]` or none (`AdminRoles`).
    func roles(of userID: UUID) async throws -> [String] {
        let rows = try await connection.query("SELECT is_admin FROM users WHERE id = \(userID)", logger: logger).collect()
        return try rows.first?.decode(Bool.self) == true ? [AccessTokenClaims.adminRole] : []
    }

    // MARK: Passwords

    /// The account with this e-mail and its password hash, if it has a password.
    func passwordAccount(email: EmailAddress) async throws -> (account: Account, passwordHash: String)? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: Self.columns), p.password_hash
            FROM users u JOIN password_credentials p ON p.user_id = u.id
            WHERE lower(u.email) = \(email.value)
            """, logger: logger
        ).collect()
        guard let row = rows.first else { return nil }
        let (id, name, avatar, address, zone, locale, kind, createdAt, hash) = try row.decode(
            (UUID, String, String?, String?, String, String?, String, Date, String).self)
        return (Self.make(id, name, avatar, address, zone, locale, kind, createdAt), hash)
    }

    func passwordHash(_ userID: UUID) async throws -> String? {
        try await connection.query("SELECT password_hash FROM password_credentials WHERE user_id = \(userID)", logger: logger)
            .collect().first?.decode(String.self)
    }

    func insertPassword(_ passwordHash: String, of userID: UUID, at now: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO password_credentials (user_id, password_hash, created_at, updated_at)
            VALUES (\(userID), \(passwordHash), \(now), \(now))
            """, logger: logger)
    }

    func setPassword(_ passwordHash: String, of userID: UUID, at now: Date) async throws {
        try await connection.execute(
            "UPDATE password_credentials SET password_hash = \(passwordHash), updated_at = \(now) WHERE user_id = \(userID)", logger: logger)
    }

    /// When the account's password was set and last changed, if it has one.
    func passwordTimes(of userID: UUID) async throws -> (createdAt: Date, updatedAt: Date)? {
        try await connection.query("SELECT created_at, updated_at FROM password_credentials WHERE user_id = \(userID)", logger: logger)
            .collect().first?.decode((Date, Date).self)
    }

    // MARK: Social identities

    /// The account a provider's identity is linked to.
    func account(linkedTo identity: SocialIdentity) async throws -> Account? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: Self.columns) FROM social_identities s JOIN users u ON u.id = s.user_id
            WHERE s.provider = \(identity.provider.rawValue) AND s.subject = \(identity.subject)
            """, logger: logger
        ).collect()
        return try rows.first.map(Self.decode)
    }

    /// The account with this e-mail, locked, and whether it has a password.
    func lockedAccount(email: EmailAddress) async throws -> (account: Account, hasPassword: Bool)? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: Self.columns), EXISTS (SELECT 1 FROM password_credentials p WHERE p.user_id = u.id)
            FROM users u WHERE lower(u.email) = \(email.value) FOR UPDATE
            """, logger: logger
        ).collect()
        guard let row = rows.first else { return nil }
        let (id, name, avatar, address, zone, locale, kind, createdAt, hasPassword) = try row.decode(
            (UUID, String, String?, String?, String, String?, String, Date, Bool).self)
        return (Self.make(id, name, avatar, address, zone, locale, kind, createdAt), hasPassword)
    }

    func link(_ identity: SocialIdentity, to userID: UUID, at now: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO social_identities (provider, subject, user_id, email, linked_at)
            VALUES (\(identity.provider.rawValue), \(identity.subject), \(userID), \(identity.verifiedEmail?.value), \(now))
            """, logger: logger)
    }

    func linkedIdentities(of userID: UUID) async throws -> [IdentityExport.LinkedIdentity] {
        try await connection.query(
            "SELECT provider, subject, email, linked_at FROM social_identities WHERE user_id = \(userID) ORDER BY linked_at", logger: logger
        ).collect().map { row in
            let (provider, subject, email, linkedAt) = try row.decode((String, String, String?, Date).self)
            return IdentityExport.LinkedIdentity(provider: provider, subject: subject, email: email, linkedAt: linkedAt)
        }
    }

    // MARK: Preferences and training plan

    func preferences(_ userID: UUID) async throws -> (Preferences, updatedAt: Date?) {
        let rows = try await connection.query(
            """
            SELECT notifications_enabled, daily_reminder_time, quiet_hours_start, quiet_hours_end, disabled_categories, telemetry_opt_out, updated_at
            FROM preferences WHERE user_id = \(userID)
            """, logger: logger
        ).collect()
        if let row = rows.first {
            let (enabled, reminder, quietStart, quietEnd, disabled, optOut, updatedAt) = try row.decode(
                (Bool, String?, String?, String?, [String], Bool, Date).self)
            let quiet = quietStart.flatMap(LocalTime.init).flatMap { start in quietEnd.flatMap(LocalTime.init).map { QuietHours(start: start, end: $0) } }
            return (
                Preferences(
                    notificationsEnabled: enabled, dailyReminderTime: reminder.flatMap(LocalTime.init), quietHours: quiet,
                    disabledCategories: disabled.compactMap(NotificationCategory.init), telemetryOptOut: optOut),
                updatedAt
            )
        }
        return (.defaults, nil)
    }

    func savePreferences(_ preferences: Preferences, of userID: UUID, at now: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO preferences (user_id, notifications_enabled, daily_reminder_time, quiet_hours_start, quiet_hours_end,
                                     disabled_categories, telemetry_opt_out, updated_at)
            VALUES (\(userID), \(preferences.notificationsEnabled), \(preferences.dailyReminderTime?.description),
                    \(preferences.quietHours?.start.description), \(preferences.quietHours?.end.description),
                    \(preferences.disabledCategories.map(\.rawValue)), \(preferences.telemetryOptOut), \(now))
            ON CONFLICT (user_id) DO UPDATE SET
                notifications_enabled = EXCLUDED.notifications_enabled, daily_reminder_time = EXCLUDED.daily_reminder_time,
                quiet_hours_start = EXCLUDED.quiet_hours_start, quiet_hours_end = EXCLUDED.quiet_hours_end,
                disabled_categories = EXCLUDED.disabled_categories, telemetry_opt_out = EXCLUDED.telemetry_opt_out,
                updated_at = EXCLUDED.updated_at
            """, logger: logger)
    }

    func trainingPlan(_ userID: UUID) async throws -> (TrainingPlan, updatedAt: Date)? {
        let rows = try await connection.query(
            """
            SELECT activity_level, max_push_ups_in_one_set, days_per_week, daily_goal, starting_series, recovery_seconds, updated_at
            FROM training_plans WHERE user_id = \(userID)
            """, logger: logger
        ).collect()
        if let row = rows.first {
            let (level, capacity, days, goal, series, recovery, updatedAt) = try row.decode((String, Int, Int, Int, Int, Int, Date).self)
            let answers = TrainingAnswers(activityLevel: ActivityLevel(rawValue: level) ?? .beginner, maxPushUpsInOneSet: capacity, daysPerWeek: days)
            return (TrainingPlan(answers: answers, dailyGoal: goal, startingSeries: series, recoverySeconds: recovery), updatedAt)
        }
        return nil
    }

    func saveTrainingPlan(_ plan: TrainingPlan, of userID: UUID, at now: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO training_plans (user_id, activity_level, max_push_ups_in_one_set, days_per_week, daily_goal, starting_series,
                                        recovery_seconds, updated_at)
            VALUES (\(userID), \(plan.answers.activityLevel.rawValue), \(plan.answers.maxPushUpsInOneSet), \(plan.answers.daysPerWeek),
                    \(plan.dailyGoal), \(plan.startingSeries), \(plan.recoverySeconds), \(now))
            ON CONFLICT (user_id) DO UPDATE SET
                activity_level = EXCLUDED.activity_level, max_push_ups_in_one_set = EXCLUDED.max_push_ups_in_one_set,
                days_per_week = EXCLUDED.days_per_week, daily_goal = EXCLUDED.daily_goal, starting_series = EXCLUDED.starting_series,
                recovery_seconds = EXCLUDED.recovery_seconds, updated_at = EXCLUDED.updated_at
            """, logger: logger)
    }

    // MARK: Addresses

    /// The address, whether it is verified, and the address a change waits to verify.
    func emailStatus(_ userID: UUID) async throws -> (email: String?, verified: Bool, pending: String?)? {
        let rows = try await connection.query(
            "SELECT email, email_verified_at IS NOT NULL, pending_email FROM users WHERE id = \(userID)", logger: logger
        ).collect()
        return try rows.first.map { try $0.decode((String?, Bool, String?).self) }
    }

    /// The account's address and the one a change waits for, locked.
    func lockedAddresses(_ userID: UUID) async throws -> (current: String?, pending: String?)? {
        let rows = try await connection.query("SELECT email, pending_email FROM users WHERE id = \(userID) FOR UPDATE", logger: logger).collect()
        return try rows.first?.decode((String?, String?).self)
    }

    func isEmailTaken(_ email: EmailAddress, byOtherThan userID: UUID) async throws -> Bool {
        try await connection.count("SELECT 1 FROM users WHERE lower(email) = \(email.value) AND id <> \(userID)", logger: logger) > 0
    }

    func setPendingEmail(_ email: EmailAddress, of userID: UUID, at now: Date) async throws {
        try await connection.execute("UPDATE users SET pending_email = \(email.value), updated_at = \(now) WHERE id = \(userID)", logger: logger)
    }

    func markEmailVerified(_ userID: UUID, at now: Date) async throws {
        try await connection.execute("UPDATE users SET email_verified_at = \(now), updated_at = \(now) WHERE id = \(userID)", logger: logger)
    }

    /// The address a change waited for becomes the account's, verified.
    func adoptVerifiedEmail(_ email: String, of userID: UUID, at now: Date) async throws {
        try await connection.execute(
            """
            UPDATE users SET email = \(email), pending_email = NULL, email_verified_at = \(now), updated_at = \(now)
            WHERE id = \(userID)
            """, logger: logger)
    }

    // MARK: Whom account mails go to

    /// The account with a password whose address is this one, whatever its case, and whether the address is verified.
    func passwordRecipient(email: String) async throws -> (userID: UUID, name: String, locale: String?, verified: Bool)? {
        let rows = try await connection.query(
            """
            SELECT u.id, u.display_name, u.locale, u.email_verified_at IS NOT NULL FROM users u
            JOIN password_credentials p ON p.user_id = u.id WHERE lower(u.email) = \(email)
            """, logger: logger
        ).collect()
        return try rows.first?.decode((UUID, String, String?, Bool).self)
    }

    /// The user's name and locale, while the address is still the account's unverified one or the one a change waits for.
    func recipientAwaitingVerification(_ userID: UUID, email: String) async throws -> (name: String, locale: String?)? {
        let rows = try await connection.query(
            """
            SELECT display_name, locale FROM users
            WHERE id = \(userID) AND ((email = \(email) AND email_verified_at IS NULL) OR pending_email = \(email))
            """, logger: logger
        ).collect()
        return try rows.first?.decode((String, String?).self)
    }

    func recipient(_ userID: UUID) async throws -> (name: String, locale: String?)? {
        let rows = try await connection.query("SELECT display_name, locale FROM users WHERE id = \(userID)", logger: logger).collect()
        return try rows.first?.decode((String, String?).self)
    }

    // MARK: Rows

    private static func decode(_ row: PostgresRow) throws -> Account {
        let (id, displayName, avatarURL, email, timeZone, locale, kind, createdAt) = try row.decode(
            (UUID, String, String?, String?, String, String?, String, Date).self)
        return make(id, displayName, avatarURL, email, timeZone, locale, kind, createdAt)
    }

    private static func make(
        _ id: UUID, _ displayName: String, _ avatarURL: String?, _ email: String?, _ timeZone: String, _ locale: String?, _ kind: String,
        _ createdAt: Date
    ) -> Account {
        Account(
            id: id, displayName: displayName, avatarURL: avatarURL, email: email, timeZone: timeZone, locale: locale,
            kind: AccountKind(rawValue: kind) ?? .guest, createdAt: createdAt)
    }
}
