import Crypto
import Foundation
import NotificationsDomain
import SurgeTestSupport
import Testing

@testable import NotificationsService

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("Webhooks: signatures, the address rule, retries and disabling", .tags(.unit), .kind(.unit))
struct WebhookDomainTests {
    static func address(_ text: String) -> IPAddress {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return IPAddress(bytes: withUnsafeBytes(of: v4) { Array($0) })! }
        var v6 = in6_addr()
        precondition(inet_pton(AF_INET6, text, &v6) == 1, "not an address: \(text)")
        return IPAddress(bytes: withUnsafeBytes(of: v6) { Array($0) })!
    }

    /// A receiver's check, written from the specification rather than from the signer.
    static func verifies(_ header: String, id: String, timestamp: Int, body: String, secret: WebhookSecret) -> Bool {
        let expected = Data(HMAC<SHA256>.authenticationCode(for: Data("\(id).\(timestamp).\(body)".utf8), using: SymmetricKey(data: secret.key)))
        return header.split(separator: " ").contains { $0 == "v1,\(expected.base64EncodedString())" }
    }

    // MARK: Signatures

    @Test("the Standard Webhooks test vector (standard-webhooks/standard-webhooks, libraries/go/webhook_test.go)")
    func specificationVector() throws {
        let secret = try #require(WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let header = WebhookSigner.signatureHeader(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Array(#"{"test": 2432232314}"#.utf8), secrets: [secret])
        #expect(header == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test("during a rotation one signature per secret, space-separated, each verifiable alone; a changed body verifies with neither")
    func rotation() {
        let old = WebhookSigner.newSecret()
        let new = WebhookSigner.newSecret()
        #expect(old != new && old.key.count == 32)
        let body = #"{"type":"notification.created"}"#
        let header = WebhookSigner.signatureHeader(id: "msg_1", timestamp: 1_800_000_000, body: Array(body.utf8), secrets: [new, old])
        #expect(header.split(separator: " ").count == 2)
        #expect(Self.verifies(header, id: "msg_1", timestamp: 1_800_000_000, body: body, secret: new))
        #expect(Self.verifies(header, id: "msg_1", timestamp: 1_800_000_000, body: body, secret: old))
        #expect(!Self.verifies(header, id: "msg_1", timestamp: 1_800_000_000, body: body + " ", secret: new))
        #expect(!Self.verifies(header, id: "msg_1", timestamp: 1_800_000_001, body: body, secret: old))
    }

    @Test("secrets: whsec_ and base64 both ways; anything else refused")
    func secrets() {
        let secret = WebhookSigner.newSecret()
        #expect(secret.text.hasPrefix("whsec_"))
        #expect(WebhookSecret(secret.text) == secret)
        #expect(WebhookSecret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") == nil)
        #expect(WebhookSecret("whsec_") == nil)
        #expect(WebhookSecret("whsec_***") == nil)
    }

    // MARK: The address rule

    @Test("every non-public range is refused, IPv4 and IPv6, including IPv4 carried inside IPv6", arguments: [
        ("127.0.0.1", AddressClass.loopback), ("127.255.255.254", .loopback), ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified),
        ("10.0.0.1", .private), ("10.255.255.255", .private), ("172.16.0.1", .private), ("172.31.255.255", .private),
        ("192.168.1.1", .private), ("100.64.0.1", .private), ("100.127.255.255", .private),
        ("169.254.0.1", .linkLocal), ("169.254.169.254", .metadata), ("224.0.0.1", .multicast), ("239.255.255.250", .multicast),
        ("240.0.0.1", .reserved), ("255.255.255.255", .reserved), ("192.0.0.8", .reserved), ("198.18.0.1", .reserved),
        ("::", .unspecified), ("::1", .loopback), ("fe80::1", .linkLocal), ("febf::1", .linkLocal), ("fc00::1", .private),
        ("fd12:3456::1", .private), ("fec0::1", .private), ("ff02::1", .multicast),
        ("::ffff:127.0.0.1", .loopback), ("::ffff:10.1.2.3", .private), ("::ffff:169.254.169.254", .metadata), ("::127.0.0.1", .loopback),
        ("64:ff9b::a9fe:a9fe", .metadata), ("2002:7f00:1::", .loopback), ("2002:c0a8:101::1", .private),
    ])
    func refused(_ text: String, _ expected: AddressClass) {
        #expect(AddressClass.of(Self.address(text)) == expected, "\(text)")
        let strict = WebhookTargetPolicy(allowHTTP: false, allowPrivateTargets: false)
        #expect(strict.refusal(of: [Self.address("93.184.215.14"), Self.address(text)]) == .address(Self.address(text), expected))
        #expect(WebhookTargetPolicy(allowHTTP: false, allowPrivateTargets: true).refusal(of: [Self.address(text)]) == nil)
    }

    @Test("public addresses at the edges of the refused ranges are allowed", arguments: [
        "1.1.1.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.1", "169.253.255.255",
        "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.167.255.255", "192.169.0.0", "223.255.255.255", "8.8.8.8",
        "2001:4860:4860::8888", "2606:4700::1111", "fbff::1", "fe7f::1", "::ffff:8.8.8.8", "2002:808:808::1", "64:ff9b::808:808",
    ])
    func allowed(_ text: String) {
        #expect(AddressClass.of(Self.address(text)) == .public, "\(text)")
    }

    @Test("the URL: https only unless http is allowed; a host, no credentials, no fragment, not too long")
    func urls() {
        let strict = WebhookTargetPolicy(allowHTTP: false, allowPrivateTargets: false)
        #expect(strict.refusal(of: "https://hooks.example.com/surge?x=1") == nil)
        #expect(strict.refusal(of: "http://hooks.example.com/") == .scheme("http"))
        #expect(WebhookTargetPolicy(allowHTTP: true, allowPrivateTargets: false).refusal(of: "http://hooks.example.com/") == nil)
        #expect(strict.refusal(of: "ftp://hooks.example.com/") == .scheme("ftp"))
        #expect(strict.refusal(of: "https://user:pw@hooks.example.com/") == .credentials)
        #expect(strict.refusal(of: "https:///path") == .malformed)
        #expect(strict.refusal(of: "hooks.example.com/surge") == .malformed)
        #expect(strict.refusal(of: "https://hooks.example.com/#top") == .malformed)
        #expect(strict.refusal(of: "https://hooks.example.com/" + String(repeating: "a", count: 2048)) == .malformed)
    }

    @Test("the guard resolves the host: a loopback or private literal is refused unless private targets are allowed")
    func guardResolves() async throws {
        let strict = WebhookTargetGuard(policy: WebhookTargetPolicy(allowHTTP: true, allowPrivateTargets: false))
        for url in ["http://127.0.0.1:9/hook", "https://[::1]/hook", "https://169.254.169.254/latest/meta-data", "https://10.0.0.7/", "https://localhost/"] {
            await #expect(throws: WebhookTargetRefusal.self, "\(url)") { try await strict.check(url, requireResolution: false) }
        }
        let open = WebhookTargetGuard(policy: WebhookTargetPolicy(allowHTTP: true, allowPrivateTargets: true))
        // A literal is connected to as it is; a name is pinned to the address it was checked at.
        #expect(try await open.check("http://127.0.0.1:9/hook", requireResolution: true) == nil)
        #expect(try await open.check("http://localhost:9/hook", requireResolution: true) == Self.address("127.0.0.1"))
        // A public literal passes without any lookup.
        try await strict.check("https://8.8.8.8/hook", requireResolution: true)
    }

    // MARK: Retries and disabling

    @Test("the retry schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after each failure, ±10 %, then none")
    func schedule() throws {
        let failed = Date(timeIntervalSince1970: 1_800_000_000)
        let expected: [TimeInterval] = [5, 300, 1800, 7200, 18000, 36000, 36000]
        for (index, delay) in expected.enumerated() {
            let attempts = index + 1
            let middle = try #require(WebhookRetrySchedule.nextAttempt(afterFailedAttempts: attempts, failedAt: failed, retryAfter: nil, spread: 0.5))
            #expect(abs(middle.timeIntervalSince(failed) - delay) < 0.001, "after attempt \(attempts)")
            let early = try #require(WebhookRetrySchedule.nextAttempt(afterFailedAttempts: attempts, failedAt: failed, retryAfter: nil, spread: 0))
            let late = try #require(WebhookRetrySchedule.nextAttempt(afterFailedAttempts: attempts, failedAt: failed, retryAfter: nil, spread: 1))
            #expect(abs(early.timeIntervalSince(failed) - delay * 0.9) < 0.001)
            #expect(abs(late.timeIntervalSince(failed) - delay * 1.1) < 0.001)
        }
        #expect(WebhookRetrySchedule.nextAttempt(afterFailedAttempts: 8, failedAt: failed, retryAfter: nil, spread: 0.5) == nil)
        #expect(WebhookRetrySchedule.attempts == 8)
        #expect(WebhookRetrySchedule.delays.reduce(0, +) / 3600 > 27.5)
    }

    @Test("Retry-After postpones a retry, up to the schedule's longest delay, and never brings one forward")
    func retryAfter() throws {
        let failed = Date(timeIntervalSince1970: 1_800_000_000)
        let later = try #require(WebhookRetrySchedule.nextAttempt(afterFailedAttempts: 1, failedAt: failed, retryAfter: 120, spread: 0.5))
        #expect(later.timeIntervalSince(failed) == 120)
        let sooner = try #require(WebhookRetrySchedule.nextAttempt(afterFailedAttempts: 3, failedAt: failed, retryAfter: 1, spread: 0.5))
        #expect(sooner.timeIntervalSince(failed) == 1800)
        let capped = try #require(WebhookRetrySchedule.nextAttempt(afterFailedAttempts: 1, failedAt: failed, retryAfter: 86400 * 30, spread: 0.5))
        #expect(capped.timeIntervalSince(failed) == 36000)
    }

    @Test("Retry-After: seconds or an HTTP date; anything else ignored")
    func retryAfterHeader() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)  // Fri, 15 Jan 2027 08:00:00 GMT
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds(" 0 ", now: now) == 0)
        #expect(RetryAfter.seconds("Fri, 15 Jan 2027 08:10:00 GMT", now: now) == 600)
        #expect(RetryAfter.seconds("Fri, 15 Jan 2027 07:00:00 GMT", now: now) == 0)
        for text in [nil, "", "-5", "soon", "1.5"] { #expect(RetryAfter.seconds(text, now: now) == nil) }
    }

    @Test("what is kept of an answer: 200 bytes at most, control characters (NUL too) as spaces, nothing for a blank one")
    func excerpts() {
        #expect(WebhookAnswerExcerpt.text(Array("oops\u{0}\r\nbad".utf8)) == "oops   bad")
        #expect(WebhookAnswerExcerpt.text(Array(String(repeating: "é", count: 300).utf8))?.count == 100)
        #expect(WebhookAnswerExcerpt.text([0xFF, 0xFE])?.isEmpty == false, "invalid UTF-8 is replaced, not refused")
        #expect(WebhookAnswerExcerpt.text(Array(" \u{0}\t".utf8)) == nil)
        #expect(WebhookAnswerExcerpt.text([]) == nil)
    }

    @Test("answers: 2xx delivered, 410 gone, anything else (or none) failed")
    func outcomes() {
        #expect(WebhookAttemptOutcome.of(status: 200) == .delivered)
        #expect(WebhookAttemptOutcome.of(status: 204) == .delivered)
        #expect(WebhookAttemptOutcome.of(status: 299) == .delivered)
        #expect(WebhookAttemptOutcome.of(status: 410) == .gone)
        for status in [nil, 100, 301, 302, 400, 404, 429, 500, 503] { #expect(WebhookAttemptOutcome.of(status: status) == .failed) }
    }

    @Test("disabling: at once on 410; after failing for the configured time; after N failures in a row when N is set")
    func disabling() {
        let since = Date(timeIntervalSince1970: 1_800_000_000)
        let fiveDays = WebhookDisableRule(failingFor: 5 * 86400, consecutiveFailures: 0)
        #expect(fiveDays.reason(outcome: .gone, failingSince: since, failures: 1, now: since) == "The receiver answered 410 Gone.")
        #expect(fiveDays.reason(outcome: .failed, failingSince: since, failures: 500, now: since.addingTimeInterval(4 * 86400)) == nil)
        #expect(fiveDays.reason(outcome: .failed, failingSince: since, failures: 9, now: since.addingTimeInterval(5 * 86400))?.contains("5 days") == true)
        #expect(fiveDays.reason(outcome: .delivered, failingSince: since, failures: 9, now: since.addingTimeInterval(9 * 86400)) == nil)
        let three = WebhookDisableRule(failingFor: 5 * 86400, consecutiveFailures: 3)
        #expect(three.reason(outcome: .failed, failingSince: since, failures: 2, now: since) == nil)
        #expect(three.reason(outcome: .failed, failingSince: since, failures: 3, now: since) == "3 delivery attempts failed in a row.")
    }
}
