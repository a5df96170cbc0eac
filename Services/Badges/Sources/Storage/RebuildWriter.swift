import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres

/// Writes a rebuilt `MemoryBadgeStore` into the badge service's tables, emptied by the caller inside its transaction.
struct RebuildWriter {
    let connection: PostgresConnection
    let logger: Logger

    func write(_ store: MemoryBadgeStore) async throws {
        try await connection.copy(store.users.lazy.map { [$0.key] }, into: "users", columns: ["user_id"], logger: logger)
        try await connection.copy(store.erased.lazy.map { [$0.key] }, into: "erased_users", columns: ["user_id"], logger: logger)
        try await connection.copy(Self.pairs(store.friendships), into: "friendships", columns: ["user_low", "user_high"], logger: logger)
        try await connection.copy(Self.pairs(store.members), into: "group_members", columns: ["group_id", "user_id"], logger: logger)
        try await connection.copy(Self.pairs(store.participants), into: "participants", columns: ["challenge_id", "user_id"], logger: logger)
        try await connection.copy(
            store.facts.lazy.map { [$0.key.userID.key, $0.key.fact.name, $0.key.fact.scope, String($0.value)] }, into: "facts",
            columns: ["user_id", "name", "scope", "value"], logger: logger)
        try await connection.copy(
            store.awards.lazy.map { key, row in
                [key.userID.key, key.badgeID, String(key.level), key.period, row.title, Timestamp.format(row.awardedAt), row.backfilled ? "t" : "f"]
            }, into: "awards", columns: ["user_id", "badge_id", "level", "period", "title", "awarded_at", "backfilled"], logger: logger)
        let challenges = try store.challenges.map { id, row -> [String?] in
            [
                id.key, String(row.version), row.kind.rawValue, String(decoding: try SurgeJSON.encode(row.badges), as: UTF8.self), row.visibility.rawValue,
                row.ownerID?.key, row.groupID?.key, row.deleted ? "t" : "f",
            ]
        }
        try await connection.copy(
            challenges, into: "challenges", columns: ["challenge_id", "version", "kind", "badges", "visibility", "owner_id", "group_id", "deleted"],
            logger: logger)
    }

    private static func pairs(_ pairs: Set<MemoryBadgeStore.Pair>) -> some Sequence<[String?]> {
        pairs.lazy.map { [$0.first.key, $0.second.key] }
    }
}
