import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// Accounts, their credentials and their profile, preferences and training plan. Every change writes the events it
/// causes in the same transaction.
struct AccountStore: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger
    let clock: ServiceClock

    // MARK: Sign-up and sign-in

    func registerGuest(_ registration: GuestRegistration, trace: TraceContext) async throws -> Account {
        let account = Account(
            id: UUID(), displayName: registration.displayName, timeZone: registration.timeZone, locale: registration.locale,
            kind: .guest, createdAt: clock.now())
        try await client.transaction(logger: logger) { connection in
            try await insert(account, on: connection)
            try await outbox.append(registered(account), on: connection, at: account.createdAt, trace: trace, logger: logger)
        }
        return account
    }

    func registerWithPassword(_ registration: PasswordRegistration, passwordHash: String, trace: TraceContext) async throws -> Account {
        let account = Account(
            id: UUID(), displayName: registration.displayName, email: registration.email.value, timeZone: registration.timeZone,
            locale: registration.locale, kind: .password, createdAt: clock.now())
        do {
            try await client.transaction(logger: logger) { connection in
                try await insert(account, on: connection)
                try await connection.execute(
                    """
                    INSERT INTO password_credentials (user_id, password_hash, created_at, updated_at)
                    VALUES (\(account.id), \(passwordHash), \(account.createdAt), \(account.createdAt))
                    """, logger: logger)
                try await RecoveryStore.enqueue(
                    .emailVerification, to: registration.email.value, userID: account.id, at: account.createdAt, on: connection, logger: logger)
                try await outbox.append(registered(account), on: connection, at: account.createdAt, trace: trace, logger: logger)
            }
        } catch where error.isUniqueViolation {
            throw IdentityError.emailTaken
        }
        return account
    }

    /// The account with this e-mail and its password hash, if it has a password.
    func passwordAccount(email: EmailAddress) async throws -> (account: Account, passwordHash: String)? {
        let rows = try await client.run(
            """
            SELECT \(unescaped: AccountRows.columns), p.password_hash
            FROM users u JOIN password_credentials p ON p.user_id = u.id
            WHERE lower(u.email) = \(email.value)
            """, logger: logger
        ).collect()
        guard let row = rows.first else { return nil }
        let (id, name, avatar, address, zone, locale, kind, createdAt, hash) = try row.decode(
            (UUID, String, String?, String?, String, String?, String, Date, String).self)
        return (AccountRows.make(id, name, avatar, address, zone, locale, kind, createdAt), hash)
    }

    /// A guest attaches an e-mail and password and becomes a password account; nothing else changes.
    func attachCredentials(_ userID: UUID, _ credentials: CredentialsAttachment, passwordHash: String, trace: TraceContext) async throws -> Account {
        let now = clock.now()
        do {
            return try await client.transaction(logger: logger) { connection in
                guard var account = try await AccountRows.account(userID, on: connection, lock: true, logger: logger) else {
                    throw IdentityError.accountGone
                }
                guard account.kind == .guest else {
                    throw IdentityError.credentialsExist
                }
                account.email = credentials.email.value
                account.kind = .password
                try await connection.execute(
                    "UPDATE users SET email = \(account.email), kind = \(account.kind.rawValue), updated_at = \(now) WHERE id = \(userID)",
                    logger: logger)
                try await connection.execute(
                    """
                    INSERT INTO password_credentials (user_id, password_hash, created_at, updated_at)
                    VALUES (\(userID), \(passwordHash), \(now), \(now))
                    """, logger: logger)
                try await RecoveryStore.enqueue(
                    .emailVerification, to: credentials.email.value, userID: userID, at: now, on: connection, logger: logger)
                try await outbox.append(
                    UserUpgraded(userID: userID, kind: .password, upgradedAt: now), on: connection, at: now, trace: trace, logger: logger)
                return account
            }
        } catch where error.isUniqueViolation {
            throw IdentityError.emailTaken
        }
    }

    /// Signs in with a provider's identity: a known identity signs in to its account; otherwise a social account whose
    /// e-mail is the identity's verified e-mail gets the identity linked; otherwise a new social account is created.
    /// A password account with that e-mail is refused (409 `account-exists`): its owner never proved the address, so
    /// linking would hand it to whoever registered it first.
    func socialSignIn(
        _ identity: SocialIdentity, requestedName: String?, timeZone: String?, trace: TraceContext, isRetry: Bool = false
    ) async throws -> (account: Account, created: Bool) {
        let now = clock.now()
        do {
            return try await client.transaction(logger: logger) { connection in
                let known = try await connection.run(
                    """
                    SELECT \(unescaped: AccountRows.columns) FROM social_identities s JOIN users u ON u.id = s.user_id
                    WHERE s.provider = \(identity.provider.rawValue) AND s.subject = \(identity.subject)
                    """, logger: logger
                ).collect()
                if let row = known.first { return (try AccountRows.decode(row), false) }
                if let email = identity.verifiedEmail {
                    let matching = try await connection.run(
                        """
                        SELECT \(unescaped: AccountRows.columns), EXISTS (SELECT 1 FROM password_credentials p WHERE p.user_id = u.id)
                        FROM users u WHERE lower(u.email) = \(email.value) FOR UPDATE
                        """, logger: logger
                    ).collect()
                    if let row = matching.first {
                        let (id, name, avatar, address, zone, locale, kind, createdAt, hasPassword) = try row.decode(
                            (UUID, String, String?, String?, String, String?, String, Date, Bool).self)
                        guard !hasPassword else { throw IdentityError.accountExists }
                        let account = AccountRows.make(id, name, avatar, address, zone, locale, kind, createdAt)
                        try await link(identity, to: account.id, at: now, on: connection)
                        return (account, false)
                    }
                }
                let account = Account(
                    id: UUID(), displayName: identity.displayName(requested: requestedName), email: identity.verifiedEmail?.value,
                    timeZone: timeZone ?? "UTC", locale: nil, kind: .social, createdAt: now)
                try await insert(account, on: connection)
                try await link(identity, to: account.id, at: now, on: connection)
                try await outbox.append(registered(account), on: connection, at: now, trace: trace, logger: logger)
                return (account, true)
            }
        } catch where error.isUniqueViolation && !isRetry {
            // Someone signed in with the same identity or e-mail at the same moment: a second attempt finds it now.
            return try await socialSignIn(identity, requestedName: requestedName, timeZone: timeZone, trace: trace, isRetry: true)
        }
    }

    private func link(_ identity: SocialIdentity, to userID: UUID, at now: Date, on connection: PostgresConnection) async throws {
        try await connection.execute(
            """
            INSERT INTO social_identities (provider, subject, user_id, email, linked_at)
            VALUES (\(identity.provider.rawValue), \(identity.subject), \(userID), \(identity.verifiedEmail?.value), \(now))
            """, logger: logger)
    }

    // MARK: Reading

    func account(_ id: UUID) async throws -> Account? {
        try await AccountRows.account(id, on: client, logger: logger)
    }

    func exists(_ id: UUID) async throws -> Bool {
        try await AccountRows.exists(id, on: client, logger: logger)
    }

    /// Public profiles whose display name contains `query` (case-insensitive), by name; never the caller. Both the
    /// pattern and the cursor's name are lowercased by PostgreSQL, like the sort key: Swift's `lowercased()`
    /// disagrees with it for some characters ("İ"), which would skip or repeat rows.
    func search(_ query: String, excluding caller: UUID, page: PageRequest<NamePosition>) async throws -> Page<PublicProfile> {
        let pattern = "%" + Self.escapeLike(query) + "%"
        let rows = try await client.run(
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

    // MARK: Profile, preferences, training plan

    func updateProfile(_ userID: UUID, _ update: ProfileUpdate, trace: TraceContext) async throws -> Account {
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            guard let before = try await AccountRows.account(userID, on: connection, lock: true, logger: logger) else {
                throw IdentityError.accountGone
            }
            let after = update.applied(to: before)
            guard after != before else { return before }
            try await connection.execute(
                """
                UPDATE users SET display_name = \(after.displayName), avatar_url = \(after.avatarURL), time_zone = \(after.timeZone),
                    locale = \(after.locale), updated_at = \(now)
                WHERE id = \(userID)
                """, logger: logger)
            try await outbox.append(
                ProfileChanged(
                    userID: userID, displayName: after.displayName, avatarURL: after.avatarURL, timeZone: after.timeZone,
                    previousTimeZone: before.timeZone, locale: after.locale, changedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
            return after
        }
    }

    func preferences(_ userID: UUID) async throws -> (Preferences, updatedAt: Date?) {
        try await Self.preferences(userID, on: client, logger: logger)
    }

    static func preferences(_ userID: UUID, on runner: some QueryRunner, logger: Logger) async throws -> (Preferences, updatedAt: Date?) {
        let rows = try await runner.run(
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

    /// Saves the whole preferences; emits `PreferencesChanged` when anything changed.
    func savePreferences(_ userID: UUID, _ preferences: Preferences, trace: TraceContext) async throws -> (Preferences, updatedAt: Date?) {
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            guard try await AccountRows.account(userID, on: connection, lock: true, logger: logger) != nil else { throw IdentityError.accountGone }
            let (current, updatedAt) = try await Self.preferences(userID, on: connection, logger: logger)
            if current == preferences && updatedAt != nil { return (current, updatedAt) }
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
            if current != preferences {
                try await outbox.append(
                    PreferencesChanged(
                        userID: userID, notificationsEnabled: preferences.notificationsEnabled, dailyReminderTime: preferences.dailyReminderTime,
                        quietHours: preferences.quietHours, disabledCategories: preferences.disabledCategories,
                        telemetryOptOut: preferences.telemetryOptOut, changedAt: now),
                    on: connection, at: now, trace: trace, logger: logger)
            }
            return (preferences, now)
        }
    }

    func trainingPlan(_ userID: UUID) async throws -> (TrainingPlan, updatedAt: Date)? {
        try await Self.trainingPlan(userID, on: client, logger: logger)
    }

    static func trainingPlan(_ userID: UUID, on runner: some QueryRunner, logger: Logger) async throws -> (TrainingPlan, updatedAt: Date)? {
        let rows = try await runner.run(
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

    /// Saves the plan and emits `TrainingPlanChanged`.
    func saveTrainingPlan(_ userID: UUID, _ plan: TrainingPlan, trace: TraceContext) async throws -> Date {
        let now = clock.now()
        try await client.transaction(logger: logger) { connection in
            guard try await AccountRows.account(userID, on: connection, lock: true, logger: logger) != nil else { throw IdentityError.accountGone }
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
            try await outbox.append(
                TrainingPlanChanged(
                    userID: userID, activityLevel: plan.answers.activityLevel, maxPushUpsInOneSet: plan.answers.maxPushUpsInOneSet,
                    daysPerWeek: plan.answers.daysPerWeek, dailyGoal: plan.dailyGoal, startingSeries: plan.startingSeries,
                    recoverySeconds: plan.recoverySeconds, changedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
        }
        return now
    }

    // MARK: Deletion

    /// Deletes the account and everything identity keeps about it, in one transaction: the user leaves every group
    /// (ownership passes on, a group left empty is deleted), friendships end, pending requests are withdrawn or
    /// declined, sessions and credentials go. Emits the membership and friendship events, then `UserDeleted` last.
    func delete(_ userID: UUID, trace: TraceContext) async throws {
        let now = clock.now()
        try await client.transaction(logger: logger) { connection in
            guard let account = try await AccountRows.account(userID, on: connection, lock: true, logger: logger) else {
                throw IdentityError.accountGone
            }
            let groupIDs = try await connection.run(
                "SELECT group_id FROM group_members WHERE user_id = \(userID) ORDER BY group_id", logger: logger
            ).collect().map { try $0.decode(UUID.self) }
            for groupID in groupIDs {
                try await GroupStore.depart(
                    userID, from: groupID, change: .left, outbox: outbox, on: connection, now: now, trace: trace, logger: logger)
            }
            try await FriendStore.endEverything(of: userID, outbox: outbox, on: connection, now: now, trace: trace, logger: logger)
            if let email = account.email {
                try await connection.execute("DELETE FROM sign_in_failures WHERE email = \(email)", logger: logger)
                try await connection.execute("DELETE FROM mail_requests WHERE email = \(email)", logger: logger)
            }
            try await connection.execute("DELETE FROM users WHERE id = \(userID)", logger: logger)
            try await outbox.append(UserDeleted(userID: userID, deletedAt: now), on: connection, at: now, trace: trace, logger: logger)
        }
    }

    // MARK: Helpers

    private func insert(_ account: Account, on connection: PostgresConnection) async throws {
        try await connection.execute(
            """
            INSERT INTO users (id, display_name, avatar_url, email, time_zone, locale, kind, created_at, updated_at, email_verified_at)
            VALUES (\(account.id), \(account.displayName), \(account.avatarURL), \(account.email), \(account.timeZone), \(account.locale),
                    \(account.kind.rawValue), \(account.createdAt), \(account.createdAt), \(verifiedAt(account)))
            """, logger: logger)
    }

    /// A social provider vouched for a new social account's address; anyone else's address waits for its link.
    private func verifiedAt(_ account: Account) -> Date? {
        account.kind == .social && account.email != nil ? account.createdAt : nil
    }

    /// Sets a new password (the current one was checked) and signs every device out.
    func changePassword(_ userID: UUID, passwordHash: String, trace: TraceContext? = nil) async throws {
        let now = clock.now()
        try await client.transaction(logger: logger) { connection in
            try await connection.execute(
                "UPDATE password_credentials SET password_hash = \(passwordHash), updated_at = \(now) WHERE user_id = \(userID)", logger: logger)
            try await SessionStore.revokeEverySession(
                of: userID, reason: .passwordChanged, at: now, outbox: outbox, trace: trace, on: connection, logger: logger)
        }
    }

    /// The caller's password hash, if the account has a password.
    func passwordHash(_ userID: UUID) async throws -> String? {
        try await client.query("SELECT password_hash FROM password_credentials WHERE user_id = \(userID)", logger: logger)
            .collect().first?.decode(String.self)
    }

    private func registered(_ account: Account) -> UserRegistered {
        UserRegistered(
            userID: account.id, displayName: account.displayName, timeZone: account.timeZone, locale: account.locale, kind: account.kind,
            registeredAt: account.createdAt)
    }
}
