import Foundation
import HTTPTypes
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// `RecoveryController` through identity's router: mailed links (reset, verification), address and password changes,
/// and the caller's devices. Links come from the account-mail relay, handed over to the test.
@Suite("Identity: recovery and session routes (PostgreSQL)", .tags(.integration), .kind(.integration), .serialized)
struct RecoveryRouterTests {
    @Test("the mailed verification link verifies the address once; a reset link sets a new password once and signs every device out")
    func mailedLinks() async throws {
        try await withIdentityFixture { store in
            let mails = LockedValue<[AccountMail]>([])
            let relay = store.mailRelay { mail in mails.withLock { $0.append(mail) } }
            @Sendable func token(_ kind: AccountMail.Kind) throws -> String {
                let link = try #require(mails.value.last { $0.kind == kind }?.link)
                return String(try #require(link.split(separator: "#token=").last))
            }
            try await store.withRouter { client in
                let ann = try await client.register("ann@example.com", name: "Ann")
                #expect(try await relay.sendDue() == 1)
                let verification = #"{"token":"\#(try token(.emailVerification))"}"#
                #expect(try await client.call(.post, "/v1/auth/verify-email", json: verification).status == .noContent)
                let spent = try await client.call(.post, "/v1/auth/verify-email", json: verification)
                #expect(spent.status == .notFound && spent.problem == "invalid-link-token")
                let email = try await client.call(.get, "/v1/me/email", as: ann.user.id)
                #expect(email.status == .ok)
                let status = try email.decode(EmailStatusResponse.self)
                #expect(status.email == "ann@example.com" && status.verified && status.pendingEmail == nil)

                for address in ["ann@example.com", "nobody@example.com"] {
                    let forgot = try await client.call(.post, "/v1/auth/forgot-password", json: #"{"email":"\#(address)"}"#)
                    #expect(forgot.status == .accepted, "the same answer whether or not \(address) has an account")
                }
                #expect(try await relay.sendDue() == 2)
                let reset = try token(.passwordReset)
                let weak = try await client.call(.post, "/v1/auth/reset-password", json: #"{"token":"\#(reset)","password":"short"}"#)
                #expect(weak.status == .unprocessableContent && weak.fields == ["password"], "a refused password leaves the link usable")
                let newPassword = #"{"token":"\#(reset)","password":"a brand new passphrase"}"#
                #expect(try await client.call(.post, "/v1/auth/reset-password", json: newPassword).status == .noContent)
                let again = try await client.call(.post, "/v1/auth/reset-password", json: newPassword)
                #expect(again.status == .notFound && again.problem == "invalid-link-token")
                let signIn = try await client.call(.post, "/v1/auth/sign-in", json: #"{"email":"ann@example.com","password":"a brand new passphrase"}"#)
                #expect(signIn.status == .ok)
                let signedOut = try await client.call(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(ann.tokens.refreshToken)"}"#)
                #expect(signedOut.status == .unauthorized && signedOut.problem == "invalid-refresh-token")
            }
        }
    }

    @Test("a malformed address or token is 422 by name, an unknown token 404")
    func linkRefusals() async throws {
        try await withIdentityFixture { store in
            try await store.withRouter { client in
                let forgot = try await client.call(.post, "/v1/auth/forgot-password", json: #"{"email":"not-an-address"}"#)
                #expect(forgot.status == .unprocessableContent && forgot.fields == ["email"])
                for (path, password) in [("/v1/auth/reset-password", #","password":"a brand new passphrase""#), ("/v1/auth/verify-email", "")] {
                    let malformed = try await client.call(.post, path, json: #"{"token":"abc"\#(password)}"#)
                    #expect(malformed.status == .unprocessableContent && malformed.fields == ["token"], "\(path): \(malformed.text)")
                    let unknown = try await client.call(.post, path, json: #"{"token":"\#(AccountToken.generate().text)"\#(password)}"#)
                    #expect(unknown.status == .notFound && unknown.problem == "invalid-link-token", "\(path): \(unknown.text)")
                }
            }
        }
    }

    @Test("the caller's devices are listed (its own marked current) and ended one or all but one; address and password changes need the password")
    func credentialsAndSessions() async throws {
        try await withIdentityFixture { store in
            try await store.withRouter { client in
                let ann = try await client.register("ann@example.com", name: "Ann")
                _ = try await client.register("bob@example.com", name: "Bob")
                let sid = try claims(of: ann.tokens.accessToken)["sid"] as? String
                let current = try #require(sid.flatMap(UUID.init(uuidString:)))
                let signIn = #"{"email":"ann@example.com","password":"a fine passphrase","deviceName":"Laptop"}"#
                let laptop = try await client.call(.post, "/v1/auth/sign-in", json: signIn).decode(SessionResponse.self)
                let listed = try await client.call(.get, "/v1/me/sessions", as: ann.user.id, session: current)
                #expect(listed.status == .ok)
                let devices = try listed.decode(DeviceSessionList.self).items
                #expect(Set(devices.map(\.name)) == ["Phone", "Laptop"])
                #expect(devices.filter(\.current).map(\.sessionID) == [current])

                let laptopSession = try #require(devices.first { !$0.current }?.sessionID)
                #expect(try await client.call(.delete, "/v1/me/sessions/\(laptopSession.key)", as: ann.user.id).status == .noContent)
                let ended = try await client.call(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(laptop.tokens.refreshToken)"}"#)
                #expect(ended.status == .unauthorized)
                let unknownSession = try await client.call(.delete, "/v1/me/sessions/\(UUID().key)", as: ann.user.id)
                #expect(unknownSession.status == .notFound && unknownSession.problem == "not-found")
                _ = try await client.call(.post, "/v1/auth/sign-in", json: signIn)
                let keep = #"{"refreshToken":"\#(ann.tokens.refreshToken)"}"#
                #expect(try await client.call(.post, "/v1/me/sessions/end-others", as: ann.user.id, json: keep).status == .noContent)
                #expect(try await client.call(.get, "/v1/me/sessions", as: ann.user.id).decode(DeviceSessionList.self).items.count == 1)
                let notMine = try await client.call(.post, "/v1/me/sessions/end-others", as: ann.user.id, json: #"{"refreshToken":"nope"}"#)
                #expect(notMine.status == .unauthorized && notMine.problem == "invalid-refresh-token")

                let badAddress = try await client.call(.post, "/v1/me/email", as: ann.user.id, json: #"{"email":"nope","password":"a fine passphrase"}"#)
                #expect(badAddress.status == .unprocessableContent && badAddress.fields == ["email"])
                let wrongPassword = try await client.call(
                    .post, "/v1/me/email", as: ann.user.id, json: #"{"email":"ann.new@example.com","password":"not the passphrase"}"#)
                #expect(wrongPassword.status == .unauthorized && wrongPassword.problem == "invalid-credentials")
                let taken = try await client.call(.post, "/v1/me/email", as: ann.user.id, json: #"{"email":"bob@example.com","password":"a fine passphrase"}"#)
                #expect(taken.status == .conflict && taken.problem == "email-taken")
                let changed = try await client.call(
                    .post, "/v1/me/email", as: ann.user.id, json: #"{"email":"ann.new@example.com","password":"a fine passphrase"}"#)
                #expect(changed.status == .accepted)
                let pending = try changed.decode(EmailStatusResponse.self)
                #expect(pending.email == "ann@example.com" && pending.pendingEmail == "ann.new@example.com")

                let weak = try await client.call(
                    .post, "/v1/me/password", as: ann.user.id, json: #"{"currentPassword":"a fine passphrase","newPassword":"short"}"#)
                #expect(weak.status == .unprocessableContent && weak.fields == ["newPassword"])
                let wrongCurrent = try await client.call(
                    .post, "/v1/me/password", as: ann.user.id, json: #"{"currentPassword":"not the passphrase","newPassword":"a brand new passphrase"}"#)
                #expect(wrongCurrent.status == .unauthorized && wrongCurrent.problem == "invalid-credentials")
                let newPassword = try await client.call(
                    .post, "/v1/me/password", as: ann.user.id, json: #"{"currentPassword":"a fine passphrase","newPassword":"a brand new passphrase"}"#)
                #expect(newPassword.status == .ok)
                #expect(try newPassword.decode(SessionResponse.self).user.id == ann.user.id)
                let oldSession = try await client.call(.post, "/v1/auth/refresh", json: keep)
                #expect(oldSession.status == .unauthorized, "a password change signs the other sessions out")

                for (method, path) in [(HTTPRequest.Method.get, "/v1/me/email"), (.get, "/v1/me/sessions"), (.delete, "/v1/me/sessions/\(current.key)")] {
                    let anonymous = try await client.call(method, path)
                    #expect(anonymous.status == .unauthorized && anonymous.problem == "unauthorized", "\(path)")
                }
            }
        }
    }
}
