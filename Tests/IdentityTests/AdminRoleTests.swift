import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import SurgeAuth
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
        let payload = try #require(Base64URL.decode(String(token.split(separator: ".")[1])))
        let object = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        return object["roles"] as? [String]
    }

    @Test("grant-admin: the next sign-in and the next refresh carry the admin role; revoke-admin: the next refresh does not")
    func grantAndRevoke() async throws {
        try await withIdentityStore { store in
            let passwords = try await PasswordHasher(cost: 4)
            for (email, name) in [("ann@example.com", "Ann"), ("bob@example.com", "Bob")] {
                let registration = try PasswordRegistration(
                    email: email, password: "a fine passphrase", displayName: name, timeZone: "Europe/Rome", locale: nil)
                _ = try await store.accounts.registerWithPassword(
                    registration, passwordHash: try await passwords.hash(registration.password), trace: store.trace)
            }
            let auth = AuthController(
                accounts: store.accounts, sessions: store.sessions, issuer: IssuerSlot(await AccessTokenIssuer(signingKey: try .generate())),
                passwords: passwords, social: SocialTokenVerifier(configurations: [:], logger: Logger.test("social")) { _ in "" },
                clock: store.clock)
            let router = Router(context: SurgeRequestContext.self)
            router.add(middleware: ProblemMiddleware())
            auth.addRoutes(to: router)
            let database = ["--database", store.database.name]
            try await Application(router: router).test(.router) { client in
                func post(_ path: String, _ body: String) async throws -> Session {
                    try await client.execute(uri: path, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: body)) {
                        #expect($0.status == .ok, "\(path): \(String(buffer: $0.body))")
                        return try JSONDecoder().decode(Session.self, from: Data(String(buffer: $0.body).utf8))
                    }
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
