import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres

/// Writes a rebuilt `MemoryLeaderboardStore` over the leaderboard's tables, inside the caller's transaction: the
/// directory and scores replaced, each board window at version 1 (replicas load what they read afresh), and the
/// windows already closed marked as published at that version, so they are not published again.
struct RebuildWriter {
    let connection: PostgresConnection
    let logger: Logger

    static let chunk = 20_000

    /// Returns the board windows and scores written.
    func write(_ store: MemoryLeaderboardStore) async throws -> (Int, Int) {
        try await connection.query(
            """
            TRUNCATE profiles, erased_users, groups, group_members, friendships, challenges, invitations, participants, boards, scores
            """, logger: logger)

        let profiles = Array(store.profiles.values)
        for part in profiles.chunked(Self.chunk) {
            try await connection.query(
                """
                INSERT INTO profiles (user_id, display_name, avatar_url, time_zone)
                SELECT u, n, NULLIF(a, ''), z FROM unnest(\(part.map(\.userID)), \(part.map(\.displayName)), \(part.map { $0.avatarURL ?? "" }),
                    \(part.map(\.timeZone))) AS t(u, n, a, z)
                """, logger: logger)
        }
        for part in Array(store.erased).chunked(Self.chunk) {
            try await connection.query("INSERT INTO erased_users (user_id) SELECT unnest(\(Array(part)))", logger: logger)
        }
        let groups = store.groups.map { (id: $0.key, name: $0.value.name, zone: $0.value.zone) }
        for part in groups.chunked(Self.chunk) {
            try await connection.query(
                """
                INSERT INTO groups (group_id, name, time_zone, next_time_zone, zone_changes_at)
                SELECT g, n, z, NULLIF(nz, ''), NULLIF(c, '')::timestamptz
                FROM unnest(\(part.map(\.id)), \(part.map(\.name)), \(part.map(\.zone.zone)), \(part.map { $0.zone.nextZone ?? "" }),
                    \(part.map { $0.zone.changesAt.map(Timestamp.format) ?? "" })) AS t(g, n, z, nz, c)
                """, logger: logger)
        }
        try await insertPairs(store.members, into: "group_members (group_id, user_id)")
        try await insertPairs(store.friendships, into: "friendships (user_low, user_high)")
        try await insertPairs(store.invitations, into: "invitations (challenge_id, user_id)")
        try await insertPairs(store.participants, into: "participants (challenge_id, user_id)")
        let challenges = store.challenges.map { (id: $0.key, row: $0.value) }
        for part in challenges.chunked(Self.chunk) {
            try await connection.query(
                """
                INSERT INTO challenges (challenge_id, name, kind, visibility, owner_id, group_id, unit)
                SELECT c, n, k, v, NULLIF(o, '')::uuid, NULLIF(g, '')::uuid, NULLIF(u, '')
                FROM unnest(\(part.map(\.id)), \(part.map(\.row.name)), \(part.map(\.row.kind.rawValue)), \(part.map(\.row.visibility.rawValue)),
                    \(part.map { $0.row.ownerID?.key ?? "" }), \(part.map { $0.row.groupID?.key ?? "" }), \(part.map { $0.row.unit ?? "" }))
                    AS t(c, n, k, v, o, g, u)
                """, logger: logger)
        }

        let boardWindows = store.windows.flatMap { board, windows in windows.map { BoardWindow(board: board, window: $0) } }
        for part in boardWindows.chunked(Self.chunk) {
            try await connection.query(
                """
                INSERT INTO boards (board, window_key, version)
                SELECT b, w, 1 FROM unnest(\(part.map(\.board.key)), \(part.map(\.window.description))) AS t(b, w)
                """, logger: logger)
        }
        // In the primary key's order (board, window, user), which is also the order of `scores_changes` (every
        // version is 1): PostgreSQL's sorts for those two indexes find the rows sorted and pass over them once.
        let windowKeys = store.scores.keys.map { (board: $0.board.key, window: $0.window.description, key: $0) }.sorted {
            $0.board != $1.board ? $0.board.utf8.lexicographicallyPrecedes($1.board.utf8) : $0.window.utf8.lexicographicallyPrecedes($1.window.utf8)
        }
        let scores = windowKeys.flatMap { board, window, key in
            store.scores[key, default: [:]].sorted { $0.key.precedesInByteOrder($1.key) }.map { [board, window, $0.key.key, "\($0.value)", "1"] as [String?] }
        }
        try await connection.withIndexesRebuilt(on: "scores", logger: logger) {
            try await connection.copy(scores, into: "scores", columns: ["board", "window_key", "user_id", "score", "version"], logger: logger)
        }
        try await connection.query("UPDATE closed_windows SET board_version = 1", logger: logger)
        return (boardWindows.count, scores.count)
    }

    private func insertPairs(_ pairs: Set<MemoryLeaderboardStore.Pair>, into table: String) async throws {
        for part in Array(pairs).chunked(Self.chunk) {
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO \(table) SELECT a, b FROM unnest($1::uuid[], $2::uuid[]) AS t(a, b)",
                    binds: try Self.binds(part.map(\.first), part.map(\.second))), logger: logger)
        }
    }

    private static func binds(_ first: [UUID], _ second: [UUID]) throws -> PostgresBindings {
        var bindings = PostgresBindings()
        try bindings.append(first)
        try bindings.append(second)
        return bindings
    }
}

extension Array {
    /// The array in consecutive pieces of at most `size` elements.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
