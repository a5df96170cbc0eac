import Foundation
import HTTPTypes
import Hummingbird
import Logging
import SurgeAuth
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

/// The gateway's `Authenticator` over a verifier that remembers tokens: a token of a revoked session is refused as an
/// expired one is, also when the verifier serves it from memory; the same user's other sessions and tokens without a
/// session (`sid`, issued before tokens named it) are not affected. A refresh that finds sessions newly revoked ends
/// the live streams opened with them.
@Suite("Gateway: revoked sessions", .tags(.unit), .kind(.unit))
struct SessionRevocationTests {
    @Test("a remembered token of a revoked session is refused; another session of the same user and a token without sid still pass")
    func revokedSession() async throws {
        let logger = Logger.test("revocations")
        let issuer = await AccessTokenIssuer(signingKey: try .generate())
        let fetches = LockedCounter()
        let verifier = AccessTokenVerifier(logger: logger) {
            fetches.increment()
            return String(decoding: try JSONEncoder().encode(issuer.jwks), as: UTF8.self)
        }
        let revocations = Revocations(client: unstartedDatabase(), logger: logger)
        let authenticator = Authenticator(revocations: revocations, verifier: verifier)

        let user = UUID()
        let (ended, kept) = (UUID(), UUID())
        let endedToken = try await issuer.issue(userID: user, kind: "password", sessionID: ended).token
        let keptToken = try await issuer.issue(userID: user, kind: "password", sessionID: kept).token
        let oldToken = try await issuer.issue(userID: user, kind: "password").token
        for token in [endedToken, keptToken, oldToken] {
            #expect(try await authenticator.callerID(of: Self.request(token)) == user)
        }
        // Remembered from here on: no further verification, so no further key fetch.
        #expect(fetches.value == 1)

        revocations.load(revokedSessions: [ended])
        let refused = await #expect(throws: Problem.self) { try await authenticator.callerID(of: Self.request(endedToken)) }
        #expect(refused?.status == .unauthorized)
        #expect(refused?.type == Problem.typeBase + "invalid-token", "answered like an expired token")
        #expect(try await authenticator.callerID(of: Self.request(keptToken)) == user)
        #expect(try await authenticator.callerID(of: Self.request(oldToken)) == user)

        // Presented afresh (not remembered), the revoked session's newly signed token is refused too.
        let fresh = try await issuer.issue(userID: user, kind: "password", sessionID: ended).token
        await #expect(throws: Problem.self) { try await authenticator.callerID(of: Self.request(fresh)) }
        #expect(fetches.value == 1)

        // A deleted account is still refused with its own problem, whatever the session.
        revocations.load(erasedUsers: [user], revokedSessions: [ended])
        let deleted = await #expect(throws: Problem.self) { try await authenticator.callerID(of: Self.request(keptToken)) }
        #expect(deleted?.type == Problem.typeBase + "account-deleted")
    }

    @Test("a refresh that finds sessions newly revoked ends the streams of those sessions only, once; other sessions' and sid-less streams stay open")
    func revokedSessionsEndTheirStreams() async throws {
        let logger = Logger.test("revocations")
        let hub = StreamHub(settings: .init()) { _ in nil }
        let handed = LockedValue<[Set<UUID>]>([])
        let revocations = Revocations(client: unstartedDatabase(), logger: logger) { sessions in
            handed.withLock { $0.append(sessions) }
            hub.endSessions(sessions)
        }
        let (user, other) = (UUID(), UUID())
        let (ended, kept, earlier) = (UUID(), UUID(), UUID())
        let phone = try hub.subscribe(userID: user, sessionID: ended, topics: [.user(user)], lastEventID: nil, now: 0).0
        let browser = try hub.subscribe(userID: user, sessionID: ended, topics: [.user(user)], lastEventID: nil, now: 0).0
        let laptop = try hub.subscribe(userID: user, sessionID: kept, topics: [.user(user)], lastEventID: nil, now: 0).0
        let oldToken = try hub.subscribe(userID: user, sessionID: nil, topics: [.user(user)], lastEventID: nil, now: 0).0
        let someoneElse = try hub.subscribe(userID: other, sessionID: UUID(), topics: [.user(other)], lastEventID: nil, now: 0).0

        revocations.load(revokedSessions: [earlier])
        revocations.load(revokedSessions: [earlier, ended])
        #expect(handed.value == [[earlier], [ended]], "each refresh hands over only what it newly found")
        for subscriber in [phone, browser] {
            #expect(subscriber.closeReason == .sessionRevoked)
            guard case .closed(.sessionRevoked) = await subscriber.next(until: .now + .seconds(5)) else {
                Issue.record("the revoked session's stream was not told to end")
                continue
            }
        }
        for subscriber in [laptop, oldToken, someoneElse] {
            #expect(subscriber.closeReason == nil)
            guard case .idle = await subscriber.next(until: .now + .milliseconds(20)) else {
                Issue.record("a stream of another session was disturbed")
                continue
            }
        }
        revocations.load(revokedSessions: [earlier, ended])
        #expect(handed.value.count == 2, "a refresh that finds nothing new hands over nothing")
    }

    static func request(_ token: String) -> Request {
        Request(
            head: HTTPRequest(method: .get, scheme: "http", authority: "gateway", path: "/v1/me", headerFields: [.authorization: "Bearer \(token)"]),
            body: RequestBody(buffer: ByteBuffer()))
    }
}
