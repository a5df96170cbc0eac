import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Accounts deleted recently. An access token outlives its account by up to its lifetime; the gateway refuses it as
/// soon as it knows, so no service receives a deleted user's request. Filled from identity's `UserDeleted` events
/// (whichever gateway replica consumes one, all read the table) and held in memory: loaded before the gateway listens,
/// then refreshed every `refreshInterval`. A deleted account's token is refused everywhere once the `UserDeleted`
/// event has reached the gateway's consumer (the outbox relay publishes at once) plus at most one refresh.
final class ErasedUsers: Sendable {
    private let client: PostgresClient
    private let logger: Logger
    private let recent = Mutex<Set<UUID>>([])
    /// Longer than any access token lives.
    static let remembered: TimeInterval = 2 * 86_400
    static let refreshInterval: Duration = .milliseconds(500)

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    func contains(_ userID: UUID) -> Bool { recent.withLock { $0.contains(userID) } }

    static func record(_ userID: UUID, at instant: Date, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "INSERT INTO erased_users (user_id, erased_at) VALUES (\(userID), \(instant)) ON CONFLICT DO NOTHING", logger: logger)
    }

    /// Reloads the recent erasures.
    func refresh() async throws {
        var ids: Set<UUID> = []
        for try await id in try await client.query("SELECT user_id FROM erased_users", logger: logger).decode(UUID.self) {
            ids.insert(id)
        }
        recent.withLock { $0 = ids }
    }

    /// Forgets the erasures no token can outlive.
    func purge(now: Date) async throws {
        let cutoff = now.addingTimeInterval(-Self.remembered)
        try await client.query("DELETE FROM erased_users WHERE erased_at < \(cutoff)", logger: logger)
    }
}
