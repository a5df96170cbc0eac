import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO

/// The board windows whose final standings were published (`WindowCloser`), each with the board version they showed and
/// how many times they were published.
struct ClosedWindows {
    let connection: PostgresConnection
    let logger: Logger

    /// Board windows other than all time whose standings were never published, or changed since, with their version.
    func unpublished() async throws -> [(boardWindow: BoardWindow, version: Int64)] {
        try await connection.query(
            """
            SELECT b.board, b.window_key, b.version FROM boards b LEFT JOIN closed_windows c USING (board, window_key)
            WHERE b.window_key <> 'all-time' AND (c.board IS NULL OR c.board_version < b.version)
            """, logger: logger
        ).collect().map { try $0.decode((String, String, Int64).self) }.compactMap { key, windowKey, version in
            guard let board = Board(key: key), let window = WindowKey(windowKey) else { return nil }
            return (BoardWindow(board: board, window: window), version)
        }
    }

    /// Records the board window closed at `version`; returns the revision to publish, or nil when it was already
    /// closed at that version or a later one.
    func close(_ boardWindow: BoardWindow, version: Int64, at now: Date) async throws -> Int? {
        try await connection.query(
            """
            INSERT INTO closed_windows (board, window_key, revision, board_version, closed_at)
            VALUES (\(boardWindow.board.key), \(boardWindow.window.description), 1, \(version), \(now))
            ON CONFLICT (board, window_key) DO UPDATE
            SET revision = closed_windows.revision + 1, board_version = EXCLUDED.board_version, closed_at = EXCLUDED.closed_at
            WHERE closed_windows.board_version < EXCLUDED.board_version
            RETURNING revision
            """, logger: logger
        ).collect().first?.decode(Int.self)
    }
}
