import Foundation
import IdentityDomain
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// Password resets, address verification and address changes: requests queue mails for the relay
/// (`AccountMailRelay`), and the tokens those mails carry come back in links.
struct Recovery: Sendable {
    let storage: IdentityStorage
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
        return try await storage.transaction { stores in
            try await stores.mail.lockResetRequests(email: email, source: source)
            let byAddress = try await stores.mail.resetRequests(
                email: email, since: now.addingTimeInterval(-throttle.perAddress.window), limit: throttle.perAddress.maxFailures)
            let bySource =
                source.isKnown
                ? try await stores.mail.resetRequests(
                    source: source, since: now.addingTimeInterval(-throttle.perSource.window), limit: throttle.perSource.maxFailures) : []
            let decision = throttle.decide(address: byAddress, source: bySource, now: now)
            if decision == .send {
                try await stores.mail.enqueue(.passwordReset, to: email, userID: nil, source: source.key, at: now)
            }
            return decision
        }
    }

    /// The address, whether it is verified, and the address a change waits to verify.
    func emailStatus(_ userID: UUID) async throws -> (email: String?, verified: Bool, pending: String?)? {
        try await storage.read { stores in try await stores.accounts.emailStatus(userID) }
    }

    /// Asks for an address change: the new address waits, unused, until its owner follows the link mailed to it.
    /// A later request replaces an earlier one.
    func requestEmailChange(_ userID: UUID, to email: EmailAddress) async throws {
        let now = clock.now()
        try await storage.transaction { stores in
            guard try await !stores.accounts.isEmailTaken(email, byOtherThan: userID) else { throw IdentityError.emailTaken }
            try await stores.accounts.setPendingEmail(email, of: userID, at: now)
            try await stores.mail.enqueue(.emailVerification, to: email.value, userID: userID, at: now)
        }
    }

    // MARK: Links

    /// Sets a new password with a reset token: the token is used up, every other reset token of the account dies, and
    /// every refresh-token family is revoked (every device signed out), all in one transaction.
    func resetPassword(_ token: AccountToken, passwordHash hash: String, trace: TraceContext? = nil) async throws -> TokenOutcome {
        let now = clock.now()
        return try await storage.transaction { stores in
            let stored = try await stores.mail.token(token)
            let decision = AccountTokenDecision.decide(
                stored, presentedHash: AccountTokenSecret.hash(token.verifier), purpose: .passwordReset, now: now)
            guard case .accept = decision, let stored else {
                if case .refuse(let refusal) = decision { return .refused(refusal) }
                return .refused(.unknown)
            }
            try await stores.accounts.setPassword(hash, of: stored.userID, at: now)
            try await stores.mail.useTokens(of: stored.userID, purpose: .passwordReset, at: now)
            try await Sessions.revokeEverySession(of: stored.userID, reason: .passwordReset, at: now, trace: trace, in: stores)
            return .done
        }
    }

    /// Whether the token is a live reset token, without using it (the new password is checked before it is spent).
    func isLiveResetToken(_ token: AccountToken) async throws -> (userID: UUID, email: String)? {
        let stored = try await storage.read { stores in try await stores.mail.token(token) }
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
            return try await storage.transaction { stores in
                let stored = try await stores.mail.token(token)
                let decision = AccountTokenDecision.decide(
                    stored, presentedHash: AccountTokenSecret.hash(token.verifier), purpose: .emailVerification, now: now)
                guard case .accept = decision, let stored else {
                    if case .refuse(let refusal) = decision { return .refused(refusal) }
                    return .refused(.unknown)
                }
                guard let addresses = try await stores.accounts.lockedAddresses(stored.userID) else { return .refused(.unknown) }
                try await stores.mail.useToken(token, at: now)
                if stored.email == addresses.current {
                    try await stores.accounts.markEmailVerified(stored.userID, at: now)
                } else if stored.email == addresses.pending {
                    try await stores.accounts.adoptVerifiedEmail(stored.email, of: stored.userID, at: now)
                    try await stores.mail.useTokens(of: stored.userID, at: now)
                    if let current = addresses.current, let new = EmailAddress(stored.email) {
                        try await stores.mail.enqueue(.emailChanged, to: current, userID: stored.userID, detail: new.masked, at: now)
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

    /// Drops tokens a day past their expiry and mail requests too old to matter to the throttle; idempotent.
    func prune() async throws {
        let now = clock.now()
        try await storage.read { stores in
            try await stores.mail.prune(tokensExpiredBefore: now.addingTimeInterval(-86_400), requestsBefore: now.addingTimeInterval(-throttle.retention))
        }
    }
}
