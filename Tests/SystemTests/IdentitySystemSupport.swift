import CryptoExtras
import Foundation
import JWTKit
import Logging
import PostgresNIO
import SurgeAuth
import SurgeContracts
import SurgeTestSupport
import Testing

/// A signed-in user as a test sees them.
struct TestSession: Sendable {
    var userID: String
    var accessToken: String
    var refreshToken: String
    var kind: String?
    var email: String?

    init(_ response: TestResponse) throws {
        let json = response.json
        let user = try #require(json["user"] as? [String: Any], "no user in \(response.text)")
        let tokens = try #require(json["tokens"] as? [String: Any], "no tokens in \(response.text)")
        userID = try #require(user["id"] as? String)
        accessToken = try #require(tokens["accessToken"] as? String)
        refreshToken = try #require(tokens["refreshToken"] as? String)
        #expect(tokens["accessTokenExpiresAt"] is String)
        #expect(tokens["refreshTokenExpiresAt"] is String)
        kind = user["kind"] as? String
        email = user["email"] as? String
    }
}

/// Identity and the gateway as processes, with the helpers identity's end-to-end tests share.
struct IdentityStack: Sendable {
    let stack: TestStack
    let http: TestHTTP
    let signingKey: SigningKey

    /// bcrypt at its lowest cost keeps the suite fast; the clock is simulated so that windows and expiries can be
    /// crossed without waiting. The gateway's per-IP limits are raised: every request of these tests comes from one
    /// address, and identity's own per-account throttling is what they exercise.
    static func start(_ stack: TestStack, identity extra: [String: String] = [:], services: [String] = []) async throws -> IdentityStack {
        let key = try SigningKey.generate(id: "identity-test")
        var environment = ["BCRYPT_COST": "4", "SIMULATED_CLOCK": "true", "JWT_SIGNING_KEY": key.seed, "JWT_SIGNING_KEY_ID": key.id]
        environment.merge(extra) { _, new in new }
        try await stack.start("identity", environment: environment)
        for service in services { try await stack.start(service) }
        try await stack.start(
            "gateway",
            environment: [
                "RATE_LIMIT_CREDENTIALS_PER_MINUTE": "100000", "RATE_LIMIT_PER_IP_PER_MINUTE": "1000000", "RATE_LIMIT_PER_USER_PER_MINUTE": "100000",
            ])
        return IdentityStack(stack: stack, http: try stack.http(), signingKey: key)
    }

    func client(_ session: TestSession) -> TestHTTP { http.authorized(session.accessToken) }

    /// Identity itself, bypassing the gateway (internal routes).
    var identity: TestHTTP { get throws { try stack.http("identity") } }

    /// Identity called directly as the gateway calls it, on behalf of `caller`.
    func identity(as caller: String) throws -> TestHTTP { try stack.signedHTTP("identity", caller: caller) }

    func register(_ email: String, name: String, password: String = "correct horse battery", timeZone: String = "Europe/Rome") async throws -> TestSession {
        let response = try await http.post(
            "/v1/auth/register", json: ["email": email, "password": password, "displayName": name, "timeZone": timeZone])
        #expect(response.status == 201, "\(response.text)")
        return try TestSession(response)
    }

    func guest(_ name: String, timeZone: String = "Europe/Rome") async throws -> TestSession {
        let response = try await http.post("/v1/auth/guest", json: ["displayName": name, "timeZone": timeZone])
        #expect(response.status == 201, "\(response.text)")
        return try TestSession(response)
    }

    func signIn(_ email: String, password: String = "correct horse battery") async throws -> TestResponse {
        try await http.post("/v1/auth/sign-in", json: ["email": email, "password": password])
    }

    /// Moves identity's simulated clock.
    func setClock(_ instant: Date) async throws {
        let response = try await identity.put("/internal/clock", json: ["now": Timestamp.format(instant)])
        #expect(response.status == 200, "\(response.text)")
    }

    func identityNow() async throws -> Date {
        let text = try #require(try await identity.get("/internal/clock").json["now"] as? String)
        return try #require(Timestamp.parse(text))
    }

    /// Event payloads identity wrote to its outbox, oldest first.
    func events(_ type: String) async throws -> [[String: Any]] {
        let texts = try await stack.database.withAdmin { client in
            try await client.query("SELECT payload::text FROM identity.outbox WHERE type = \(type) ORDER BY position", logger: .test("events"))
                .collect().map { try $0.decode(String.self) }
        }
        return texts.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) ?? [:] }
    }
}

/// Asserts the response is a problem document with this status (and type slug, if given).
func expectProblem(
    _ response: TestResponse, _ status: Int, _ slug: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(response.status == status, "\(response.status) \(response.text)", sourceLocation: sourceLocation)
    #expect(response.header("content-type") == "application/problem+json", "\(response.text)", sourceLocation: sourceLocation)
    if let slug {
        #expect(response.json["type"] as? String == "https://surge.example/problems/\(slug)", "\(response.text)", sourceLocation: sourceLocation)
    }
}

/// The fields a validation problem names.
func problemFields(_ response: TestResponse) -> [String] {
    ((response.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["field"] as? String }
}

func items(_ response: TestResponse) -> [[String: Any]] {
    (response.json["items"] as? [[String: Any]]) ?? []
}

/// A stand-in for Apple's and Google's key endpoints: a small Hummingbird server inside the test process that
/// publishes RSA keys generated by the test, and signs ID tokens with them.
final class JWKSServer: Sendable {
    struct Key: Sendable {
        let id: String
        let privateKey: JWTKit.Insecure.RSA.PrivateKey

        static func generate(id: String) throws -> Key {
            Key(id: id, privateKey: try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048)))
        }

        var jwk: JWK {
            let (modulus, exponent) = try! privateKey.publicKey.getKeyPrimitives()
            return .rsa(.rs256, identifier: JWKIdentifier(string: id), modulus: modulus.base64URL, exponent: exponent.base64URL)
        }
    }

    /// Claims as the providers send them. `email_verified` is a boolean from Google and a string from Apple.
    struct Claims: JWTPayload {
        var iss: String
        var aud: String
        var sub: String
        var iat: Int
        var exp: Int
        var email: String?
        var email_verified: Verified?
        var name: String?

        enum Verified: Codable, Sendable {
            case bool(Bool), string(String)

            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let value = try? container.decode(Bool.self) { self = .bool(value) } else { self = .string(try container.decode(String.self)) }
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .bool(let value): try container.encode(value)
                case .string(let value): try container.encode(value)
                }
            }
        }

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let published = LockedValue<[Key]>([])
    private let requests = LockedValue(0)
    private let server: LoopbackHTTPServer

    init(keys: [Key]) async throws {
        published.withLock { $0 = keys }
        let (published, requests) = (self.published, self.requests)
        server = try await LoopbackHTTPServer { request in
            guard request.method == .GET, request.path == "/keys" else { return .init(status: 404, body: "") }
            requests.withLock { $0 += 1 }
            let data = try! JSONEncoder().encode(JWKS(keys: published.value.map(\.jwk)))
            return .init(status: 200, contentType: "application/json", body: String(decoding: data, as: UTF8.self))
        }
    }

    var url: String { "http://127.0.0.1:\(server.port)/keys" }
    var fetches: Int { requests.value }

    func publish(_ keys: [Key]) { published.withLock { $0 = keys } }

    func stop() async { await server.stop() }

    /// An ID token signed with `key` (which need not be published).
    static func token(_ claims: Claims, key: Key, kid: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(rsa: key.privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid ?? key.id))
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid ?? key.id))
    }
}

extension Data {
    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
