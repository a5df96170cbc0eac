import Foundation
import JWTKit
import SurgeContracts
import SurgeTestSupport
import Testing

/// Sign in with Apple and Google against local JWKS servers the test runs, with keys it generates.
@Suite("Identity: social sign-in against local JWKS servers", .tags(.system), .kind(.system), .serialized)
struct IdentitySocialSystemTests {
    static let appleAudience = "com.surge.ios"
    static let googleAudience = "surge-web.apps.googleusercontent.com"

    func claims(
        iss: String, aud: String, sub: String, email: String? = nil, verified: JWKSServer.Claims.Verified? = nil, name: String? = nil,
        expiresIn: Int = 600
    ) -> JWKSServer.Claims {
        let now = Int(Date().timeIntervalSince1970)
        return JWKSServer.Claims(iss: iss, aud: aud, sub: sub, iat: now, exp: now + expiresIn, email: email, email_verified: verified, name: name)
    }

    func google(_ sub: String, email: String? = nil, verified: Bool = true, name: String? = nil, expiresIn: Int = 600) -> JWKSServer.Claims {
        claims(iss: "https://accounts.google.com", aud: Self.googleAudience, sub: sub, email: email, verified: .bool(verified), name: name, expiresIn: expiresIn)
    }

    func apple(_ sub: String, email: String? = nil, verified: String = "true") -> JWKSServer.Claims {
        claims(iss: "https://appleid.apple.com", aud: Self.appleAudience, sub: sub, email: email, verified: .string(verified))
    }

    @Test("new account, returning user, linking a social account by verified e-mail, never a password account, and every kind of bad token refused")
    func socialSignIn() async throws {
        let appleKey = try JWKSServer.Key.generate(id: "apple-1")
        let googleKey = try JWKSServer.Key.generate(id: "google-1")
        let appleServer = try await JWKSServer(keys: [appleKey])
        let googleServer = try await JWKSServer(keys: [googleKey])
        do {
            try await run(appleServer: appleServer, appleKey: appleKey, googleServer: googleServer, googleKey: googleKey)
        } catch {
            await appleServer.stop()
            await googleServer.stop()
            throw error
        }
        await appleServer.stop()
        await googleServer.stop()
    }

    func run(appleServer: JWKSServer, appleKey: JWKSServer.Key, googleServer: JWKSServer, googleKey: JWKSServer.Key) async throws {
        try await withTestStack("identity-social") { stack in
            let system = try await IdentityStack.start(
                stack,
                identity: [
                    "APPLE_JWKS_URL": appleServer.url, "APPLE_CLIENT_IDS": Self.appleAudience,
                    "GOOGLE_JWKS_URL": googleServer.url, "GOOGLE_CLIENT_IDS": "other-client,\(Self.googleAudience)",
                ])
            let http = system.http
            func signIn(_ provider: String, _ token: String, extra: [String: any Sendable] = [:]) async throws -> TestResponse {
                var body: [String: any Sendable] = ["provider": provider, "idToken": token]
                body.merge(extra) { _, new in new }
                return try await http.post("/v1/auth/social", json: body)
            }

            // A first Google sign-in creates a social account with the verified e-mail and the provider's name.
            let first = try await signIn(
                "google", try await JWKSServer.token(google("g-1", email: "Gina@Example.com", name: "Gina G"), key: googleKey),
                extra: ["timeZone": "Europe/Rome"])
            #expect(first.status == 200, "\(first.text)")
            #expect(first.json["newAccount"] as? Bool == true)
            let gina = try TestSession(first)
            #expect(gina.kind == "social")
            #expect(gina.email == "gina@example.com")
            let ginaUser = try #require(first.json["user"] as? [String: Any])
            #expect(ginaUser["displayName"] as? String == "Gina G")
            #expect(ginaUser["timeZone"] as? String == "Europe/Rome")
            #expect(try await system.client(gina).get("/v1/me").status == 200)
            #expect(try await system.events(UserRegistered.descriptor.type).map { $0["kind"] as? String } == ["social"])

            // The same subject again signs in to the same account.
            let again = try await signIn("google", try await JWKSServer.token(google("g-1", email: "gina@example.com"), key: googleKey))
            #expect(again.json["newAccount"] as? Bool == false)
            #expect(try TestSession(again).userID == gina.userID)

            // Apple with a verified e-mail (Apple sends "true" as a string) links to the social account with that e-mail:
            // a provider verified the address when it was created.
            let linked = try await signIn("apple", try await JWKSServer.token(apple("a-1", email: "Gina@Example.com"), key: appleKey))
            #expect(linked.status == 200, "\(linked.text)")
            #expect(linked.json["newAccount"] as? Bool == false)
            #expect(try TestSession(linked).userID == gina.userID)
            #expect(try TestSession(linked).kind == "social")
            func linkedProviders(_ userID: String) async throws -> Set<String> {
                let export = try await system.identity(as: userID).get("/internal/export")
                #expect(export.status == 200, "\(export.text)")
                let identities = ((export.json["credentials"] as? [String: Any])?["socialIdentities"] as? [[String: Any]]) ?? []
                return Set(identities.compactMap { $0["provider"] as? String })
            }
            #expect(try await linkedProviders(gina.userID) == ["google", "apple"])
            #expect(try TestSession(try await signIn("apple", try await JWKSServer.token(apple("a-1"), key: appleKey))).userID == gina.userID)

            // A password account's owner never proved the address: a verified e-mail does not take it over. Paul is
            // told to sign in with his password, and his account stays as it was.
            let paul = try await system.register("paul@example.com", name: "Paul")
            for (provider, token) in [
                ("apple", try await JWKSServer.token(apple("a-3", email: "Paul@Example.com"), key: appleKey)),
                ("google", try await JWKSServer.token(google("g-3", email: "paul@example.com"), key: googleKey)),
            ] {
                let refused = try await signIn(provider, token)
                expectProblem(refused, 409, "account-exists")
                #expect((refused.json["detail"] as? String)?.contains("password") == true)
            }
            #expect(try await linkedProviders(paul.userID).isEmpty)
            let paulNow = try await system.client(paul).get("/v1/me")
            #expect((paulNow.json["user"] as? [String: Any])?["kind"] as? String == "password")
            #expect(try TestSession(try await system.signIn("paul@example.com")).userID == paul.userID)
            #expect(try await system.events(UserRegistered.descriptor.type).map { $0["kind"] as? String } == ["social", "password"])

            // An unverified e-mail links nothing: a separate account, without the address.
            let unverified = try await signIn("apple", try await JWKSServer.token(apple("a-2", email: "paul@example.com", verified: "false"), key: appleKey))
            #expect(unverified.json["newAccount"] as? Bool == true)
            let stranger = try TestSession(unverified)
            #expect(stranger.userID != paul.userID)
            #expect(stranger.email == nil)

            // Refused: wrong audience, wrong issuer, expired, signed by another key under a published key id,
            // tampered, unsigned, another provider's token, garbage.
            let impostor = try JWKSServer.Key.generate(id: "google-1")
            let valid = try await JWKSServer.token(google("g-9"), key: googleKey)
            var parts = valid.split(separator: ".").map(String.init)
            parts[1] = try JSONEncoder().encode(google("g-1", email: "gina@example.com")).base64URL
            let tampered = parts.joined(separator: ".")
            let unsigned = [
                try JSONSerialization.data(withJSONObject: ["alg": "none", "kid": "google-1", "typ": "JWT"]).base64URL,
                try JSONEncoder().encode(google("g-1")).base64URL, "",
            ].joined(separator: ".")
            let hs256 = [
                try JSONSerialization.data(withJSONObject: ["alg": "HS256", "kid": "google-1", "typ": "JWT"]).base64URL,
                try JSONEncoder().encode(google("g-1")).base64URL, "c2lnbmF0dXJl",
            ].joined(separator: ".")
            let refused: [(String, String)] = [
                ("google", try await JWKSServer.token(claims(iss: "https://accounts.google.com", aud: "someone-else", sub: "g-1"), key: googleKey)),
                ("google", try await JWKSServer.token(claims(iss: "https://appleid.apple.com", aud: Self.googleAudience, sub: "g-1"), key: googleKey)),
                ("google", try await JWKSServer.token(google("g-1", expiresIn: -60), key: googleKey)),
                ("google", try await JWKSServer.token(google("g-1"), key: impostor)),
                ("google", tampered),
                ("google", unsigned),
                ("google", hs256),
                ("apple", try await JWKSServer.token(google("g-1"), key: googleKey)),
                ("apple", "not a token"),
            ]
            for (provider, token) in refused {
                expectProblem(try await signIn(provider, token), 401, "invalid-id-token")
            }

            // Key rotation: a token under a new key id makes identity fetch the keys again.
            let rotated = try JWKSServer.Key.generate(id: "google-2")
            googleServer.publish([googleKey, rotated])
            let fetchesBefore = googleServer.fetches
            let afterRotation = try await signIn("google", try await JWKSServer.token(google("g-1"), key: rotated))
            #expect(afterRotation.status == 200, "\(afterRotation.text)")
            #expect(try TestSession(afterRotation).userID == gina.userID)
            #expect(googleServer.fetches == fetchesBefore + 1)
            // Unknown key ids do not make identity hammer the provider: no new fetch within the interval.
            let unknownKey = try JWKSServer.Key.generate(id: "google-3")
            for _ in 0..<3 { expectProblem(try await signIn("google", try await JWKSServer.token(google("g-1"), key: unknownKey)), 401, "invalid-id-token") }
            #expect(googleServer.fetches == fetchesBefore + 1)

            // Bad input.
            let badZone = try await signIn("google", valid, extra: ["timeZone": "Moon/Tranquility"])
            expectProblem(badZone, 422, "validation")
            #expect(problemFields(badZone) == ["timeZone"])
            expectProblem(try await signIn("facebook", valid), 422, "validation")
        }
    }

    @Test("a provider without client ids is switched off: 403 provider-not-enabled (the request itself is well formed)")
    func disabledProvider() async throws {
        try await withTestStack("identity-social-off") { stack in
            let system = try await IdentityStack.start(stack)
            let response = try await system.http.post("/v1/auth/social", json: ["provider": "apple", "idToken": "x.y.z"])
            expectProblem(response, 403, "provider-not-enabled")
        }
    }
}
