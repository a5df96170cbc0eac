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
        for (boardWindow, version) in try await client.withConnection { try await ClosedWindows(connection: $0, logger: logger).unpublished() } {
            let calendar = try await calendar(of: boardWindow.board, window: boardWindow.window)
            guard let bounds = boardWindow.window.bounds(in: calendar), bounds.end <= now else { continue }
            try await close(boardWindow, bounds: bounds, version: version, now: now)
        }
        cache.evict { window in
            guard let dates = window.dates else { return false }
            return dates.upperBound < Self.lastZone.date(at: now).adding(days: -1)
        }
    }

    private func calendar(of board: Board, window: WindowKey) async throws -> LocalCalendar {
        guard board.kind == .group else { return Self.lastZone }
        let zone = try await client.withConnection { try await DirectoryStore(connection: $0, logger: logger).groupZone(board.subjectID) }
        return (zone ?? GroupZone(zone: "UTC")).calendar(for: window)
    }

    private func close(_ boardWindow: BoardWindow, bounds: (start: Date, end: Date), version: Int64, now: Date) async throws {
        let (standings, winners, participants) = try await cache.read(boardWindow) { index -> ([Standing], [UUID], Int) in
            let top = index.rankedEntries(from: 0, limit: Self.standingsShown).map { Standing(userID: $0.entry.userID, rank: $0.rank, score: $0.entry.score) }
            return (top, index.leaders.map(\.userID), index.count)
        }
        try await client.transaction(logger: logger) { connection in
            guard let revision = try await ClosedWindows(connection: connection, logger: logger).close(boardWindow, version: version, at: now)
            else { return }
            try await outbox.append(
                WindowClosed(
                    board: boardWindow.board.key, scope: boardWindow.board.scope, subjectID: boardWindow.board.subjectID,
                    window: boardWindow.window.description, startsAt: bounds.start, endsAt: bounds.end, revision: revision,
                    participants: participants, winners: winners, standings: standings, closedAt: now),
                on: connection, at: now, logger: logger)
        }
    }
}
