import Foundation
import JWTKit
import Logging
import NIOHTTP1
import NotificationsDomain
import SurgeContracts

/// Firebase Cloud Messaging, HTTP v1: `POST {endpoint}/v1/projects/<project>/messages:send` with an OAuth2 access
/// token obtained for the service account (an RS256 JWT assertion exchanged at the token URI) and kept until shortly
/// before it expires.
struct FCMChannel: DeliveryChannel {
    struct Settings: Sendable {
        var endpoint: String
        var projectID: String
        var clientEmail: String
        var privateKeyID: String?
        var privateKeyPEM: String
        var tokenURI: String
    }

    let settings: Settings
    let http: ProviderHTTP
    let accessTokens: AccessTokenCache
    let logger: Logger

    init(settings: Settings, http: ProviderHTTP, logger: Logger) throws {
        self.settings = settings
        self.http = http
        self.accessTokens = AccessTokenCache(
            assertion: try ServiceAccountAssertion(settings: settings), tokenURI: settings.tokenURI, http: http)
        self.logger = logger
    }

    func send(_ message: PushMessage, to token: String) async -> DeliveryOutcome {
        let accessToken: String
        do {
            accessToken = try await accessTokens.current()
        } catch let error as AccessTokenCache.Refused {
            logger.warning("FCM token exchange refused", metadata: ["status": "\(error.status)"])
            let reason = "fcm-auth-http-\(error.status)"
            // A refused service account (400 invalid_grant, 401) stays refused; the endpoint's own trouble passes.
            return error.status >= 500 || error.status == 429 ? .retry(after: nil, reason: reason) : .failed(reason: reason)
        } catch {
            logger.warning("FCM token exchange failed", metadata: ["error": "\(error)"])
            return .retry(after: nil, reason: "fcm-auth-unreachable")
        }
        do {
            let answer = try await http.post(
                "\(settings.endpoint)/v1/projects/\(settings.projectID)/messages:send",
                headers: ["authorization": "Bearer \(accessToken)", "content-type": "application/json"], body: try message.fcmBody(token: token))
            let outcome = ProviderResponse.fcm(
                status: answer.status, body: answer.body, retryAfter: ProviderResponse.retryAfter(answer.headers.first(name: "retry-after"), now: Date()))
            if answer.status == 401 { await accessTokens.invalidate() }
            return outcome
        } catch {
            logger.warning("FCM unreachable", metadata: ["error": "\(error)"])
            return .retry(after: nil, reason: "fcm-unreachable")
        }
    }
}

/// The OAuth2 access token of the service account, fetched when first needed and again a minute before it expires;
/// concurrent sends share one exchange.
actor AccessTokenCache {
    struct Refused: Error { var status: Int }

    private struct Grant: Decodable {
        var access_token: String
        var expires_in: Int
    }

    private let assertion: ServiceAccountAssertion
    private let tokenURI: String
    private let http: ProviderHTTP
    private var cached: (token: String, expiresAt: Date)?
    private var inFlight: Task<(token: String, expiresAt: Date), any Error>?

    init(assertion: ServiceAccountAssertion, tokenURI: String, http: ProviderHTTP) {
        self.assertion = assertion
        self.tokenURI = tokenURI
        self.http = http
    }

    func current() async throws -> String {
        if let cached, cached.expiresAt.timeIntervalSinceNow > 60 { return cached.token }
        let task = inFlight ?? Task { try await exchange() }
        inFlight = task
        defer { inFlight = nil }
        let fresh = try await task.value
        cached = fresh
        return fresh.token
    }

    func invalidate() { cached = nil }

    private func exchange() async throws -> (token: String, expiresAt: Date) {
        // Whole seconds: jwt-kit writes a date as it is, and the token endpoint expects integer `iat` and `exp`.
        let issuedAt = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let jwt = try await assertion.signed(at: issuedAt)
        var form = URLComponents()
        form.queryItems = [URLQueryItem(name: "grant_type", value: "urn:ietf:params:oauth:grant-type:jwt-bearer"), URLQueryItem(name: "assertion", value: jwt)]
        let answer = try await http.post(
            tokenURI, headers: ["content-type": "application/x-www-form-urlencoded"], body: Data((form.percentEncodedQuery ?? "").utf8))
        guard answer.status == 200 else { throw Refused(status: answer.status) }
        let grant = try SurgeJSON.decode(Grant.self, from: answer.body)
        return (grant.access_token, issuedAt.addingTimeInterval(TimeInterval(grant.expires_in)))
    }
}

/// The JWT a service account presents at the token URI (RFC 7523): signed RS256 with its private key, asking for the
/// messaging scope, valid for an hour.
struct ServiceAccountAssertion: Sendable {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var scope: String
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let key: Insecure.RSA.PrivateKey
    private let kid: JWKIdentifier?
    private let clientEmail: String
    private let audience: String

    init(settings: FCMChannel.Settings) throws {
        key = try Insecure.RSA.PrivateKey(pem: settings.privateKeyPEM)
        kid = settings.privateKeyID.map { JWKIdentifier(string: $0) }
        clientEmail = settings.clientEmail
        audience = settings.tokenURI
    }

    /// Signed about once an hour: a key collection per assertion costs nothing worth keeping.
    func signed(at issuedAt: Date) async throws -> String {
        let keys = await JWTKeyCollection().add(rsa: key, digestAlgorithm: .sha256, kid: kid)
        return try await keys.sign(
            Claims(
                iss: IssuerClaim(value: clientEmail), scope: Self.scope, aud: AudienceClaim(value: [audience]), iat: IssuedAtClaim(value: issuedAt),
                exp: ExpirationClaim(value: issuedAt.addingTimeInterval(3600))),
            kid: kid)
    }
}
