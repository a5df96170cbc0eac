import Foundation
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// `SignInThrottle` driven the way `Sessions` drives it, in memory, against a simulated clock: every admitted
/// attempt is recorded as a failure in advance, and a correct password forgets its (e-mail, source) pair's failures.
private struct SimulatedSignIns {
    struct Failure {
        var email: String
        var source: SignInSource
        var at: Date
    }

    var throttle = SignInThrottle()
    var now = Date(timeIntervalSince1970: 1_800_000_000)
    var failures: [Failure] = []

    mutating func advance(_ seconds: TimeInterval) { now = now.addingTimeInterval(seconds) }

    func decision(_ email: String, from source: SignInSource) -> SignInThrottle.Decision {
        throttle.decide(
            pair: failures.filter { $0.email == email && $0.source == source }.map(\.at),
            source: source.isKnown ? failures.filter { $0.source == source }.map(\.at) : [],
            account: failures.filter { $0.email == email }.map(\.at), now: now)
    }

    /// One attempt: nil if admitted (then it succeeded or failed as `correct` says), else the refusal.
    @discardableResult
    mutating func attempt(_ email: String, from source: SignInSource, correct: Bool = false) -> SignInThrottle.Decision {
        let decision = decision(email, from: source)
        guard decision == .admit else { return decision }
        failures.append(Failure(email: email, source: source, at: now))
        if correct { failures.removeAll { $0.email == email && $0.source == source } }
        return .admit
    }
}

private let attacker = SignInSource(address: "198.51.100.66")
private let owner = SignInSource(address: "203.0.113.7")

@Suite("Identity: sign-in throttling", .tags(.unit), .kind(.unit))
struct SignInThrottleTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("backoff: five free failures, then 1 minute doubling per failure up to 15; nine failures already reach the cap")
    func backoffSchedule() {
        let throttle = SignInThrottle()
        #expect((0...4).map { throttle.backoff(afterFailures: $0) } == [nil, nil, nil, nil, nil])
        #expect((5...11).map { throttle.backoff(afterFailures: $0) } == [60, 120, 240, 480, 900, 900, 900])
        #expect(throttle.backoff(afterFailures: 1_000) == 900)
        #expect(throttle.backoff(afterFailures: Int.max) == 900)
        #expect(throttle.pairFailuresConsidered == 9)
        #expect(throttle.retention == 24 * 3600)
        let custom = SignInThrottle(freeFailures: 3, firstBackoff: 10, maxBackoff: 75)
        #expect((2...7).map { custom.backoff(afterFailures: $0) } == [nil, 10, 20, 40, 75, 75])
        #expect(custom.pairFailuresConsidered == 6)
    }

    @Test("a pair's wait runs from its last failure; failures older than a day are forgotten; order does not matter")
    func pairWait() {
        let throttle = SignInThrottle()
        let secondsAgo = { (seconds: Double) in self.now.addingTimeInterval(-seconds) }
        #expect(throttle.pairRetryAfter(failures: [], now: now) == nil)
        #expect(throttle.pairRetryAfter(failures: [1, 2, 3, 4].map(secondsAgo), now: now) == nil)
        #expect(throttle.pairRetryAfter(failures: [10, 20, 30, 40, 50].map(secondsAgo), now: now) == 50)
        #expect(throttle.pairRetryAfter(failures: [50, 10, 40, 20, 30].map(secondsAgo), now: now) == 50)
        #expect(throttle.pairRetryAfter(failures: [60, 70, 80, 90, 100].map(secondsAgo), now: now) == nil)
        #expect(throttle.pairRetryAfter(failures: [59.5, 70, 80, 90, 100].map(secondsAgo), now: now) == 1)
        #expect(throttle.pairRetryAfter(failures: [0, 0, 0, 0, 0].map(secondsAgo), now: now) == 60)
        #expect(throttle.pairRetryAfter(failures: [0, 0, 0, 0, 0, 0].map(secondsAgo), now: now) == 120)
        #expect(throttle.pairRetryAfter(failures: Array(repeating: secondsAgo(100), count: 40), now: now) == 800)
        // Five failures a day and a second ago are forgotten; one of them inside the day is not enough.
        #expect(throttle.pairRetryAfter(failures: Array(repeating: secondsAgo(86_401), count: 5), now: now) == nil)
        #expect(throttle.pairRetryAfter(failures: Array(repeating: secondsAgo(86_401), count: 4) + [secondsAgo(10)], now: now) == nil)
        #expect(throttle.pairRetryAfter(failures: Array(repeating: secondsAgo(86_399), count: 4) + [secondsAgo(10)], now: now) == 50)
        // Only the most recent `pairFailuresConsidered` matter: the storage may stop reading there.
        let many = (0..<50).map { secondsAgo(Double($0) * 10) }
        #expect(throttle.pairRetryAfter(failures: many, now: now) == throttle.pairRetryAfter(failures: Array(many.prefix(9)), now: now))
    }

    @Test("a sliding-window limit refuses until its n-th most recent failure leaves the window")
    func slidingWindow() {
        let limit = FailureLimit(maxFailures: 5, window: 15 * 60)
        let minutesAgo = { (minutes: Double) in self.now.addingTimeInterval(-minutes * 60) }
        #expect(limit.retryAfter(failures: [], now: now) == nil)
        #expect(limit.retryAfter(failures: (1...4).map { minutesAgo(Double($0)) }, now: now) == nil)
        #expect(limit.retryAfter(failures: (1...5).map { minutesAgo(Double($0)) }, now: now) == 10 * 60)
        #expect(limit.retryAfter(failures: [1, 2, 3, 4, 16].map(minutesAgo), now: now) == nil)
        #expect(limit.retryAfter(failures: [0, 0, 0, 0, 0].map(minutesAgo), now: now) == 15 * 60)
        #expect(limit.retryAfter(failures: [1, 2, 3, 4, 5, 14].map(minutesAgo), now: now) == 10 * 60)
        #expect(limit.retryAfter(failures: [14.99, 14.99, 14.99, 14.99, 14.99].map(minutesAgo), now: now) == 1)
    }

    @Test("an attacker's source is refused with a growing wait while the owner's source, with no failures, signs in")
    func attackerAndOwner() {
        var clock = SimulatedSignIns()
        for _ in 0..<5 { #expect(clock.attempt("victim@example.com", from: attacker) == .admit) }
        #expect(clock.attempt("victim@example.com", from: attacker, correct: true) == .refuse(retryAfter: 60, limit: .pair))
        // The owner, from an address that has not failed: through, at once.
        #expect(clock.attempt("victim@example.com", from: owner, correct: true) == .admit)
        // Her success does not forgive the attacker.
        clock.advance(30)
        #expect(clock.attempt("victim@example.com", from: attacker) == .refuse(retryAfter: 30, limit: .pair))
        // Each failure after the wait doubles it: 2, 4, 8 minutes, then 15 for good.
        var waits: [Int] = []
        for _ in 0..<7 {
            guard case .refuse(let wait, .pair) = clock.decision("victim@example.com", from: attacker) else {
                Issue.record("attacker admitted early")
                return
            }
            clock.advance(Double(wait) - 1)
            #expect(clock.attempt("victim@example.com", from: attacker) == .refuse(retryAfter: 1, limit: .pair))
            clock.advance(1)
            #expect(clock.attempt("victim@example.com", from: attacker) == .admit)
            guard case .refuse(let next, .pair) = clock.decision("victim@example.com", from: attacker) else {
                Issue.record("no wait after a failure")
                return
            }
            waits.append(next)
        }
        #expect(waits == [120, 240, 480, 900, 900, 900, 900])
        // All the while, the owner signs in from her address, and from a third one she never used.
        #expect(clock.attempt("victim@example.com", from: owner, correct: true) == .admit)
        #expect(clock.attempt("victim@example.com", from: SignInSource(address: "192.0.2.1"), correct: true) == .admit)
        // The attacker's other targets are untouched by this pair's wait.
        #expect(clock.attempt("someone.else@example.com", from: attacker) == .admit)
    }

    @Test("the owner's own mistakes cost her a short wait; a correct password afterwards clears her address")
    func ownMistakes() {
        var clock = SimulatedSignIns()
        for _ in 0..<5 { clock.attempt("me@example.com", from: owner) }
        #expect(clock.attempt("me@example.com", from: owner, correct: true) == .refuse(retryAfter: 60, limit: .pair))
        clock.advance(60)
        #expect(clock.attempt("me@example.com", from: owner, correct: true) == .admit)
        #expect(clock.failures.isEmpty)
        for _ in 0..<5 { #expect(clock.attempt("me@example.com", from: owner) == .admit) }
        // A day after her last failure they are forgotten altogether: five more free tries.
        clock.advance(86_400)
        for _ in 0..<5 { #expect(clock.attempt("me@example.com", from: owner) == .admit) }
        #expect(clock.decision("me@example.com", from: owner) == .refuse(retryAfter: 60, limit: .pair))
    }

    @Test("a source spraying many e-mails is refused for every e-mail at its 21st failure in 15 minutes; others are not")
    func spray() {
        var clock = SimulatedSignIns()
        for index in 0..<20 {
            #expect(clock.attempt("user\(index)@example.com", from: attacker) == .admit)
            clock.advance(30)
        }
        // 20 failures, the first 600 s ago: the window frees one in 300 s.
        #expect(clock.attempt("fresh@example.com", from: attacker, correct: true) == .refuse(retryAfter: 300, limit: .source))
        #expect(clock.attempt("user0@example.com", from: owner, correct: true) == .admit)
        clock.advance(300)
        #expect(clock.attempt("fresh@example.com", from: attacker) == .admit)
        #expect(clock.decision("other@example.com", from: attacker) == .refuse(retryAfter: 30, limit: .source))
    }

    @Test("the unknown source has no spray limit, which would be everyone's; its pairs are throttled like any other")
    func unknownSource() {
        var clock = SimulatedSignIns()
        for index in 0..<60 { #expect(clock.attempt("user\(index)@example.com", from: .unknown) == .admit) }
        for _ in 0..<4 { clock.attempt("user0@example.com", from: .unknown) }
        #expect(clock.decision("user0@example.com", from: .unknown) == .refuse(retryAfter: 60, limit: .pair))
        #expect(clock.decision("user0@example.com", from: owner) == .admit)
    }

    @Test("an account failing from 100 sources within an hour is refused for every source until the oldest leave the hour")
    func distributedGuessing() {
        var clock = SimulatedSignIns()
        for index in 0..<100 {
            #expect(clock.attempt("victim@example.com", from: SignInSource(address: "10.0.0.\(index)")) == .admit)
            clock.advance(30)
        }
        // 100 failures, the oldest 3000 s ago: it leaves the hour in 600 s.
        #expect(clock.decision("victim@example.com", from: owner) == .refuse(retryAfter: 600, limit: .account))
        #expect(clock.decision("someone.else@example.com", from: owner) == .admit)
        clock.advance(600)
        #expect(clock.attempt("victim@example.com", from: owner, correct: true) == .admit)
    }

    @Test("when several limits refuse, the longest wait is the answer")
    func longestWait() {
        let throttle = SignInThrottle()
        let pair = Array(repeating: now.addingTimeInterval(-10), count: 9)
        let source = Array(repeating: now.addingTimeInterval(-800), count: 20)
        let account = Array(repeating: now.addingTimeInterval(-3590), count: 100)
        #expect(throttle.decide(pair: pair, source: source, account: account, now: now) == .refuse(retryAfter: 890, limit: .pair))
        #expect(throttle.decide(pair: [], source: source, account: account, now: now) == .refuse(retryAfter: 100, limit: .source))
        #expect(throttle.decide(pair: [], source: [], account: account, now: now) == .refuse(retryAfter: 10, limit: .account))
        #expect(throttle.decide(pair: Array(pair.prefix(4)), source: Array(source.prefix(19)), account: Array(account.prefix(99)), now: now) == .admit)
    }

    @Test("sources: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64; anything else is the unknown source")
    func sources() {
        #expect(SignInSource(address: "203.0.113.7").key == "203.0.113.7")
        #expect(SignInSource(address: " 203.0.113.7 ").key == "203.0.113.7")
        #expect(SignInSource(address: "::ffff:203.0.113.7").key == "203.0.113.7")
        #expect(SignInSource(address: "2001:db8:0:1:abcd::5").key == "2001:db8:0:1::/64")
        #expect(SignInSource(address: "2001:DB8:0:1::9") == SignInSource(address: "2001:db8:0:1:abcd::5"))
        #expect(SignInSource(address: "2001:db8:0:2::9") != SignInSource(address: "2001:db8:0:1::9"))
        #expect(SignInSource(address: "2001:db8::1").key == "2001:db8:0:0::/64")
        #expect(SignInSource(address: "fe80::1%eth0").key == "fe80:0:0:0::/64")
        #expect(SignInSource(address: "::1").key == "0:0:0:0::/64")
        for garbage in [nil, "", "  ", "unknown", "1.2.3", "999.1.1.1", "203.0.113.7, 10.0.0.1", "[2001:db8::1]", String(repeating: "1", count: 100)] {
            #expect(SignInSource(address: garbage) == .unknown, "\(garbage ?? "nil")")
        }
        #expect(!SignInSource.unknown.isKnown)
        #expect(SignInSource(address: "203.0.113.7").isKnown)
    }
}
