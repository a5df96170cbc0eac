import Foundation
import Logging
import PostgresNIO
import SurgeAuth

/// The development signing key: outside production, without `JWT_SIGNING_KEY`, identity signs access tokens with a
/// key kept in its own schema, so tokens outlive a restart and every replica signs with the same key. Production
/// never reads or writes it.
struct SigningKeyStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    struct MissingKey: Error, CustomStringConvertible {
        var description: String { "the development signing key vanished from the database right after it was stored" }
    }

    /// The stored key, created by whichever replica asks first. Replicas starting together may both insert: the
    /// first insert wins, the others do nothing, and all read back the winner.
    func developmentKey() async throws -> SigningKey {
        let candidate = try SigningKey.generate()
        try await client.query(
            "INSERT INTO development_signing_key (key_id, seed) VALUES (\(candidate.id), \(candidate.seed)) ON CONFLICT DO NOTHING",
            logger: logger)
        let rows = try await client.query("SELECT key_id, seed FROM development_signing_key", logger: logger).collect()
        guard let (id, seed) = try rows.first?.decode((String, String).self) else {
            throw MissingKey()
        }
        let key = try SigningKey(id: id, seed: seed)
        if key.id == candidate.id {
            logger.notice("Created the development signing key; it is kept in the database", metadata: ["kid": "\(key.id)"])
        }
        return key
    }
}
