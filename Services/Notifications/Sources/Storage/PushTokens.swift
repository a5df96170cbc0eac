import Foundation
import Logging
import NotificationsDomain
import PostgresNIO

/// A device a user registered for push.
struct PushToken: Sendable {
    var tokenID: UUID
    var platform: PushPlatform
    var token: String
    var registeredAt: Date
}

/// The caller's push devices: every query names the user whose tokens it reads or writes.
struct PushTokenStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// Registers the device, or refreshes it when the user already has it; beyond the limit, the device registered
    /// longest ago is forgotten. A device belongs to the account that registered it last: another account that had it
    /// loses it, with the pushes still queued for it.
    func register(_ platform: PushPlatform, token: String, for userID: UUID, at time: Date) async throws -> PushToken {
        try await client.transaction(logger: logger) { connection in
            // Two accounts registering the same device at once take turns, so the handover below cannot race.
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(platform.rawValue + ":" + token), 0))", logger: logger)
            try await connection.query(
                "DELETE FROM push_tokens WHERE platform = \(platform.rawValue) AND token = \(token) AND user_id <> \(userID)", logger: logger)
            let row = try await connection.query(
                """
                INSERT INTO push_tokens (token_id, user_id, platform, token, registered_at)
                VALUES (\(UUID()), \(userID), \(platform.rawValue), \(token), \(time))
                ON CONFLICT (platform, token) DO UPDATE SET registered_at = EXCLUDED.registered_at
                RETURNING token_id, registered_at
                """, logger: logger
            ).collect().first
            guard let written = try row?.decode((UUID, Date).self) else { throw UpsertReturnedNothing() }
            let (tokenID, registeredAt) = written
            try await connection.query(
                """
                DELETE FROM push_tokens WHERE user_id = \(userID) AND token_id NOT IN (
                    SELECT token_id FROM push_tokens WHERE user_id = \(userID)
                    ORDER BY registered_at DESC, token_id DESC LIMIT \(PushTokenRules.maxTokensPerUser))
                """, logger: logger)
            return PushToken(tokenID: tokenID, platform: platform, token: token, registeredAt: registeredAt)
        }
    }

    /// The user's devices, the latest registered first.
    func tokens(of userID: UUID) async throws -> [PushToken] {
        try await client.query(
            """
            SELECT token_id, platform, token, registered_at FROM push_tokens WHERE user_id = \(userID)
            ORDER BY registered_at DESC, token_id DESC
            """, logger: logger
        ).collect().compactMap { row in
            let (id, platform, token, registeredAt) = try row.decode((UUID, String, String, Date).self)
            return PushPlatform(rawValue: platform).map { PushToken(tokenID: id, platform: $0, token: token, registeredAt: registeredAt) }
        }
    }

    /// Removes one of the user's devices (its pending pushes go with it); false when the user has no such device.
    func remove(_ tokenID: UUID, of userID: UUID) async throws -> Bool {
        try await client.query(
            "DELETE FROM push_tokens WHERE token_id = \(tokenID) AND user_id = \(userID) RETURNING 1", logger: logger
        ).collect().isEmpty == false
    }
}

/// An upsert with `RETURNING` always returns its row; this stands for the impossible.
private struct UpsertReturnedNothing: Error {}
