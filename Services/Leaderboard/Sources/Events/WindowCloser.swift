import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeMessaging
import SurgePostgres

/// Publishes each week's and month's final standings once the window is over: a group's at the end of its last day
/// in the group's zone, a challenge's once that day is over in every zone (UTC−12). A late change to a closed window
/// (a check-in accepted in its day's grace window) publishes it again with the next revision.
struct WindowCloser: Sendable {
    let client: PostgresClient
    let cache: BoardCache
    let outbox: Outbox
    let logger: Logger
    static let standingsShown = 10
    /// The last zone on Earth to finish a day.
    static let lastZone = LocalCalendar(zoneNamedOrUTC: "Etc/GMT+12")

    func closeDue(now: Date) async throws {
        let open = try await client.query(
            """
            SELECT b.board, b.window_key, b.version FROM boards b LEFT JOIN closed_windows c USING (board, window_key)
            WHERE b.window_key <> 'all-time' AND (c.board IS NULL OR c.board_version < b.version)
            """, logger: logger
        ).collect().map { try $0.decode((String, String, Int64).self) }
        for (key, windowKey, version) in open {
            guard let board = Board(key: key), let window = WindowKey(windowKey) else { continue }
            let calendar = try await calendar(of: board, window: window)
            guard let bounds = window.bounds(in: calendar), bounds.end <= now else { continue }
            try await close(BoardWindow(board: board, window: window), bounds: bounds, version: version, now: now)
        }
        cache.evict { window in
            guard let dates = window.dates else { return false }
            return dates.upperBound < Self.lastZone.date(at: now).adding(days: -1)
        }
    }

    private func calendar(of board: Board, window: WindowKey) async throws -> LocalCalendar {
        guard board.kind == .group else { return Self.lastZone }
        let zone = try await client.withConnection { try await Directory.groupZone(board.subjectID, on: $0, logger: logger) }
        return (zone ?? GroupZone(zone: "UTC")).calendar(for: window)
    }

    private func close(_ boardWindow: BoardWindow, bounds: (start: Date, end: Date), version: Int64, now: Date) async throws {
        let (standings, winners, participants) = try await cache.read(boardWindow) { index -> ([Standing], [UUID], Int) in
            let top = index.rankedEntries(from: 0, limit: Self.standingsShown).map { Standing(userID: $0.entry.userID, rank: $0.rank, score: $0.entry.score) }
            return (top, index.leaders.map(\.userID), index.count)
        }
        try await client.transaction(logger: logger) { connection in
            let revision = try await connection.query(
                """
                INSERT INTO closed_windows (board, window_key, revision, board_version, closed_at)
                VALUES (\(boardWindow.board.key), \(boardWindow.window.description), 1, \(version), \(now))
                ON CONFLICT (board, window_key) DO UPDATE
                SET revision = closed_windows.revision + 1, board_version = EXCLUDED.board_version, closed_at = EXCLUDED.closed_at
                WHERE closed_windows.board_version < EXCLUDED.board_version
                RETURNING revision
                """, logger: logger
            ).collect().first?.decode(Int.self)
            guard let revision else { return }
            try await outbox.append(
                WindowClosed(
                    board: boardWindow.board.key, scope: boardWindow.board.scope, subjectID: boardWindow.board.subjectID,
                    window: boardWindow.window.description, startsAt: bounds.start, endsAt: bounds.end, revision: revision,
                    participants: participants, winners: winners, standings: standings, closedAt: now),
                on: connection, at: now, logger: logger)
        }
    }
}
