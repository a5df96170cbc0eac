import Foundation
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

@Suite("Identity: mailed tokens and mail throttling", .tags(.unit), .kind(.unit))
struct AccountTokenTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let user = UUID()

    func stored(_ token: AccountToken, purpose: AccountTokenPurpose = .passwordReset, expiresIn: TimeInterval = 30 * 60, usedAt: Date? = nil)
        -> StoredAccountToken
    {
        StoredAccountToken(
            userID: user, purpose: purpose, email: "ann@example.com", verifierHash: AccountTokenSecret.hash(token.verifier),
            expiresAt: now.addingTimeInterval(expiresIn), usedAt: usedAt)
    }

    @Test("a token is 64 base64url characters carrying 128 bits of selector and 256 of verifier, random each time")
    func shape() {
        let tokens = (0..<200).map { _ in AccountToken.generate() }
        #expect(Set(tokens.map(\.text)).count == 200)
        for token in tokens {
            #expect(token.text.count == 64)
            #expect(token.selector.count * 8 == 128 && token.verifier.count * 8 == 256)
            #expect(AccountToken(text: token.text) == token)
        }
        let text = tokens[0].text
        for malformed in ["", String(text.dropLast()), text + "A", String(text.dropLast()) + "=", String(text.dropLast()) + "+", "Ä" + text.dropFirst()] {
            #expect(AccountToken(text: malformed) == nil, "\(malformed)")
        }
    }

    @Test("a reset token works until its lifetime ends, then is expired")
    func lifetime() {
        let token = AccountToken.generate()
        let hash = AccountTokenSecret.hash(token.verifier)
        let lifetimes = AccountTokenLifetimes()
        #expect(lifetimes.lifetime(of: .passwordReset) == 30 * 60)
        let row = stored(token, expiresIn: lifetimes.passwordReset)
        #expect(AccountTokenDecision.decide(row, presentedHash: hash, purpose: .passwordReset, now: now) == .accept)
        #expect(AccountTokenDecision.decide(row, presentedHash: hash, purpose: .passwordReset, now: now.addingTimeInterval(29 * 60 + 59)) == .accept)
        #expect(AccountTokenDecision.decide(row, presentedHash: hash, purpose: .passwordReset, now: now.addingTimeInterval(30 * 60)) == .refuse(.expired))
        let configured = AccountTokenLifetimes(passwordReset: 10 * 60)
        let short = stored(token, expiresIn: configured.passwordReset)
        #expect(AccountTokenDecision.decide(short, presentedHash: hash, purpose: .passwordReset, now: now.addingTimeInterval(10 * 60)) == .refuse(.expired))
    }

    @Test("a used token, another purpose's token, a wrong verifier and an unknown selector are refused")
    func singleUse() {
        let token = AccountToken.generate()
        let hash = AccountTokenSecret.hash(token.verifier)
        #expect(AccountTokenDecision.decide(stored(token, usedAt: now), presentedHash: hash, purpose: .passwordReset, now: now) == .refuse(.used))
        #expect(
            AccountTokenDecision.decide(stored(token, purpose: .emailVerification), presentedHash: hash, purpose: .passwordReset, now: now)
                == .refuse(.wrongPurpose))
        let other = AccountTokenSecret.hash(AccountToken.generate().verifier)
        #expect(AccountTokenDecision.decide(stored(token), presentedHash: other, purpose: .passwordReset, now: now) == .refuse(.wrongVerifier))
        #expect(AccountTokenDecision.decide(nil, presentedHash: hash, purpose: .passwordReset, now: now) == .refuse(.unknown))
    }

    @Test("constant-time comparison: equal only when every byte is, whichever byte differs")
    func constantTime() {
        let bytes = (0..<32).map { UInt8($0 * 7 % 256) }
        #expect(ConstantTime.equal(bytes, bytes))
        #expect(ConstantTime.equal([], []))
        for index in [0, 15, 31] {
            var changed = bytes
            changed[index] ^= 0x01
            #expect(!ConstantTime.equal(bytes, changed), "byte \(index)")
        }
        #expect(!ConstantTime.equal(bytes, Array(bytes.dropLast())))
        #expect(!ConstantTime.equal(bytes, bytes + [0]))
    }

    @Test("mail requests: three per address an hour, then answered quietly; twenty per source an hour, then 429 until the oldest leaves")
    func throttling() {
        let throttle = MailRequestThrottle()
        var address: [Date] = []
        var source: [Date] = []
        for minute in 0..<3 {
            let at = now.addingTimeInterval(Double(minute) * 60)
            #expect(throttle.decide(address: address, source: source, now: at) == .send)
            address.append(at)
            source.append(at)
        }
        #expect(throttle.decide(address: address, source: source, now: now.addingTimeInterval(300)) == .answerQuietly)
        // An hour after the first, that one no longer counts.
        #expect(throttle.decide(address: address, source: source, now: now.addingTimeInterval(3600)) == .send)

        let many = (0..<20).map { now.addingTimeInterval(Double($0) * 10) }
        #expect(throttle.decide(address: [], source: many, now: now.addingTimeInterval(200)) == .refuse(retryAfter: 3400))
        #expect(throttle.decide(address: [], source: many, now: now.addingTimeInterval(3600)) == .send)
        // The per-source refusal wins: it is the one the caller may be told.
        #expect(throttle.decide(address: address, source: many, now: now.addingTimeInterval(300)) == .refuse(retryAfter: 3300))
    }

    @Test("an address is told of a change masked")
    func masking() throws {
        #expect(try #require(EmailAddress("annabel@example.com")).masked == "an***@example.com")
        #expect(try #require(EmailAddress("al@example.com")).masked == "a***@example.com")
        #expect(try #require(EmailAddress("a@example.com")).masked == "a***@example.com")
    }
}
