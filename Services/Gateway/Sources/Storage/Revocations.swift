import Foundation
import Logging
import PostgresNIO
import Synchronization

/// What identity withdrew before the access tokens it issued expire: deleted accounts (`UserDeleted`) and revoked
/// sessions (`SessionsRevoked`: a password reset or change, a session ended, the others ended, a sign-out, a reused
/// refresh token). An access token outlives both by up to its lifetime; the gateway refuses it as soon as it knows, so
/// no service receives the request. Filled from identity's events (whichever gateway replica consumes one, all read
/// the tables) and held in memory: loaded before the gateway listens, then refreshed every `refreshInterval`. A token
/// is refused everywhere once the event has reached the gateway's consumer (the outbox relay publishes at once) plus
/// at most one refresh. Sessions a refresh finds newly revoked are handed to `onSessionsRevoked` (the live streams
/// opened with them end).
final class Revocations: Sendable {
    private struct Recent {
        var erasedUsers: Set<UUID> = []
        var revokedSessions: Set<UUID> = []
    }

    private let client: PostgresClient
    private let logger: Logger
    private let recent = Mutex(Recent())
    private let onSessionsRevoked: @Sendable (Set<UUID>) -> Void
    /// Longer than any access token lives.
    static let remembered: TimeInterval = 2 * 86_400
    static let refreshInterval: Duration = .milliseconds(500)

    init(client: PostgresClient, logger: Logger, onSessionsRevoked: @escaping @Sendable (Set<UUID>) -> Void = { _ in }) {
        self.client = client
        self.logger = logger
        self.onSessionsRevoked = onSessionsRevoked
    }

    /// Whether the account was deleted.
    func isErased(_ userID: UUID) -> Bool { recent.withLock { $0.erasedUsers.contains(userID) } }

    /// Whether the session (refresh-token family, an access token's `sid`) was revoked.
    func isRevoked(session sessionID: UUID) -> Bool { recent.withLock { $0.revokedSessions.contains(sessionID) } }

    /// Reloads the recent erasures and revocations.
    func refresh() async throws {
        load(erasedUsers: try await ids("SELECT user_id FROM erased_users"), revokedSessions: try await ids("SELECT session_id FROM revoked_sessions"))
    }

    /// Forgets what no token can outlive.
    func purge(now: Date) async throws {
        let cutoff = now.addingTimeInterval(-Self.remembered)
        try await client.query("DELETE FROM erased_users WHERE erased_at < \(cutoff)", logger: logger)
        try await client.query("DELETE FROM revoked_sessions WHERE revoked_at < \(cutoff)", logger: logger)
    }

    /// Replaces the memory: what a refresh read, or what a test of the readers sets.
    func load(erasedUsers: Set<UUID> = [], revokedSessions: Set<UUID> = []) {
        let newlyRevoked = recent.withLock { recent in
            let newlyRevoked = revokedSessions.subtracting(recent.revokedSessions)
            recent = Recent(erasedUsers: erasedUsers, revokedSessions: revokedSessions)
            return newlyRevoked
        }
        if !newlyRevoked.isEmpty { onSessionsRevoked(newlyRevoked) }
    }

    private func ids(_ query: PostgresQuery) async throws -> Set<UUID> {
        var ids: Set<UUID> = []
        for try await id in try await client.query(query, logger: logger).decode(UUID.self) {
            ids.insert(id)
        }
        return ids
    }
}

/// Identity's withdrawals as the gateway's consumer records them, over its inbox transaction's connection.
struct RevocationRecorder {
    let connection: PostgresConnection
    let logger: Logger

    func recordErasure(of userID: UUID, at instant: Date) async throws {
        try await connection.query(
            "INSERT INTO erased_users (user_id, erased_at) VALUES (\(userID), \(instant)) ON CONFLICT DO NOTHING", logger: logger)
    }

    func recordRevocation(of sessionIDs: [UUID], userID: UUID, at instant: Date) async throws {
        guard !sessionIDs.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO revoked_sessions (session_id, user_id, revoked_at)
            SELECT unnest(\(sessionIDs)::uuid[]), \(userID), \(instant) ON CONFLICT DO NOTHING
            """, logger: logger)
    }
}
