import Foundation
import SurgeAuth
import SurgeRuntime
import Synchronization

/// How identity signs access tokens: from `JWT_SIGNING_KEY` (base64url Ed25519 seed) and `JWT_SIGNING_KEY_ID`, with
/// `JWT_RETIRED_PUBLIC_KEYS` (`kid:x,...`) still published after a rotation (docs/deployment.md, "Rotating the
/// signing key"), each token living `ACCESS_TOKEN_TTL_SECONDS` (900). Production requires `JWT_SIGNING_KEY`. Outside
/// production a missing key is `developmentKey()`: one key kept in identity's database, created on the first start,
/// so tokens outlive restarts and every replica agrees.
struct TokenSettings: Sendable {
    /// The configured key; nil outside production without `JWT_SIGNING_KEY`, where the development key is used.
    var signingKey: SigningKey?
    var retiredKeys: [PublicSigningKey] = []
    var lifetime: Duration = .seconds(900)

    static func from(_ reader: EnvironmentReader, environment: DeploymentEnvironment) throws -> TokenSettings {
        var settings = TokenSettings()
        if let seed = reader.string("JWT_SIGNING_KEY") {
            do {
                settings.signingKey = try SigningKey(id: reader.string("JWT_SIGNING_KEY_ID", default: "primary"), seed: seed)
            } catch {
                throw ConfigurationError(variable: "JWT_SIGNING_KEY", problem: "must be a base64url Ed25519 seed (32 bytes)")
            }
        } else if environment == .production {
            throw ConfigurationError(variable: "JWT_SIGNING_KEY", problem: "is required in production")
        }
        if let text = reader.string("JWT_RETIRED_PUBLIC_KEYS") {
            guard let keys = PublicSigningKey.parseList(text) else {
                throw ConfigurationError(variable: "JWT_RETIRED_PUBLIC_KEYS", problem: "must be kid:x pairs separated by commas")
            }
            settings.retiredKeys = keys
        }
        settings.lifetime = .seconds(try reader.int("ACCESS_TOKEN_TTL_SECONDS", default: 900, range: 60...86_400))
        return settings
    }

    /// The issuer, with the configured key, else the development key (which is then the only thing read).
    func issuer(developmentKey: () async throws -> SigningKey) async throws -> AccessTokenIssuer {
        let key = if let signingKey { signingKey } else { try await developmentKey() }
        return await AccessTokenIssuer(signingKey: key, retiredKeys: retiredKeys, lifetime: lifetime)
    }
}

/// Identity's access-token issuer, there once its signing key is known. The development key lives in the database, so
/// the issuer is made by a step before the server starts (after the migrations), not while the application is built.
final class AccessTokenIssuerSlot: Sendable {
    private let issuer: Mutex<AccessTokenIssuer?>

    init(_ issuer: AccessTokenIssuer? = nil) {
        self.issuer = Mutex(issuer)
    }

    func load(_ settings: TokenSettings, developmentKey: () async throws -> SigningKey) async throws {
        let loaded = try await settings.issuer(developmentKey: developmentKey)
        issuer.withLock { $0 = loaded }
    }

    /// The issuer; only before the server listens can it be missing.
    var current: AccessTokenIssuer {
        get throws {
            guard let issuer = issuer.withLock({ $0 }) else { throw Problem.unavailable("Identity is still starting.") }
            return issuer
        }
    }
}
