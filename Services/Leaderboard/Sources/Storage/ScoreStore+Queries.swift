import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO

/// What the public API reads of the scores besides the standings, which come from memory (`BoardCache`).
extension ScoreStore {
    /// The windows of the board that have scores, of every kind.
    func windows(of board: Board) async throws -> [WindowKey] {
        try await connection.query(
            "SELECT window_key FROM boards WHERE board = \(board.key)", logger: logger
        ).collect().compactMap { WindowKey(try $0.decode(String.self)) }
    }
}

extension ScoreReader {
    /// The user's score on every board window they are on, in board and window order.
    func scores(of userID: UUID) async throws -> [LeaderboardExport.Score] {
        let rows = try await client.query(
            "SELECT board, window_key, score FROM scores WHERE user_id = \(userID) AND NOT removed ORDER BY board, window_key", logger: logger)
        var scores: [LeaderboardExport.Score] = []
        for try await (board, window, score) in rows.decode((String, String, Double).self) {
            scores.append(.init(board: board, window: window, score: score))
        }
        return scores
    }
}
