import Foundation
import SurgeAuth
import SurgeRuntime

/// How identity signs access tokens: from `JWT_SIGNING_KEY` (base64url Ed25519 seed) and `JWT_SIGNING_KEY_ID`, with
/// `JWT_RETIRED_PUBLIC_KEYS` (`kid:x,...`) still published after a rotation (docs/deployment.md, "Rotating the
/// signing key"). Production requires `JWT_SIGNING_KEY`. Outside production a missing key is `developmentKey()`: one
/// key kept in identity's database, created on the first start, so tokens outlive restarts and every replica agrees.
enum TokenSettings {
    static func issuer(
        _ reader: EnvironmentReader, environment: DeploymentEnvironment, developmentKey: () async throws -> SigningKey
    ) async throws -> AccessTokenIssuer {
        let key: SigningKey
        if let seed = reader.string("JWT_SIGNING_KEY") {
            do {
                key = try SigningKey(id: reader.string("JWT_SIGNING_KEY_ID", default: "primary"), seed: seed)
            } catch {
                throw ConfigurationError(variable: "JWT_SIGNING_KEY", problem: "must be a base64url Ed25519 seed (32 bytes)")
            }
        } else if environment == .production {
            throw ConfigurationError(variable: "JWT_SIGNING_KEY", problem: "is required in production")
        } else {
            key = try await developmentKey()
        }
        var retired: [PublicSigningKey] = []
        if let text = reader.string("JWT_RETIRED_PUBLIC_KEYS") {
            guard let keys = PublicSigningKey.parseList(text) else {
                throw ConfigurationError(variable: "JWT_RETIRED_PUBLIC_KEYS", problem: "must be kid:x pairs separated by commas")
            }
            retired = keys
        }
        let lifetime = try reader.int("ACCESS_TOKEN_TTL_SECONDS", default: 900, range: 60...86_400)
        return await AccessTokenIssuer(signingKey: key, retiredKeys: retired, lifetime: .seconds(lifetime))
    }
}
