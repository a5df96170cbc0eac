import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeContracts

/// Scores of board windows in PostgreSQL, the source of truth every replica's in-memory standings catch up from.
/// Every change bumps its board window's `version` and stamps the changed rows with it: the row lock on `boards`
/// makes versions follow commit order, so a replica that has applied version v has seen every change up to v. Each
/// change also sends the board window's notice on the `ChangeFeed`.
struct ScoreStore {
    let connection: PostgresConnection
    let logger: Logger

    /// Adds each delta to its user's score on its board window; returns the new scores.
    ///
    /// One statement for all of them: the bumps take the board windows' row locks, which every change of the same
    /// board waits on until commit, so the less the transaction does after them the more changes a board takes a
    /// second. Every change locks its windows in one order (by board, then window), so two never deadlock.
    func add(_ deltas: [ScoreKey: Double]) async throws -> [ScoreKey: Double] {
        let windows = Set(deltas.keys.map(\.boardWindow)).sorted { ($0.board.key, $0.window.description) < ($1.board.key, $1.window.description) }
        let users = Array(deltas)
        let rows = try await connection.query(
            """
            WITH bumped AS (
                INSERT INTO boards (board, window_key, version)
                SELECT w.board, w.key, 1
                FROM unnest(\(windows.map(\.board.key))::text[], \(windows.map(\.window.description))::text[]) WITH ORDINALITY AS w (board, key, position)
                ORDER BY w.position
                ON CONFLICT (board, window_key) DO UPDATE SET version = boards.version + 1
                RETURNING board, window_key, version
            ), notified AS (
                SELECT pg_notify(\(ChangeFeed.channel), notice) FROM unnest(\(windows.map(ChangeFeed.notice))::text[]) AS n (notice)
            ), scored AS (
                INSERT INTO scores (board, window_key, user_id, score, version)
                SELECT d.board, d.key, d.user_id, d.delta, b.version
                FROM unnest(
                    \(users.map(\.key.boardWindow.board.key))::text[], \(users.map(\.key.boardWindow.window.description))::text[],
                    \(users.map(\.key.userID))::uuid[], \(users.map(\.value))::float8[]
                ) AS d (board, key, user_id, delta)
                JOIN bumped b ON b.board = d.board AND b.window_key = d.key
                WHERE NOT EXISTS (SELECT 1 FROM erased_users e WHERE e.user_id = d.user_id)
                ON CONFLICT (board, window_key, user_id) DO UPDATE
                SET score = CASE WHEN scores.removed THEN EXCLUDED.score ELSE scores.score + EXCLUDED.score END,
                    removed = false, version = EXCLUDED.version
                RETURNING board, window_key, user_id, score
            )
            SELECT board, window_key, user_id, score, (SELECT count(*) FROM notified) FROM scored
            """, logger: logger)
        var scores: [ScoreKey: Double] = [:]
        for try await (key, windowKey, userID, score, _) in rows.decode((String, String, UUID, Double, Int64).self) {
            guard let board = Board(key: key), let window = WindowKey(windowKey) else { continue }
            scores[ScoreKey(BoardWindow(board: board, window: window), userID)] = score
        }
        return scores
    }

    /// Takes the user off the board's windows (those given, or every one it has): a tombstone, so replicas remove them.
    func remove(_ userID: UUID, from board: Board, windows: [WindowKey]? = nil) async throws {
        var keys = windows?.map(\.description) ?? []
        if windows == nil {
            keys = try await connection.query("SELECT window_key FROM boards WHERE board = \(board.key)", logger: logger)
                .collect().map { try $0.decode(String.self) }
        }
        for key in keys {
            guard let window = WindowKey(key) else { continue }
            let version = try await bump(board, window)
            try await connection.query(
                """
                INSERT INTO scores (board, window_key, user_id, score, removed, version)
                VALUES (\(board.key), \(key), \(userID), 0, true, \(version))
                ON CONFLICT (board, window_key, user_id) DO UPDATE SET score = 0, removed = true, version = EXCLUDED.version
                """, logger: logger)
        }
    }

    /// Re-stamps every row of the user so replicas re-read it (a new display name moves them within ties).
    func touch(_ userID: UUID) async throws {
        let rows = try await connection.query(
            "SELECT board, window_key FROM scores WHERE user_id = \(userID) AND NOT removed", logger: logger
        ).collect().map { try $0.decode((String, String).self) }
        for (key, windowKey) in rows {
            guard let board = Board(key: key), let window = WindowKey(windowKey) else { continue }
            let version = try await bump(board, window)
            try await connection.query(
                "UPDATE scores SET version = \(version) WHERE board = \(key) AND window_key = \(windowKey) AND user_id = \(userID)", logger: logger)
        }
    }

    /// A deleted user leaves every board, current and past.
    func erase(_ userID: UUID) async throws {
        let rows = try await connection.query(
            "SELECT board, window_key FROM scores WHERE user_id = \(userID) AND NOT removed", logger: logger
        ).collect().map { try $0.decode((String, String).self) }
        for (key, windowKey) in rows {
            guard let board = Board(key: key), let window = WindowKey(windowKey) else { continue }
            try await remove(userID, from: board, windows: [window])
        }
    }

    private func bump(_ board: Board, _ window: WindowKey) async throws -> Int64 {
        let rows = try await connection.query(
            """
            INSERT INTO boards (board, window_key, version) VALUES (\(board.key), \(window.description), 1)
            ON CONFLICT (board, window_key) DO UPDATE SET version = boards.version + 1
            RETURNING version
            """, logger: logger)
        var version: Int64 = 0
        for try await bumped in rows.decode(Int64.self) { version = bumped }
        try await ChangeFeed(connection: connection, logger: logger).boardChanged(BoardWindow(board: board, window: window))
        return version
    }

}

/// What replicas read of the scores to catch up, on pooled connections.
struct ScoreReader {
    let client: PostgresClient
    let logger: Logger

    struct Change: Sendable {
        var userID: UUID
        var score: Double
        var removed: Bool
        var version: Int64
        var name: String
    }

    /// For each of the board's windows, its version and the rows changed after the version held up to it, read in one
    /// statement (one snapshot). A window without a row in `boards` has version 0 and no changes.
    ///
    /// Each window's rows are ordered by version so that PostgreSQL reads `scores_changes` from the held version on:
    /// without the order it often took the primary key, which has the same (board, window) prefix, and read every row
    /// of the window to keep a few.
    func changes(on board: Board, after held: [(WindowKey, Int64)]) async throws -> [WindowKey: (version: Int64, changes: [Change])] {
        let keys = held.map(\.0.description)
        let versions = held.map(\.1)
        var result = Dictionary(held.map { ($0.0, (version: Int64(0), changes: [Change]())) }, uniquingKeysWith: { first, _ in first })
        let rows = try await client.query(
            """
            SELECT w.key, b.version, s.user_id, s.score, s.removed, s.version, COALESCE(p.display_name, '')
            FROM unnest(\(keys)::text[], \(versions)::int8[]) AS w (key, held)
            JOIN boards b ON b.board = \(board.key) AND b.window_key = w.key
            LEFT JOIN LATERAL (
                SELECT user_id, score, removed, version FROM scores
                WHERE board = \(board.key) AND window_key = w.key AND version > w.held AND version <= b.version
                ORDER BY version
            ) s ON true
            LEFT JOIN profiles p ON p.user_id = s.user_id
            """, logger: logger)
        for try await (key, current, userID, score, removed, version, name) in rows.decode(
            (String, Int64, UUID?, Double?, Bool?, Int64?, String).self)
        {
            guard let window = WindowKey(key) else { continue }
            result[window, default: (0, [])].version = current
            guard let userID, let score, let removed, let version else { continue }
            result[window, default: (0, [])].changes.append(Change(userID: userID, score: score, removed: removed, version: version, name: name))
        }
        return result
    }

    /// The board window's version and every entry on it at that version, read in one snapshot (the rows counted
    /// first, so nothing grows while they arrive): a replica's first read of a window (at start, the whole board),
    /// which `RankIndex.init(_ rows:)` builds in one pass.
    func rows(_ boardWindow: BoardWindow) async throws -> (Int64, RankIndex.Rows) {
        try await client.withConnection { connection in
            try await connection.transaction(.snapshotReadOnly, logger: logger) {
                let (board, window) = (boardWindow.board.key, boardWindow.window.description)
                let version = try await connection.query(
                    "SELECT version FROM boards WHERE board = \(board) AND window_key = \(window)", logger: logger
                ).collect().first?.decode(Int64.self) ?? 0
                var rows = RankIndex.Rows()
                if version > 0 {
                    let count = try await connection.query(
                        "SELECT count(*) FROM scores WHERE board = \(board) AND window_key = \(window) AND NOT removed", logger: logger
                    ).collect().first?.decode(Int.self) ?? 0
                    rows = RankIndex.Rows(capacity: count)
                    let stream = try await connection.query(
                        """
                        SELECT s.user_id, s.score, COALESCE(p.display_name, '')
                        FROM scores s LEFT JOIN profiles p ON p.user_id = s.user_id
                        WHERE s.board = \(board) AND s.window_key = \(window) AND NOT s.removed
                        """, logger: logger)
                    for try await (userID, score, name) in stream.decode((UUID, Double, String).self) {
                        rows.append(userID, score: score, name: name)
                    }
                }
                return (version, rows)
            }
        }
    }

    /// Board windows that have scores, among the given window keys (to load at start).
    func boardWindows(in windows: [WindowKey]) async throws -> [BoardWindow] {
        let keys = windows.map(\.description)
        return try await client.query("SELECT board, window_key FROM boards WHERE window_key = ANY(\(keys))", logger: logger)
            .collect().compactMap { row in
                let (key, windowKey) = try row.decode((String, String).self)
                guard let board = Board(key: key), let window = WindowKey(windowKey) else { return nil }
                return BoardWindow(board: board, window: window)
            }
    }
}
