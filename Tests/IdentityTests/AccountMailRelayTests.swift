import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// The relay against PostgreSQL with a hand-over the test controls: a token is stored only when its mail was handed
/// over, a failed hand-over is retried later with a fresh token, and a reset for an unknown address sends nothing.
@Suite("Identity: the account-mail relay (PostgreSQL)", .tags(.integration), .kind(.integration), .serialized)
struct AccountMailRelayTests {
    struct Unreachable: Error {}

    @Test("a failed hand-over stores no token and is retried with backoff; a successful one stores the hash only; unknown addresses get nothing")
    func handOver() async throws {
        try await withIdentityFixture { store in
            let handed = LockedValue<[AccountMail]>([])
            let failing = LockedValue(true)
            let relay = store.mailRelay { mail in
                if failing.value { throw Unreachable() }
                handed.withLock { $0.append(mail) }
            }
            let recovery = store.recovery
            let registration = try PasswordRegistration(
                email: "ann@example.com", password: "a fine passphrase", displayName: "Ann", timeZone: "Europe/Rome", locale: "it")
            _ = try await store.accounts.registerWithPassword(registration, passwordHash: "hash", trace: store.trace)

            // The provider of mails is down: nothing is stored, the request waits a second, then two.
            #expect(try await relay.sendDue() == 0)
            #expect(try await store.count("SELECT count(*) FROM account_tokens") == 0)
            #expect(try await store.count("SELECT count(*) FROM mail_requests WHERE attempts = 1 AND handled_at IS NULL") == 1)
            #expect(try await relay.sendDue() == 0, "not due again before its backoff")
            store.advance(1)
            #expect(try await relay.sendDue() == 0)
            #expect(try await store.count("SELECT count(*) FROM mail_requests WHERE attempts = 2 AND handled_at IS NULL") == 1)

            // Back up: the verification mail goes, and only the token's selector and hash are kept.
            failing.withLock { $0 = false }
            store.advance(2)
            #expect(try await relay.sendDue() == 1)
            let mail = try #require(handed.value.first)
            #expect(mail.kind == .emailVerification && mail.to == "ann@example.com" && mail.locale == "it" && mail.validForMinutes == 48 * 60)
            let link = try #require(mail.link)
            let token = try #require(AccountToken(text: String(link.dropFirst("https://app.example/verify#token=".count))))
            #expect(try await store.count("SELECT count(*) FROM account_tokens") == 1)
            #expect(try await store.count("SELECT count(*) FROM account_tokens WHERE selector = \(Data(token.selector))") == 1)
            #expect(try await store.count("SELECT count(*) FROM account_tokens WHERE verifier_hash = \(Data(token.verifier))") == 0)
            #expect(try await store.count("SELECT count(*) FROM mail_requests WHERE outcome = 'email-verification'") == 1)

            // A reset for an address nobody has is handled without a mail; a reset for Ann's unverified address is a
            // verification link; once verified, a reset link.
            #expect(try await recovery.requestPasswordReset(email: "nobody@example.com", source: .unknown) == .send)
            #expect(try await recovery.requestPasswordReset(email: "ann@example.com", source: .unknown) == .send)
            #expect(try await relay.sendDue() == 2)
            #expect(handed.value.count == 2 && handed.value[1].kind == .emailVerification)
            #expect(try await store.count("SELECT count(*) FROM mail_requests WHERE email = 'nobody@example.com' AND outcome = 'nothing-to-send'") == 1)
            #expect(try await recovery.verifyEmail(token) == .done)
            #expect(try await recovery.verifyEmail(token) == .refused(.used))
            #expect(try await recovery.requestPasswordReset(email: "ann@example.com", source: .unknown) == .send)
            #expect(try await relay.sendDue() == 1)
            let reset = try #require(handed.value.last)
            #expect(reset.kind == .passwordReset && reset.validForMinutes == 30 && reset.link?.hasPrefix("https://app.example/reset#token=") == true)
            // A third request for the address within the hour is recorded; a fourth records nothing.
            #expect(try await recovery.requestPasswordReset(email: "ann@example.com", source: .unknown) == .send)
            #expect(try await recovery.requestPasswordReset(email: "ann@example.com", source: .unknown) == .answerQuietly)

            // Reset tokens die at their expiry.
            let resetLink = try #require(reset.link)
            let resetToken = try #require(AccountToken(text: String(resetLink.dropFirst("https://app.example/reset#token=".count))))
            store.advance(30 * 60)
            #expect(try await recovery.isLiveResetToken(resetToken) == nil)
            #expect(try await recovery.resetPassword(resetToken, passwordHash: "new") == .refused(.expired))
        }
    }
}

extension IdentityFixture {
    /// The account-mail relay over this store, its links starting `https://app.example/reset#token=` and
    /// `https://app.example/verify#token=`, handing each mail to `handOver`.
    func mailRelay(handOver: @escaping @Sendable (AccountMail) async throws -> Void) -> AccountMailRelay {
        AccountMailRelay(
            storage: storage, clock: clock, lifetimes: AccountTokenLifetimes(),
            links: MailLinks(passwordReset: "https://app.example/reset#token=", emailVerification: "https://app.example/verify#token="),
            handOver: handOver)
    }
}
