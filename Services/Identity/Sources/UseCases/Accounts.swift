import Foundation
import IdentityDomain
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// Accounts: registration, sign-in lookups, credentials, profile, preferences, training plan and deletion. Every
/// change writes the events it causes in the same transaction.
struct Accounts: Sendable {
    let storage: IdentityStorage
    let clock: ServiceClock

    // MARK: Sign-up and sign-in

    func registerGuest(_ registration: GuestRegistration, trace: TraceContext) async throws -> Account {
        let account = Account(
            id: UUID(), displayName: registration.displayName, timeZone: registration.timeZone, locale: registration.locale,
            kind: .guest, createdAt: clock.now())
        try await storage.transaction { stores in
            try await stores.accounts.insert(account)
            try await stores.events.append(registered(account), at: account.createdAt, trace: trace)
        }
        return account
    }

    func registerWithPassword(_ registration: PasswordRegistration, passwordHash: String, trace: TraceContext) async throws -> Account {
        let account = Account(
            id: UUID(), displayName: registration.displayName, email: registration.email.value, timeZone: registration.timeZone,
            locale: registration.locale, kind: .password, createdAt: clock.now())
        do {
            try await storage.transaction { stores in
                try await stores.accounts.insert(account)
                try await stores.accounts.insertPassword(passwordHash, of: account.id, at: account.createdAt)
                try await stores.mail.enqueue(.emailVerification, to: registration.email.value, userID: account.id, at: account.createdAt)
                try await stores.events.append(registered(account), at: account.createdAt, trace: trace)
            }
        } catch where error.isUniqueViolation {
            throw IdentityError.emailTaken
        }
        return account
    }

    /// The account with this e-mail and its password hash, if it has a password.
    func passwordAccount(email: EmailAddress) async throws -> (account: Account, passwordHash: String)? {
        try await storage.read { stores in try await stores.accounts.passwordAccount(email: email) }
    }

    /// A guest attaches an e-mail and password and becomes a password account; nothing else changes.
    func attachCredentials(_ userID: UUID, _ credentials: CredentialsAttachment, passwordHash: String, trace: TraceContext) async throws -> Account {
        let now = clock.now()
        do {
            return try await storage.transaction { stores in
                guard var account = try await stores.accounts.account(userID, locking: true) else { throw IdentityError.accountGone }
                guard account.kind == .guest else { throw IdentityError.credentialsExist }
                account.email = credentials.email.value
                account.kind = .password
                try await stores.accounts.setEmailAndKind(of: account, at: now)
                try await stores.accounts.insertPassword(passwordHash, of: userID, at: now)
                try await stores.mail.enqueue(.emailVerification, to: credentials.email.value, userID: userID, at: now)
                try await stores.events.append(UserUpgraded(userID: userID, kind: .password, upgradedAt: now), at: now, trace: trace)
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
            return try await storage.transaction { stores in
                if let known = try await stores.accounts.account(linkedTo: identity) { return (known, false) }
                if let email = identity.verifiedEmail, let matching = try await stores.accounts.lockedAccount(email: email) {
                    guard !matching.hasPassword else { throw IdentityError.accountExists }
                    try await stores.accounts.link(identity, to: matching.account.id, at: now)
                    return (matching.account, false)
                }
                let account = Account(
                    id: UUID(), displayName: identity.displayName(requested: requestedName), email: identity.verifiedEmail?.value,
                    timeZone: timeZone ?? "UTC", locale: nil, kind: .social, createdAt: now)
                try await stores.accounts.insert(account)
                try await stores.accounts.link(identity, to: account.id, at: now)
                try await stores.events.append(registered(account), at: now, trace: trace)
                return (account, true)
            }
        } catch where error.isUniqueViolation && !isRetry {
            // Someone signed in with the same identity or e-mail at the same moment: a second attempt finds it now.
            return try await socialSignIn(identity, requestedName: requestedName, timeZone: timeZone, trace: trace, isRetry: true)
        }
    }

    /// The roles an access token issued now for this account carries.
    func roles(of userID: UUID) async throws -> [String] {
        try await storage.read { stores in try await stores.accounts.roles(of: userID) }
    }

    // MARK: Reading

    func account(_ id: UUID) async throws -> Account? {
        try await storage.read { stores in try await stores.accounts.account(id) }
    }

    func exists(_ id: UUID) async throws -> Bool {
        try await storage.read { stores in try await stores.accounts.exists(id) }
    }

    /// Public profiles whose display name contains `query`, by name; never the caller.
    func search(_ query: String, excluding caller: UUID, page: PageRequest<NamePosition>) async throws -> Page<PublicProfile> {
        try await storage.read { stores in try await stores.accounts.search(query, excluding: caller, page: page) }
    }

    // MARK: Profile, preferences, training plan

    func updateProfile(_ userID: UUID, _ update: ProfileUpdate, trace: TraceContext) async throws -> Account {
        let now = clock.now()
        return try await storage.transaction { stores in
            guard let before = try await stores.accounts.account(userID, locking: true) else { throw IdentityError.accountGone }
            let after = update.applied(to: before)
            guard after != before else { return before }
            try await stores.accounts.updateProfile(after, at: now)
            try await stores.events.append(
                ProfileChanged(
                    userID: userID, displayName: after.displayName, avatarURL: after.avatarURL, timeZone: after.timeZone,
                    previousTimeZone: before.timeZone, locale: after.locale, changedAt: now),
                at: now, trace: trace)
            return after
        }
    }

    func preferences(_ userID: UUID) async throws -> (Preferences, updatedAt: Date?) {
        try await storage.read { stores in try await stores.accounts.preferences(userID) }
    }

    /// Saves the whole preferences; emits `PreferencesChanged` when anything changed.
    func savePreferences(_ userID: UUID, _ preferences: Preferences, trace: TraceContext) async throws -> (Preferences, updatedAt: Date?) {
        let now = clock.now()
        return try await storage.transaction { stores in
            guard try await stores.accounts.account(userID, locking: true) != nil else { throw IdentityError.accountGone }
            let (current, updatedAt) = try await stores.accounts.preferences(userID)
            if current == preferences && updatedAt != nil { return (current, updatedAt) }
            try await stores.accounts.savePreferences(preferences, of: userID, at: now)
            if current != preferences {
                try await stores.events.append(
                    PreferencesChanged(
                        userID: userID, notificationsEnabled: preferences.notificationsEnabled, dailyReminderTime: preferences.dailyReminderTime,
                        quietHours: preferences.quietHours, disabledCategories: preferences.disabledCategories,
                        telemetryOptOut: preferences.telemetryOptOut, changedAt: now),
                    at: now, trace: trace)
            }
            return (preferences, now)
        }
    }

    func trainingPlan(_ userID: UUID) async throws -> (TrainingPlan, updatedAt: Date)? {
        try await storage.read { stores in try await stores.accounts.trainingPlan(userID) }
    }

    /// Saves the plan and emits `TrainingPlanChanged`.
    func saveTrainingPlan(_ userID: UUID, _ plan: TrainingPlan, trace: TraceContext) async throws -> Date {
        let now = clock.now()
        try await storage.transaction { stores in
            guard try await stores.accounts.account(userID, locking: true) != nil else { throw IdentityError.accountGone }
            try await stores.accounts.saveTrainingPlan(plan, of: userID, at: now)
            try await stores.events.append(
                TrainingPlanChanged(
                    userID: userID, activityLevel: plan.answers.activityLevel, maxPushUpsInOneSet: plan.answers.maxPushUpsInOneSet,
                    daysPerWeek: plan.answers.daysPerWeek, dailyGoal: plan.dailyGoal, startingSeries: plan.startingSeries,
                    recoverySeconds: plan.recoverySeconds, changedAt: now),
                at: now, trace: trace)
        }
        return now
    }

    // MARK: Password

    /// Sets a new password (the current one was checked) and signs every device out.
    func changePassword(_ userID: UUID, passwordHash: String, trace: TraceContext? = nil) async throws {
        let now = clock.now()
        try await storage.transaction { stores in
            try await stores.accounts.setPassword(passwordHash, of: userID, at: now)
            try await Sessions.revokeEverySession(of: userID, reason: .passwordChanged, at: now, trace: trace, in: stores)
        }
    }

    /// The caller's password hash, if the account has a password.
    func passwordHash(_ userID: UUID) async throws -> String? {
        try await storage.read { stores in try await stores.accounts.passwordHash(userID) }
    }

    // MARK: Deletion

    /// Deletes the account and everything identity keeps about it, in one transaction: the user leaves every group
    /// (ownership passes on, a group left empty is deleted), friendships end, pending requests are withdrawn or
    /// declined, sessions and credentials go. Emits the membership and friendship events, then `UserDeleted` last.
    func delete(_ userID: UUID, trace: TraceContext) async throws {
        let now = clock.now()
        try await storage.transaction { stores in
            guard let account = try await stores.accounts.account(userID, locking: true) else { throw IdentityError.accountGone }
            for groupID in try await stores.groups.groupIDs(of: userID) {
                try await Groups.depart(userID, from: groupID, change: .left, at: now, trace: trace, in: stores)
            }
            try await Friendships.endEverything(of: userID, at: now, trace: trace, in: stores)
            if let email = account.email {
                try await stores.signInAttempts.forget(email: email)
                try await stores.mail.forgetRequests(to: email)
            }
            try await stores.accounts.delete(userID)
            try await stores.events.append(UserDeleted(userID: userID, deletedAt: now), at: now, trace: trace)
        }
    }

    private func registered(_ account: Account) -> UserRegistered {
        UserRegistered(
            userID: account.id, displayName: account.displayName, timeZone: account.timeZone, locale: account.locale, kind: account.kind,
            registeredAt: account.createdAt)
    }
}
