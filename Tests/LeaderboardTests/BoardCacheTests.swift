import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeTestSupport
import Testing

@testable import LeaderboardService

@Suite("Leaderboard: standings caught up from PostgreSQL", .tags(.integration), .kind(.integration, needsDatabase: true))
struct BoardCacheTests {
    let board = Board(.challenge, UUID())
    let day = LocalDate("2026-11-18")!
    let ana = UUID(), ben = UUID(), cy = UUID()

    func withDatabase(_ body: @Sendable (PostgresClient, Logger) async throws -> Void) async throws {
        try await withTestDatabase(services: ["leaderboard"]) { testDatabase in
            let logger = Logger.test("leaderboard")
            let database = testDatabase.configuration(for: "leaderboard").makeClient(schema: "leaderboard", logger: logger)
            try await PostgresClient.withRunning(database) { database in
                try await Migrator.migrate([MessagingMigrations.set, LeaderboardMigrations.set], schema: "leaderboard", client: database, logger: logger)
                try await body(database, logger)
            }
        }
    }

    func add(_ points: Double, _ userID: UUID, windows: [WindowKey], _ database: PostgresClient, _ logger: Logger) async throws {
        try await database.transaction(logger: logger) { connection in
            let deltas = windows.map { (ScoreKey(BoardWindow(board: board, window: $0), userID), points) }
            _ = try await ScoreStore(connection: connection, logger: logger).add(Dictionary(uniqueKeysWithValues: deltas))
        }
    }

    @Test("one statement reads each window's version and only the rows changed after the version held; a window never scored is version 0")
    func changesAfterHeldVersions() async throws {
        let (board, day, ana, ben) = (board, day, ana, ben)
        try await withDatabase { database, logger in
            let week = WindowKey.week(containing: day), month = WindowKey.month(containing: day)
            try await add(10, ana, windows: [week, month], database, logger)
            try await add(5, ben, windows: [week], database, logger)
            try await add(3, ana, windows: [week], database, logger)
            let changed = try await ScoreReader(client: database, logger: logger).changes(on: board, after: [(week, 1), (month, 0), (.allTime, 0)])
            #expect(changed[week]?.version == 3)
            #expect(changed[week]?.changes.map(\.userID) == [ben, ana])
            #expect(changed[week]?.changes.map(\.score) == [5, 13])
            #expect(changed[month]?.version == 1)
            #expect(changed[month]?.changes.map(\.userID) == [ana])
            #expect(changed[.allTime]?.version == 0)
            #expect(changed[.allTime]?.changes.isEmpty == true)
            let current = try await ScoreReader(client: database, logger: logger).changes(on: board, after: [(week, 3)])
            #expect(current[week]?.version == 3 && current[week]?.changes.isEmpty == true)
        }
    }

    @Test("a board's windows caught up together hold what a fresh load of each holds, removals included")
    func catchUpTogetherEqualsFreshLoad() async throws {
        let (board, day, ana, ben, cy) = (board, day, ana, ben, cy)
        try await withDatabase { database, logger in
            let windows = [WindowKey.week(containing: day), .month(containing: day), .allTime]
            let cache = BoardCache(client: database, logger: logger)
            try await add(10, ana, windows: windows, database, logger)
            try await cache.catchUp(board: board, windows: windows)
            try await add(20, ben, windows: windows, database, logger)
            try await add(15, cy, windows: Array(windows.dropFirst()), database, logger)
            try await add(-10, ana, windows: [windows[0]], database, logger)
            try await database.transaction(logger: logger) { connection in
                try await ScoreStore(connection: connection, logger: logger).remove(ben, from: board, windows: [windows[1]])
            }
            try await cache.catchUp(board: board, windows: windows)
            let fresh = BoardCache(client: database, logger: logger)
            for window in windows {
                let boardWindow = BoardWindow(board: board, window: window)
                let held = try await cache.readHeld(boardWindow) { $0.entries(from: 0, limit: 10) }
                let loaded = try await fresh.read(boardWindow) { $0.entries(from: 0, limit: 10) }
                #expect(held == loaded, "\(window)")
            }
            let month = try await cache.readHeld(BoardWindow(board: board, window: windows[1])) { $0.entries(from: 0, limit: 10).map(\.userID) }
            #expect(month == [cy, ana])
        }
    }
}
