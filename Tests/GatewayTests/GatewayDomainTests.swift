import Foundation
import GatewayDomain
import Hummingbird
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

@Suite("Gateway domain", .tags(.unit), .kind(.unit))
struct GatewayDomainTests {
    let policy = RateLimitPolicy(name: "ip", limit: 3, windowSeconds: 60)

    @Test("a budget allows its limit, refuses the next request with a retry time, and refills over time")
    func tokenBucket() {
        let limiter = RateLimiter()
        let decisions = (0..<4).map { _ in limiter.take("1.2.3.4", policy: policy, now: 100) }
        #expect(decisions.map(\.allowed) == [true, true, true, false])
        #expect(decisions.map(\.remaining) == [2, 1, 0, 0])
        #expect(decisions[3].retryAfterSeconds == 20)
        #expect(decisions[2].resetSeconds == 60)
        #expect(limiter.take("1.2.3.4", policy: policy, now: 119).allowed == false)
        #expect(limiter.take("1.2.3.4", policy: policy, now: 120.5).allowed == true)
        #expect(limiter.take("5.6.7.8", policy: policy, now: 100).allowed == true)
    }

    @Test("budgets of different policies and keys are independent; full buckets are evicted")
    func independenceAndEviction() {
        let limiter = RateLimiter()
        let other = RateLimitPolicy(name: "user", limit: 1)
        #expect(limiter.take("k", policy: other, now: 0).allowed)
        #expect(!limiter.take("k", policy: other, now: 0).allowed)
        #expect(limiter.take("k", policy: policy, now: 0).allowed)
        #expect(limiter.trackedKeys == 2)
        limiter.evictFull(now: 30, policies: [policy, other])
        #expect(limiter.trackedKeys == 1)
        limiter.evictFull(now: 1000, policies: [policy, other])
        #expect(limiter.trackedKeys == 0)
    }

    @Test("credential routes spend the IP's credential budget as well")
    func budgetsPerThrottle() {
        let limits = RateLimits(perIP: 100, perUser: 50, credentialsPerIP: 5)
        #expect(limits.budgets(ip: "ip", userID: nil, credentialOperation: true).map(\.1.name) == ["ip", "credentials"])
        #expect(limits.budgets(ip: "ip", userID: "u", credentialOperation: false).map(\.1.name) == ["ip", "user"])
    }

    @Test("the client address comes from the peer unless proxies are trusted")
    func clientAddress() {
        let headers: HTTPFields = [.xForwardedFor: "9.9.9.9, 10.0.0.1"]
        #expect(ClientAddress(trustedHops: 0).of(headers, peer: "10.0.0.2") == "10.0.0.2")
        #expect(ClientAddress(trustedHops: 1).of(headers, peer: "10.0.0.2") == "10.0.0.1")
        #expect(ClientAddress(trustedHops: 2).of(headers, peer: "10.0.0.2") == "9.9.9.9")
    }

    @Test("idempotency keys are 1 to 255 visible ASCII characters")
    func idempotencyKeys() {
        #expect(RoutePipeline.isAcceptable(idempotencyKey: "abc-123"))
        #expect(!RoutePipeline.isAcceptable(idempotencyKey: ""))
        #expect(!RoutePipeline.isAcceptable(idempotencyKey: "has space"))
        #expect(!RoutePipeline.isAcceptable(idempotencyKey: String(repeating: "x", count: 256)))
    }

    @Test("traceparent: valid headers are continued with a new parent span, invalid ones replaced")
    func traceParent() throws {
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let parent = try #require(TraceParent(header))
        #expect(parent.header == header)
        let child = parent.child()
        #expect(child.traceID == parent.traceID)
        #expect(child.parentID != parent.parentID)
        #expect(TraceParent("00-00000000000000000000000000000000-00f067aa0ba902b7-01") == nil)
        #expect(TraceParent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") == nil)
        #expect(TraceParent("nonsense") == nil)
        let randoms = (0..<64).map { _ in TraceParent.random() }
        #expect(randoms.allSatisfy { TraceParent($0.header) == $0 })
        #expect(Set(randoms.map(\.traceID)).count == randoms.count)
        #expect(Set(randoms.map(\.parentID)).count == randoms.count)
        // Every hex digit turns up in every position of the trace id across the randoms: no digit or position is stuck.
        let digits = Set("0123456789abcdef")
        #expect((0..<32).allSatisfy { position in
            Set((0..<400).map { _ in Array(TraceParent.random().traceID)[position] }) == digits
        })
        #expect(TraceMiddleware.acceptableRequestID("abc-123_x.y:z") == "abc-123_x.y:z")
        #expect(TraceMiddleware.acceptableRequestID("bad id") == nil)
    }

    @Test("a bearer token is read without the spaces and tabs around it, whatever the scheme's case")
    func bearerToken() {
        #expect(Authenticator.token(inBearer: "Bearer abc.def-ghi_") == "abc.def-ghi_")
        #expect(Authenticator.token(inBearer: "bearer \t abc.def \t ") == "abc.def")
        #expect(Authenticator.token(inBearer: "BEARER ") == "")
        #expect(Authenticator.token(inBearer: "Bearer a b") == "a b", "inner spaces are the token's: its verification refuses it")
        #expect(Authenticator.token(inBearer: "Bearer \t \t") == "")
        for scheme in ["Bearer ", "bearer ", "BEARER ", "bEaReR "] { #expect(Authenticator.isBearer(scheme + "abc")) }
        for header in ["Bearer", "Basic abc", "Bearer\tabc", "Bearerabc", "", "Béarer abc", "Bearer@abc", "Bearer\u{0}abc"] { #expect(!Authenticator.isBearer(header), "\(header)") }
    }

    @Test("CORS answers listed origins only, or any with *")
    func cors() {
        let listed = CORSPolicy(allowedOrigins: ["https://app.example"], maxAgeSeconds: 600)
        #expect(listed.allowedOrigin(for: "https://app.example") == "https://app.example")
        #expect(listed.allowedOrigin(for: "https://evil.example") == nil)
        #expect(listed.allowedOrigin(for: "null") == nil)
        #expect(CORSPolicy(allowedOrigins: ["*"], maxAgeSeconds: 0).allowedOrigin(for: "https://any.example") == "*")
    }
}
