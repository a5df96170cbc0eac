import Foundation
import LeaderboardDomain
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeTestSupport
import Testing

@testable import LeaderboardService

/// Several score changes of one board in one transaction (a consumer batch), written together when its body ends: each
/// ranks against the ones before it, although none has committed; a batch that rolls back leaves the replica's
/// standings as they were; a removal later in the batch comes after the additions before it.
@Suite("Leaderboard: score changes batched in one transaction", .tags(.integration), .kind(.integration, needsDatabase: true))
struct BatchedScoringTests {
    let ana = UUID(), ben = UUID(), cy = UUID()
    let board = Board(.challenge, UUID())

    /// A cache of the routes' boards, the scoring that writes to it, and today's windows.
    private static func scoring(on routes: LeaderboardRoutes) -> (BoardCache, Scoring, [WindowKey]) {
        let cache = BoardCache(client: routes.database, logger: routes.logger)
        return (cache, Scoring(cache: cache, outbox: Outbox(service: "leaderboard")), Windows.of(LeaderboardRoutes.today))
    }

    @Test("the second and third change of one transaction rank against the first; a rolled-back change leaves no trace in memory")
    func batchRanksAgainstItself() async throws {
        try await LeaderboardRoutes.run { routes in
            try await routes.profiles([ana: "Ana", ben: "Ben", cy: "Cy"])
            let (cache, scoring, windows) = Self.scoring(on: routes)
            let (ana, ben, cy, board) = (self.ana, self.ben, self.cy, self.board)
            try await routes.record { connection, logger in
                for (points, userID) in [(10.0, ana), (20, ben), (15, ana)] {
                    try await scoring.apply(
                        points, userID: userID, board: board, windows: windows, at: LeaderboardRoutes.now, trace: nil, connection: connection,
                        logger: logger)
                }
            }
            let moves = try await routes.database.query(
                "SELECT payload::text FROM leaderboard.outbox WHERE type = 'surge.leaderboard.rank.changed.v1' ORDER BY position",
                logger: routes.logger
            ).collect().map { try SurgeJSON.decoder().decode(RankChanged.self, from: Data(try $0.decode(String.self).utf8)) }
                .filter { $0.window == "all-time" }
            #expect(moves.map(\.userID) == [ana, ben, ana])
            #expect(moves.map(\.rank) == [1, 1, 1])
            #expect(moves.map(\.score) == [10, 20, 25], "each change's own score, though the batch wrote Ana's 25 once")
            #expect(moves[1].overtook == [ana], "Ben passes Ana's uncommitted 10")
            #expect(moves[2].overtook == [ben], "Ana's 25 passes Ben's uncommitted 20")

            struct Abandoned: Error {}
            await #expect(throws: Abandoned.self) {
                try await routes.database.transaction(logger: routes.logger) { connection in
                    try await scoring.apply(
                        100, userID: cy, board: board, windows: windows, at: LeaderboardRoutes.now, trace: nil, connection: connection,
                        logger: routes.logger)
                    throw Abandoned()
                }
            }
            let allTime = BoardWindow(board: board, window: .allTime)
            #expect(try await cache.read(allTime) { $0.entry(cy) } == nil)
            #expect(try await cache.read(allTime) { [$0.rank(of: ana), $0.rank(of: ben)] } == [1, 2])
        }
    }

    @Test("points and then leaving the group in one batch: the member is off the board, not put back by the points written at its end")
    func removalAfterGatheredPoints() async throws {
        try await LeaderboardRoutes.run { routes in
            try await routes.profiles([ana: "Ana", ben: "Ben"])
            let (cache, scoring, windows) = Self.scoring(on: routes)
            let (ana, ben, board) = (self.ana, self.ben, Board(.group, UUID()))
            try await routes.record { connection, logger in
                let store = PostgresLeaderboardStore(connection: connection, logger: logger, scoring: scoring)
                try await store.addScore(5, for: ben, on: board, windows: windows, at: LeaderboardRoutes.now, trace: nil)
                try await store.addScore(10, for: ana, on: board, windows: windows, at: LeaderboardRoutes.now, trace: nil)
                try await store.removeScores(of: ana, from: board, windows: windows)
                try await store.addScore(2, for: ben, on: board, windows: windows, at: LeaderboardRoutes.now, trace: nil)
            }
            for window in windows {
                let held = try await cache.read(BoardWindow(board: board, window: window)) { [$0.entry(ana)?.score, $0.entry(ben)?.score] }
                #expect(held == [nil, 7], "\(window)")
            }
            let rows = try await routes.database.query(
                "SELECT user_id, score, removed FROM leaderboard.scores WHERE board = \(board.key) AND window_key = 'all-time'", logger: routes.logger
            ).collect().map { try $0.decode((UUID, Double, Bool).self) }
            #expect(Set(rows.map { "\($0.0 == ana ? "ana" : "ben") \($0.1) \($0.2)" }) == ["ana 0.0 true", "ben 7.0 false"])
        }
    }

    @Test("a deleted user's late points, in the batch that deletes them or a later one, put them on no board and rank nothing")
    func latePointsOfADeletedUser() async throws {
        try await LeaderboardRoutes.run { routes in
            try await routes.profiles([ana: "Ana", ben: "Ben"])
            let (cache, scoring, windows) = Self.scoring(on: routes)
            let (ana, ben, board) = (self.ana, self.ben, self.board)
            try await routes.record { connection, logger in
                let store = PostgresLeaderboardStore(connection: connection, logger: logger, scoring: scoring)
                try await store.addScore(5, for: ben, on: board, windows: windows, at: LeaderboardRoutes.now, trace: nil)
                try await store.addScore(10, for: ana, on: board, windows: windows, at: LeaderboardRoutes.now, trace: nil)
                try await store.erase(ana)
                try await store.addScore(3, for: ana, on: board, windows: windows, at: LeaderboardRoutes.now, trace: nil)
            }
            try await routes.record { connection, logger in
                let store = PostgresLeaderboardStore(connection: connection, logger: logger, scoring: scoring)
                try await store.addScore(4, for: ana, on: board, windows: windows, at: LeaderboardRoutes.now, trace: nil)
                try await store.addScore(1, for: ben, on: board, windows: windows, at: LeaderboardRoutes.now, trace: nil)
            }
            for window in windows {
                let held = try await cache.read(BoardWindow(board: board, window: window)) { [$0.entry(ana)?.score, $0.entry(ben)?.score] }
                #expect(held == [nil, 6], "\(window)")
            }
            func count(_ query: PostgresQuery) async throws -> Int {
                try await routes.database.query(query, logger: routes.logger).collect().first?.decode(Int.self) ?? -1
            }
            #expect(try await count("SELECT count(*)::int8 FROM leaderboard.scores WHERE user_id = \(ana) AND NOT removed") == 0)
            let mentioningAna = "%\(ana.uuidString)%"
            #expect(
                try await count("SELECT count(*)::int8 FROM leaderboard.outbox WHERE payload::text ILIKE \(mentioningAna)") == windows.count + 1,
                "her first points' rank change in each window and their standing change, before her deletion; nothing for her late points")
        }
    }
}
