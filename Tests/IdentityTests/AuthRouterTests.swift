import Foundation
import HTTPTypes
import SurgeAuth
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// `AuthController` through identity's router: sign-up, sign-in, refresh, sign-out and the key set.
@Suite("Identity: auth routes (PostgreSQL)", .tags(.integration), .kind(.integration), .serialized)
struct AuthRouterTests {
    @Test("a guest and a password sign-up get 201 and a session whose token the JWKS verifies; sign-in, refresh and sign-out work the session")
    func sessions() async throws {
        try await withIdentityFixture { store in
            try await store.withRouter { client in
                let guest = try await client.call(.post, "/v1/auth/guest", json: #"{"displayName":"Gus","timeZone":"Europe/Rome"}"#)
                #expect(guest.status == .created, "\(guest.text)")
                let gus = try guest.decode(SessionResponse.self)
                #expect(gus.user.kind == .guest && gus.user.displayName == "Gus" && gus.user.email == nil)

                // The key set is the one route answered unsigned.
                let jwks = try await client.client.execute(uri: "/internal/jwks.json", method: .get) { String(buffer: $0.body) }
                let claims = try await AccessTokenVerifier(logger: .test("verifier")) { jwks }.verify(gus.tokens.accessToken)
                #expect(claims.userID == gus.user.id && claims.sessionID != nil)

                let ann = try await client.register("Ann@Example.com", name: "Ann")
                #expect(ann.user.kind == .password && ann.user.email == "ann@example.com")
                let signIn = try await client.call(.post, "/v1/auth/sign-in", json: #"{"email":"ann@example.com","password":"a fine passphrase"}"#)
                #expect(signIn.status == .ok)
                let signedIn = try signIn.decode(SessionResponse.self)
                #expect(signedIn.user.id == ann.user.id)

                let refresh = try await client.call(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(signedIn.tokens.refreshToken)"}"#)
                #expect(refresh.status == .ok)
                let refreshed = try refresh.decode(SessionResponse.self)
                #expect(refreshed.user.id == ann.user.id && refreshed.tokens.refreshToken != signedIn.tokens.refreshToken)
                let reused = try await client.call(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(signedIn.tokens.refreshToken)"}"#)
                #expect(reused.status == .unauthorized && reused.problem == "refresh-token-reused")

                let signOut = try await client.call(.post, "/v1/auth/sign-out", json: #"{"refreshToken":"\#(ann.tokens.refreshToken)"}"#)
                #expect(signOut.status == .noContent)
                let afterSignOut = try await client.call(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(ann.tokens.refreshToken)"}"#)
                #expect(afterSignOut.status == .unauthorized && afterSignOut.problem == "invalid-refresh-token")
            }
        }
    }

    @Test("bad sign-ups are 422 naming every field, a taken e-mail 409; a wrong password or unknown refresh token 401; a disabled provider 403")
    func refusals() async throws {
        try await withIdentityFixture { store in
            try await store.withRouter { client in
                let guest = try await client.call(.post, "/v1/auth/guest", json: #"{"displayName":" ","timeZone":"Mars/Base"}"#)
                #expect(guest.status == .unprocessableContent && guest.fields == ["displayName", "timeZone"], "\(guest.text)")
                let missing = try await client.call(.post, "/v1/auth/guest", json: #"{"displayName":"Gus"}"#)
                #expect(missing.status == .unprocessableContent && missing.fields == ["timeZone"], "\(missing.text)")
                let device = String(repeating: "d", count: 101)
                let longDevice = try await client.call(
                    .post, "/v1/auth/guest", json: #"{"displayName":"Gus","timeZone":"UTC","deviceName":"\#(device)"}"#)
                #expect(longDevice.status == .unprocessableContent && longDevice.fields == ["deviceName"], "\(longDevice.text)")
                let weak = try await client.call(
                    .post, "/v1/auth/register", json: #"{"email":"ann@example.com","password":"short","displayName":"Ann","timeZone":"UTC"}"#)
                #expect(weak.status == .unprocessableContent && weak.fields == ["password"], "\(weak.text)")

                _ = try await client.register("ann@example.com", name: "Ann")
                let taken = try await client.call(
                    .post, "/v1/auth/register",
                    json: #"{"email":"ANN@example.com","password":"another fine passphrase","displayName":"Ann 2","timeZone":"UTC"}"#)
                #expect(taken.status == .conflict && taken.problem == "email-taken", "\(taken.text)")

                let wrong = try await client.call(.post, "/v1/auth/sign-in", json: #"{"email":"ann@example.com","password":"not the passphrase"}"#)
                #expect(wrong.status == .unauthorized && wrong.problem == "invalid-credentials")
                let unknown = try await client.call(.post, "/v1/auth/sign-in", json: #"{"email":"nobody@example.com","password":"a fine passphrase"}"#)
                #expect(unknown.status == .unauthorized && unknown.problem == "invalid-credentials")
                let refresh = try await client.call(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(String(repeating: "x", count: 43))"}"#)
                #expect(refresh.status == .unauthorized && refresh.problem == "invalid-refresh-token")

                let social = try await client.call(.post, "/v1/auth/social", json: #"{"provider":"apple","idToken":"a.b.c"}"#)
                #expect(social.status == .forbidden && social.problem == "provider-not-enabled", "\(social.text)")
                let socialZone = try await client.call(.post, "/v1/auth/social", json: #"{"provider":"google","idToken":"a.b.c","timeZone":"Mars/Base"}"#)
                #expect(socialZone.status == .unprocessableContent && socialZone.fields == ["timeZone"], "\(socialZone.text)")
            }
        }
    }

    @Test("20 IPv6 /64s × 5 wrong passwords lock the account against new devices, never the owner's: her device token signs her in from a new address")
    func lockoutAttack() async throws {
        try await withIdentityFixture { store in
            try await store.withRouter { client in
                let owner = try await client.register("owner@example.com", name: "Owner")
                let registered = try #require(owner.deviceToken)
                // Her phone signs in again: the token it presents is replaced by a new one.
                let again = try await client.call(
                    .post, "/v1/auth/sign-in", json: #"{"email":"owner@example.com","password":"a fine passphrase","deviceToken":"\#(registered)"}"#)
                #expect(again.status == .ok, "\(again.text)")
                let phone = try #require(try again.decode(SessionResponse.self).deviceToken)
                #expect(phone != registered)

                let wrong = #"{"email":"owner@example.com","password":"guess"}"#
                for network in 0..<20 {
                    for _ in 0..<5 {
                        let guess = try await client.call(.post, "/v1/auth/sign-in", json: wrong, from: "2001:db8:\(String(network, radix: 16))::1")
                        #expect(guess.status == .unauthorized && guess.problem == "invalid-credentials", "\(network): \(guess.text)")
                    }
                }
                let right = #"{"email":"owner@example.com","password":"a fine passphrase""#
                // A new device (or the registration's replaced token) from a new address: the account-wide limit holds.
                for body in [right + "}", right + #","deviceToken":"\#(registered)"}"#] {
                    let refused = try await client.call(.post, "/v1/auth/sign-in", json: body, from: "192.0.2.44")
                    #expect(refused.status == .tooManyRequests && refused.problem == "sign-in-throttled", "\(refused.text)")
                }
                // Her phone, from an address it never used: signed in.
                let signedIn = try await client.call(.post, "/v1/auth/sign-in", json: right + #","deviceToken":"\#(phone)"}"#, from: "198.51.100.9")
                #expect(signedIn.status == .ok, "\(signedIn.text)")
                let next = try #require(try signedIn.decode(SessionResponse.self).deviceToken)

                // A stolen device token is worth a few guesses: five wrong passwords with it and it is a new device again.
                for _ in 0..<5 {
                    let guess = try await client.call(.post, "/v1/auth/sign-in", json: #"{"email":"owner@example.com","password":"guess","deviceToken":"\#(next)"}"#, from: "198.51.100.10")
                    #expect(guess.status == .unauthorized, "\(guess.text)")
                }
                let spent = try await client.call(.post, "/v1/auth/sign-in", json: right + #","deviceToken":"\#(next)"}"#, from: "198.51.100.11")
                #expect(spent.status == .tooManyRequests && spent.problem == "sign-in-throttled", "\(spent.text)")
                // Another account's token makes no device known for this one.
                let other = try #require(try await client.register("other@example.com", name: "Other").deviceToken)
                let foreign = try await client.call(.post, "/v1/auth/sign-in", json: right + #","deviceToken":"\#(other)"}"#, from: "198.51.100.12")
                #expect(foreign.status == .tooManyRequests, "\(foreign.text)")
            }
        }
    }
}
