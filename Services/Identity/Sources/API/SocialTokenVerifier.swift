import AsyncHTTPClient
import Foundation
import IdentityDomain
import JWTKit
import Logging
import NIOCore
import SurgeContracts
import SurgeRuntime
import Synchronization

/// The claims of an Apple or Google ID token. `email_verified` arrives as a boolean (Google) or as the string
/// "true"/"false" (Apple); `aud` as a string or an array.
struct IDTokenPayload: JWTPayload {
    var iss: String
    var aud: AudienceClaim
    var sub: String
    var exp: ExpirationClaim
    var email: String?
    var emailVerified: FlexibleBool?
    var name: String?

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, exp, email, name
        case emailVerified = "email_verified"
    }

    /// Expiry, issuer and audience are checked afterwards against the provider's settings and the service clock.
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    struct FlexibleBool: Codable, Sendable {
        var value: Bool

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let bool = try? container.decode(Bool.self) {
                value = bool
            } else {
                value = try container.decode(String.self).lowercased() == "true"
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }
}

/// Verifies Apple and Google ID tokens (RS256) against each provider's published keys. Keys are fetched on first use,
/// refreshed every `refreshInterval`, and refetched when a token names a key id not yet known, at most every
/// `unknownKeyInterval` per provider, so forged tokens cannot make us hammer the provider. A token must name a known
/// key: it is never tried against some other key.
final class SocialTokenVerifier: Sendable {
    enum Failure: Error, Equatable {
        /// The provider has no client ids configured.
        case disabled
        /// Its keys could not be fetched.
        case keysUnavailable
        /// Malformed, wrongly signed, expired, or for another app.
        case invalid(String)
    }

    typealias FetchJWKS = @Sendable (_ url: String) async throws -> String

    private struct KeySet {
        var keys: JWTKeyCollection?
        var keyIDs: Set<String> = []
        var fetchedAt: ContinuousClock.Instant?
        var lastUnknownKeyFetch: ContinuousClock.Instant?
        var lastFailure: ContinuousClock.Instant?
    }

    let configurations: [SocialProvider: SocialProviderConfiguration]
    private let fetch: FetchJWKS
    private let state = Mutex<[SocialProvider: KeySet]>([:])
    private let refreshInterval: Duration
    private let unknownKeyInterval: Duration
    /// After a failed fetch, requests wait this long before the next fetch (the provider may be down).
    private let failureBackoff = Duration.seconds(5)
    private let logger: Logger

    init(
        configurations: [SocialProvider: SocialProviderConfiguration], refreshInterval: Duration = .seconds(3600),
        unknownKeyInterval: Duration = .seconds(30), logger: Logger, fetch: @escaping FetchJWKS
    ) {
        self.configurations = configurations
        self.refreshInterval = refreshInterval
        self.unknownKeyInterval = unknownKeyInterval
        self.logger = logger
        self.fetch = fetch
    }

    /// Fetches with AsyncHTTPClient's shared client.
    static func httpFetch(_ url: String) async throws -> String {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(5))
        guard response.status == .ok else { throw Failure.keysUnavailable }
        return String(buffer: try await response.body.collect(upTo: 1 << 20))
    }

    func verify(_ token: String, provider: SocialProvider, now: Date) async throws(Failure) -> SocialIdentity {
        guard let configuration = configurations[provider], configuration.isEnabled else { throw .disabled }
        guard let header = Self.header(of: token) else { throw .invalid("malformed token") }
        guard header.alg == "RS256" else { throw .invalid("unexpected algorithm") }
        guard let keyID = header.kid else { throw .invalid("no key id") }

        let shouldFetch = state.withLock { sets -> Bool in
            var set = sets[provider] ?? KeySet()
            defer { sets[provider] = set }
            let now = ContinuousClock.now
            if let failed = set.lastFailure, now - failed < failureBackoff { return false }
            if set.keys == nil || set.fetchedAt.map({ now - $0 > refreshInterval }) ?? true { return true }
            guard !set.keyIDs.contains(keyID) else { return false }
            if let last = set.lastUnknownKeyFetch, now - last < unknownKeyInterval { return false }
            set.lastUnknownKeyFetch = now
            return true
        }
        if shouldFetch { await refresh(configuration) }
        let (keys, knownNow) = state.withLock { ($0[provider]?.keys, $0[provider]?.keyIDs.contains(keyID) ?? false) }
        guard let keys else { throw .keysUnavailable }
        guard knownNow else { throw .invalid("unknown key id") }

        let payload: IDTokenPayload
        do {
            payload = try await keys.verify(token, as: IDTokenPayload.self)
        } catch {
            throw .invalid("signature or claims: \(error)")
        }
        let claims = SocialClaims(
            issuer: payload.iss, audiences: payload.aud.value, subject: payload.sub, expiresAt: payload.exp.value, email: payload.email,
            emailVerified: payload.emailVerified?.value ?? false, name: payload.name)
        do {
            return try SocialIdentity.verify(claims, configuration: configuration, now: now)
        } catch {
            throw .invalid("\(error)")
        }
    }

    private func refresh(_ configuration: SocialProviderConfiguration) async {
        do {
            let json = try await fetch(configuration.jwksURL)
            let jwks = try SurgeJSON.decode(JWKS.self, from: Data(json.utf8))
            // Only RSA keys are of use; a provider publishing other kinds must not break sign-in.
            let rsaKeys = jwks.keys.filter { $0.keyType == .rsa && $0.keyIdentifier != nil }
            let keys = JWTKeyCollection()
            for key in rsaKeys {
                do {
                    try await keys.add(jwk: key)
                } catch {
                    logger.warning("Ignoring an unusable provider key", metadata: ["provider": "\(configuration.provider.rawValue)", "error": "\(error)"])
                }
            }
            let ids = Set(rsaKeys.compactMap { $0.keyIdentifier?.string })
            state.withLock { sets in
                var set = sets[configuration.provider] ?? KeySet()
                set.keys = keys
                set.keyIDs = ids
                set.fetchedAt = .now
                set.lastFailure = nil
                sets[configuration.provider] = set
            }
        } catch {
            logger.warning(
                "Could not load provider keys", metadata: ["provider": "\(configuration.provider.rawValue)", "url": "\(configuration.jwksURL)", "error": "\(error)"])
            // Keep serving with the keys we have, if any; do not refetch on every request meanwhile.
            state.withLock { $0[configuration.provider, default: KeySet()].lastFailure = .now }
        }
    }

    /// `alg` and `kid` from a compact JWS's (not yet verified) header.
    static func header(of token: String) -> (alg: String?, kid: String?)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[0].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return nil
        }
        return (object["alg"] as? String, object["kid"] as? String)
    }
}
