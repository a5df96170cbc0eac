import Foundation
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// `surge-admin grant-admin|revoke-admin` (the built executable, against the test database as `provision` connects)
/// change what the next access token identity issues says: sign-in and refresh read the role each time.
@Suite("Identity: the admin role (PostgreSQL, surge-admin)", .tags(.integration), .kind(.integration), .serialized)
struct AdminRoleTests {
    struct Session: Decodable {
        struct Tokens: Decodable { var accessToken: String; var refreshToken: String }
        var tokens: Tokens
    }

    /// The `roles` claim of an access token (nil when absent).
    static func roles(_ token: String) throws -> [String]? {
        try claims(of: token)["roles"] as? [String]
    }

    @Test("grant-admin: the next sign-in and the next refresh carry the admin role; revoke-admin: the next refresh does not")
    func grantAndRevoke() async throws {
        try await withIdentityFixture { store in
            let database = ["--database", store.database.name]
            try await store.withRouter { client in
                for (email, name) in [("ann@example.com", "Ann"), ("bob@example.com", "Bob")] { _ = try await client.register(email, name: name) }
                func post(_ path: String, _ body: String) async throws -> Session {
                    let answer = try await client.call(.post, path, json: body)
                    #expect(answer.status == .ok, "\(path): \(answer.text)")
                    return try JSONDecoder().decode(Session.self, from: answer.body)
                }
                func signIn(_ email: String) async throws -> Session {
                    try await post("/v1/auth/sign-in", #"{"email":"\#(email)","password":"a fine passphrase"}"#)
                }
                func refresh(_ session: Session) async throws -> Session {
                    try await post("/v1/auth/refresh", #"{"refreshToken":"\#(session.tokens.refreshToken)"}"#)
                }

                let before = try await signIn("ann@example.com")
                #expect(try Self.roles(before.tokens.accessToken) == nil)

                let granted = try await runSurgeAdmin(["grant-admin", "--email", " Ann@Example.COM "] + database)
                #expect(granted.status == 0, "\(granted.output)")
                #expect(granted.output.contains("is now an admin"), "\(granted.output)")
                // The token already issued says what it said; the next one, by refresh or sign-in, has the role.
                #expect(try Self.roles(before.tokens.accessToken) == nil)
                let refreshed = try await refresh(before)
                #expect(try Self.roles(refreshed.tokens.accessToken) == ["admin"])
                #expect(try Self.roles(try await signIn("ann@example.com").tokens.accessToken) == ["admin"])
                #expect(try Self.roles(try await signIn("bob@example.com").tokens.accessToken) == nil)

                let again = try await runSurgeAdmin(["grant-admin", "--email", "ann@example.com"] + database)
                #expect(again.status == 0 && again.output.contains("already an admin"), "\(again.output)")
                let unknown = try await runSurgeAdmin(["grant-admin", "--email", "nobody@example.com"] + database)
                #expect(unknown.status != 0, "\(unknown.output)")
                #expect(unknown.output.contains("no account has the e-mail address nobody@example.com"), "\(unknown.output)")

                let revoked = try await runSurgeAdmin(["revoke-admin", "--email", "ann@example.com"] + database)
                #expect(revoked.status == 0 && revoked.output.contains("is no longer an admin"), "\(revoked.output)")
                #expect(try Self.roles(try await refresh(refreshed).tokens.accessToken) == nil)
            }
        }
    }
}
