import Foundation
import JWTKit
import Logging
import SurgeAuth
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Access-token headers and key rotation", .tags(.unit), .kind(.unit))
struct TokenHeaderTests {
    let userID = UUID()

    func verifier(_ published: LockedValueBox<[AccessTokenIssuer]>, fetches: LockedCounter) -> AccessTokenVerifier {
        AccessTokenVerifier(logger: Logger(label: "test")) {
            fetches.increment()
            return String(decoding: try JSONEncoder().encode(JWKS(keys: published.value.flatMap(\.jwks.keys))), as: UTF8.self)
        }
    }

    /// The token with its header replaced and its signature kept: what an attacker does to try `alg` confusion.
    func withHeader(_ token: String, _ header: [String: String]) throws -> String {
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[0] = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        return parts.joined(separator: ".")
    }

    @Test("a token whose header names another algorithm than EdDSA is refused, even when signed by the real key")
    func algorithmMustMatchTheKey() async throws {
        let key = try SigningKey.generate(id: "k")
        let issuer = await AccessTokenIssuer(signingKey: key)
        let verifier = verifier(LockedValueBox([issuer]), fetches: LockedCounter())
        let token = try await issuer.issue(userID: userID, kind: "guest").token
        #expect(try await verifier.verify(token).userID == userID)
        for algorithm in ["HS256", "none", "RS256", "ES256", "eddsa"] {
            let confused = try withHeader(token, ["alg": algorithm, "kid": "k", "typ": "JWT"])
            await #expect(throws: AccessTokenVerifier.Failure.invalid, "alg=\(algorithm)") { try await verifier.verify(confused) }
        }
        // An HS256 token signed with the public key's bytes as an HMAC secret: the classic confusion attack.
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Data(try #require(key.publicJWK.x).utf8)), digestAlgorithm: .sha256, kid: "k")
        let hmacToken = try await keys.sign(
            AccessTokenClaims(userID: userID, kind: "guest", issuedAt: Date(), expiresAt: Date().addingTimeInterval(600)), kid: "k")
        await #expect(throws: AccessTokenVerifier.Failure.invalid) { try await verifier.verify(hmacToken) }
    }

    @Test("a token signed by a newly rotated key is accepted on its first use; unknown key ids refetch at most twice a second")
    func newKeyAcceptedAtOnce() async throws {
        let old = await AccessTokenIssuer(signingKey: try .generate(id: "old"))
        let published = LockedValueBox([old])
        let fetches = LockedCounter()
        let verifier = verifier(published, fetches: fetches)
        _ = try await verifier.verify(try await old.issue(userID: userID, kind: "guest").token)
        #expect(fetches.value == 1)

        // Identity rotates: the first token of the new key makes the verifier refetch and is accepted at once.
        let rotated = await AccessTokenIssuer(signingKey: try .generate(id: "new"))
        published.set([rotated, old])
        #expect(try await verifier.verify(try await rotated.issue(userID: userID, kind: "guest").token).userID == userID)
        #expect(fetches.value == 2)

        // Twenty tokens naming a key nobody published cause at most one more fetch (none if the last one is recent).
        let stranger = await AccessTokenIssuer(signingKey: try .generate(id: "stranger"))
        let strangerToken = try await stranger.issue(userID: userID, kind: "guest").token
        for _ in 0..<20 {
            await #expect(throws: AccessTokenVerifier.Failure.invalid) { try await verifier.verify(strangerToken) }
        }
        #expect((2...3).contains(fetches.value))
        // So a rotation is seen within a second even right after such a refetch.
        #expect(verifier.unknownKeyInterval <= .seconds(1))
    }
}
