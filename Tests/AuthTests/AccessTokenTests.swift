import Foundation
import JWTKit
import Logging
import SurgeAuth
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Access tokens", .tags(.unit), .kind(.unit))
struct AccessTokenTests {
    let userID = UUID()

    func verifier(for issuers: [AccessTokenIssuer], fetches: LockedCounter = LockedCounter()) -> AccessTokenVerifier {
        AccessTokenVerifier(logger: Logger(label: "test")) {
            fetches.increment()
            let jwks = JWKS(keys: issuers.flatMap(\.jwks.keys))
            return String(decoding: try JSONEncoder().encode(jwks), as: UTF8.self)
        }
    }

    @Test("a token identity signed verifies and names the user")
    func roundTrip() async throws {
        let issuer = await AccessTokenIssuer(signingKey: try .generate())
        let before = Date()
        let token = try await issuer.issue(userID: userID, kind: "guest")
        let after = Date()
        let claims = try await verifier(for: [issuer]).verify(token.token)
        #expect(claims.userID == userID)
        #expect(claims.kind == "guest")
        // Fifteen minutes from issuing (whole seconds in the token), however slow the machine.
        #expect(token.expiresAt >= before.addingTimeInterval(899) && token.expiresAt <= after.addingTimeInterval(901))
    }

    @Test("an admin's token carries the admin role; an ordinary token has no roles claim at all, and both verify")
    func roles() async throws {
        let issuer = await AccessTokenIssuer(signingKey: try .generate())
        let verifier = verifier(for: [issuer])
        let admin = try await issuer.issue(userID: userID, kind: "password", roles: [AccessTokenClaims.adminRole])
        let adminClaims = try await verifier.verify(admin.token)
        #expect(adminClaims.roles == ["admin"])
        #expect(adminClaims.isAdmin)
        // Remembered by the verifier: the second answer comes from its memory and still carries the role.
        #expect(try await verifier.verify(admin.token).isAdmin)

        let ordinary = try await issuer.issue(userID: userID, kind: "guest")
        let ordinaryClaims = try await verifier.verify(ordinary.token)
        #expect(ordinaryClaims.roles == nil)
        #expect(!ordinaryClaims.isAdmin)
        // Absent from the payload, not `null`: tokens of ordinary users look as they did before roles existed.
        let payload = try #require(Base64URL.decode(String(ordinary.token.split(separator: ".")[1])))
        let object = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        #expect(object["roles"] == nil)
        #expect(object["kind"] as? String == "guest")
        let adminPayload = try #require(Base64URL.decode(String(admin.token.split(separator: ".")[1])))
        #expect((try JSONSerialization.jsonObject(with: adminPayload) as? [String: Any])?["roles"] as? [String] == ["admin"])
    }

    @Test("a token names its session (sid, lower case); one issued without a session has no sid claim and still verifies")
    func sessionClaim() async throws {
        let issuer = await AccessTokenIssuer(signingKey: try .generate())
        let verifier = verifier(for: [issuer])
        let session = UUID()
        let named = try await issuer.issue(userID: userID, kind: "password", sessionID: session)
        #expect(try await verifier.verify(named.token).sessionID == session)
        let payload = try #require(Base64URL.decode(String(named.token.split(separator: ".")[1])))
        #expect((try JSONSerialization.jsonObject(with: payload) as? [String: Any])?["sid"] as? String == session.uuidString.lowercased())

        let unnamed = try await issuer.issue(userID: userID, kind: "guest")
        let claims = try await verifier.verify(unnamed.token)
        #expect(claims.userID == userID && claims.sessionID == nil && claims.sid == nil)
        let unnamedPayload = try #require(Base64URL.decode(String(unnamed.token.split(separator: ".")[1])))
        #expect((try JSONSerialization.jsonObject(with: unnamedPayload) as? [String: Any])?.keys.contains("sid") == false)
    }

    @Test("a token signed without a roles claim (as before roles existed) verifies as an ordinary user's")
    func tokenWithoutRolesClaim() async throws {
        struct OldClaims: JWTPayload {
            var sub: SubjectClaim
            var iss: IssuerClaim
            var aud: AudienceClaim
            var iat: IssuedAtClaim
            var exp: ExpirationClaim
            var kind: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let key = try SigningKey.generate(id: "k")
        let keys = JWTKeyCollection()
        await keys.add(eddsa: key.privateKey, kid: "k")
        let old = OldClaims(
            sub: SubjectClaim(value: userID.uuidString.lowercased()), iss: IssuerClaim(value: AccessTokenClaims.issuer),
            aud: AudienceClaim(value: [AccessTokenClaims.audience]), iat: IssuedAtClaim(value: Date()),
            exp: ExpirationClaim(value: Date().addingTimeInterval(600)), kind: "password")
        let token = try await keys.sign(old, kid: "k")
        let claims = try await verifier(for: [await AccessTokenIssuer(signingKey: key)]).verify(token)
        #expect(claims.userID == userID)
        #expect(claims.roles == nil && !claims.isAdmin)
    }

    @Test("a token whose roles were added by the holder no longer verifies")
    func forgedRole() async throws {
        let issuer = await AccessTokenIssuer(signingKey: try .generate())
        let token = try await issuer.issue(userID: userID, kind: "password").token
        var parts = token.split(separator: ".").map(String.init)
        let payload = try #require(Base64URL.decode(parts[1]))
        var object = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        object["roles"] = ["admin"]
        parts[1] = Base64URL.encode(try JSONSerialization.data(withJSONObject: object))
        await #expect(throws: AccessTokenVerifier.Failure.invalid) { try await verifier(for: [issuer]).verify(parts.joined(separator: ".")) }
    }

    @Test("expired, tampered and foreign-key tokens are refused")
    func refusals() async throws {
        let issuer = await AccessTokenIssuer(signingKey: try .generate(id: "k1"))
        let verifier = verifier(for: [issuer])
        let expired = try await issuer.issue(userID: userID, kind: "guest", now: Date().addingTimeInterval(-3600))
        await #expect(throws: AccessTokenVerifier.Failure.invalid) { try await verifier.verify(expired.token) }

        let valid = try await issuer.issue(userID: userID, kind: "guest").token
        var parts = valid.split(separator: ".").map(String.init)
        let forged = AccessTokenClaims(userID: UUID(), kind: "guest", issuedAt: Date(), expiresAt: Date().addingTimeInterval(900))
        parts[1] = try JSONEncoder().encode(forged).base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        await #expect(throws: AccessTokenVerifier.Failure.invalid) { try await verifier.verify(parts.joined(separator: ".")) }

        let stranger = await AccessTokenIssuer(signingKey: try .generate(id: "k1"))
        let foreign = try await stranger.issue(userID: userID, kind: "guest")
        await #expect(throws: AccessTokenVerifier.Failure.invalid) { try await verifier.verify(foreign.token) }

        await #expect(throws: AccessTokenVerifier.Failure.invalid) { try await verifier.verify("not.a.token") }
    }

    @Test("a token with another audience or issuer is refused")
    func audienceAndIssuer() async throws {
        let key = try SigningKey.generate(id: "k")
        let keys = JWTKeyCollection()
        await keys.add(eddsa: key.privateKey, kid: "k")
        var claims = AccessTokenClaims(userID: userID, kind: "guest", issuedAt: Date(), expiresAt: Date().addingTimeInterval(600))
        claims.aud = AudienceClaim(value: ["someone-else"])
        let wrongAudience = try await keys.sign(claims, kid: "k")
        claims.aud = AudienceClaim(value: [AccessTokenClaims.audience])
        claims.iss = IssuerClaim(value: "evil")
        let wrongIssuer = try await keys.sign(claims, kid: "k")
        let verifier = verifier(for: [await AccessTokenIssuer(signingKey: key)])
        await #expect(throws: AccessTokenVerifier.Failure.invalid) { try await verifier.verify(wrongAudience) }
        await #expect(throws: AccessTokenVerifier.Failure.invalid) { try await verifier.verify(wrongIssuer) }
    }

    @Test("after a key rotation, tokens of the new key verify once the verifier refetches; retired keys still verify")
    func rotation() async throws {
        let old = try SigningKey.generate(id: "old")
        let new = try SigningKey.generate(id: "new")
        let published = LockedValueBox([await AccessTokenIssuer(signingKey: old)])
        let fetches = LockedCounter()
        let verifier = AccessTokenVerifier(logger: Logger(label: "test")) {
            fetches.increment()
            let jwks = JWKS(keys: published.value.flatMap(\.jwks.keys))
            return String(decoding: try JSONEncoder().encode(jwks), as: UTF8.self)
        }
        let oldToken = try await published.value[0].issue(userID: userID, kind: "guest")
        _ = try await verifier.verify(oldToken.token)
        let retired = PublicSigningKey(id: "old", x: try #require(old.publicJWK.x))
        let rotated = await AccessTokenIssuer(signingKey: new, retiredKeys: [retired])
        published.set([rotated])
        let newToken = try await rotated.issue(userID: userID, kind: "guest")
        #expect(try await verifier.verify(newToken.token).userID == userID)
        #expect(try await verifier.verify(oldToken.token).userID == userID)
        #expect(fetches.value == 2)
    }

    @Test("a remembered token is refused once it expires, and once a refresh withdraws its key")
    func rememberedTokens() async throws {
        let key = try SigningKey.generate(id: "k")
        let published = LockedValueBox([await AccessTokenIssuer(signingKey: key)])
        let verifier = AccessTokenVerifier(refreshInterval: .milliseconds(200), logger: Logger(label: "test")) {
            String(decoding: try JSONEncoder().encode(JWKS(keys: published.value.flatMap(\.jwks.keys))), as: UTF8.self)
        }
        // Issued 895 s ago: it expires within five seconds.
        let expiring = try await published.value[0].issue(userID: userID, kind: "guest", now: Date().addingTimeInterval(-895))
        let lasting = try await published.value[0].issue(userID: userID, kind: "guest")
        #expect(try await verifier.verify(expiring.token).userID == userID)
        #expect(try await verifier.verify(lasting.token).userID == userID)
        #expect(try await refused(expiring.token, by: verifier))
        #expect(try await verifier.verify(lasting.token).userID == userID)

        published.set([await AccessTokenIssuer(signingKey: try .generate(id: "other"))])
        #expect(try await refused(lasting.token, by: verifier))
    }

    /// Verifies the token until it is refused as invalid; false if it is still accepted after fifteen seconds.
    func refused(_ token: String, by verifier: AccessTokenVerifier) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            do {
                _ = try await verifier.verify(token)
            } catch AccessTokenVerifier.Failure.invalid {
                return true
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test("without reachable keys the verifier says so instead of refusing the token")
    func keysUnavailable() async throws {
        struct Down: Error {}
        let verifier = AccessTokenVerifier(logger: Logger(label: "test")) { throw Down() }
        let token = try await AccessTokenIssuer(signingKey: .generate()).issue(userID: userID, kind: "guest")
        await #expect(throws: AccessTokenVerifier.Failure.keysUnavailable) { try await verifier.verify(token.token) }
    }

    @Test("50 concurrent verifications with stale keys cause one fetch, which they all wait for")
    func oneFetchForConcurrentVerifications() async throws {
        let issuer = await AccessTokenIssuer(signingKey: try .generate())
        let fetches = LockedCounter()
        let verifier = AccessTokenVerifier(refreshInterval: .seconds(1), logger: Logger(label: "test")) {
            fetches.increment()
            // The refetch stays in flight while the verifications arrive.
            if fetches.value > 1 { try await Task.sleep(for: .milliseconds(300)) }
            return String(decoding: try JSONEncoder().encode(issuer.jwks), as: UTF8.self)
        }
        let token = try await issuer.issue(userID: userID, kind: "guest").token
        _ = try await verifier.verify(token)
        try await Task.sleep(for: .milliseconds(1100))  // the keys become stale
        let verified = try await withThrowingTaskGroup(of: UUID?.self) { group in
            for _ in 0..<50 { group.addTask { try await verifier.verify(token).userID } }
            return try await group.reduce(into: 0) { count, id in count += id == self.userID ? 1 : 0 }
        }
        #expect(verified == 50)
        #expect(fetches.value == 2)
    }

    @Test("while identity is down, tokens cause at most one fetch per retry interval")
    func fetchesLimitedWithoutKeys() async throws {
        struct Down: Error {}
        let fetches = LockedCounter()
        let verifier = AccessTokenVerifier(retryInterval: .seconds(60), logger: Logger(label: "test")) {
            fetches.increment()
            throw Down()
        }
        let issuer = await AccessTokenIssuer(signingKey: try .generate())
        var tokens: [String] = []
        for _ in 0..<20 { tokens.append(try await issuer.issue(userID: UUID(), kind: "guest").token) }
        await withTaskGroup(of: Void.self) { group in
            for token in tokens {
                group.addTask {
                    await #expect(throws: AccessTokenVerifier.Failure.keysUnavailable) { try await verifier.verify(token) }
                }
            }
        }
        for token in tokens {
            await #expect(throws: AccessTokenVerifier.Failure.keysUnavailable) { try await verifier.verify(token) }
        }
        #expect(fetches.value == 1)
    }

    @Test("retired keys are read from kid:x pairs")
    func retiredKeyList() {
        #expect(PublicSigningKey.parseList("a:xxx,b:yyy") == [PublicSigningKey(id: "a", x: "xxx"), PublicSigningKey(id: "b", x: "yyy")])
        #expect(PublicSigningKey.parseList("nonsense") == nil)
    }

    @Test("a signing key survives the trip through its seed")
    func seed() throws {
        let key = try SigningKey.generate(id: "k")
        #expect(try SigningKey(id: "k", seed: key.seed).publicJWK.x == key.publicJWK.x)
    }
}

final class LockedCounter: Sendable {
    private let box = LockedValueBox(0)
    func increment() { box.update { $0 += 1 } }
    var value: Int { box.value }
}

final class LockedValueBox<Value: Sendable>: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
