import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PostgresNIO
import SurgeAuth
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

/// The gateway's `Authenticator` over a verifier that remembers tokens: a token of a revoked session is refused as an
/// expired one is, also when the verifier serves it from memory; the same user's other sessions and tokens without a
/// session (`sid`, issued before tokens named it) are not affected.
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
        // Never started: the test sets the memory a refresh would load, so nothing touches the database.
        let database = PostgresClient(
            configuration: .init(host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil, tls: .disable),
            backgroundLogger: logger)
        let revocations = Revocations(client: database, logger: logger)
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

    static func request(_ token: String) -> Request {
        Request(
            head: HTTPRequest(method: .get, scheme: "http", authority: "gateway", path: "/v1/me", headerFields: [.authorization: "Bearer \(token)"]),
            body: RequestBody(buffer: ByteBuffer()))
    }
}
