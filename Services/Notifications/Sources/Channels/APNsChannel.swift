import Foundation
import JWTKit
import Logging
import NIOHTTP1
import NotificationsDomain

/// The Apple Push Notification service's HTTP/2 provider API: `POST {endpoint}/3/device/<token>` with the app's
/// topic, an alert push type, and a provider token (an ES256 JWT naming the key and the team) that Apple wants
/// renewed between 20 and 60 minutes after it was made.
struct APNsChannel: DeliveryChannel {
    struct Settings: Sendable {
        var endpoint: String
        var topic: String
        var teamID: String
        var keyID: String
        var privateKeyPEM: String
    }

    let settings: Settings
    let http: ProviderHTTP
    let providerTokens: ProviderTokenCache
    let logger: Logger

    init(settings: Settings, http: ProviderHTTP, logger: Logger) throws {
        self.settings = settings
        self.http = http
        self.providerTokens = ProviderTokenCache(
            key: try ES256PrivateKey(pem: settings.privateKeyPEM), keyID: settings.keyID, teamID: settings.teamID)
        self.logger = logger
    }

    func send(_ message: PushMessage, to token: String) async -> DeliveryOutcome {
        do {
            let providerToken = try await providerTokens.current()
            let answer = try await http.post(
                "\(settings.endpoint)/3/device/\(token)",
                headers: [
                    "authorization": "bearer \(providerToken)", "apns-topic": settings.topic, "apns-push-type": "alert", "apns-priority": "10",
                    "apns-id": message.notificationID.uuidString.lowercased(), "content-type": "application/json",
                ],
                body: try message.apnsBody())
            let outcome = ProviderResponse.apns(
                status: answer.status, body: answer.body, retryAfter: ProviderResponse.retryAfter(answer.headers.first(name: "retry-after"), now: Date()))
            if case .retry(_, "apns-expired-provider-token") = outcome { await providerTokens.expire() }
            return outcome
        } catch {
            logger.warning("APNs unreachable", metadata: ["error": "\(error)"])
            return .retry(after: nil, reason: "apns-unreachable")
        }
    }
}

/// The provider token, made when first needed and again after `renewal`; Apple refuses one older than an hour and
/// throttles a provider that makes them more often than every 20 minutes.
actor ProviderTokenCache {
    static let renewal: TimeInterval = 40 * 60
    static let minimumAge: TimeInterval = 20 * 60

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let key: ES256PrivateKey
    private let keyID: JWKIdentifier
    private let teamID: String
    private var cached: (token: String, issuedAt: Date)?

    init(key: ES256PrivateKey, keyID: String, teamID: String) {
        self.key = key
        self.keyID = JWKIdentifier(string: keyID)
        self.teamID = teamID
    }

    func current() async throws -> String {
        // Whole seconds: jwt-kit writes a date as it is, and providers expect integer `iat`s.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        if let cached, now.timeIntervalSince(cached.issuedAt) < Self.renewal { return cached.token }
        let keys = await JWTKeyCollection().add(ecdsa: key, kid: keyID)
        let token = try await keys.sign(Claims(iss: IssuerClaim(value: teamID), iat: IssuedAtClaim(value: now)), kid: keyID)
        cached = (token, now)
        return token
    }

    /// Apple called the token expired: make a new one, unless this one is too young to replace.
    func expire() {
        if let cached, Date().timeIntervalSince(cached.issuedAt) >= Self.minimumAge { self.cached = nil }
    }
}
