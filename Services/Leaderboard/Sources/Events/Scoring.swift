import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging

/// Applies a score change to a board's windows and says whom it moved past: a `RankChanged` for the user on each
/// window where their rank actually changed, and one `StandingChanged` with the user's new score and rank in every
/// window, written to the outbox in the same transaction. Several events are applied in one transaction (a consumer
/// batch): each change enters the replica's standings at once (`BoardCache.applyUncommitted`), so the next ranks
/// against it.
struct Scoring: Sendable {
    let cache: BoardCache
    let outbox: Outbox
    static let namedUsers = 20

    func apply(
        _ delta: Double, userID: UUID, board: Board, windows: [WindowKey], at time: Date, trace: TraceContext?, connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await cache.catchUp(board: board, windows: windows)
        var before: [WindowKey: RankIndex.Standing] = [:]
        for window in windows {
            before[window] = try await cache.read(BoardWindow(board: board, window: window)) { $0.standing(of: userID) }
        }
        let scores = try await ScoreStore.add(delta, for: userID, on: board, windows: windows, connection: connection, logger: logger)
        var standings: [StandingChanged.WindowStanding] = []
        var events: [(EventRecord, topic: String)] = []
        for window in windows {
            guard let score = scores[window], let previous = before[window] else { continue }
            // The windows are locked now: the ranks come from what this replica holds, caught up just above.
            let moved = try await cache.readHeld(BoardWindow(board: board, window: window)) {
                $0.move(userID, from: previous, to: score, naming: Self.namedUsers)
            }
            // Later events of the same batch rank against this change.
            cache.applyUncommitted(BoardWindow(board: board, window: window), userID: userID, score: score)
            if let rank = moved?.rank ?? previous.rank { standings.append(.init(window: window.description, rank: rank, score: score)) }
            guard let moved else { continue }
            events.append(try outbox.record(
                RankChanged(
                    board: board.key, scope: board.scope, subjectID: board.subjectID, window: window.description, userID: userID,
                    previousRank: previous.rank, rank: moved.rank, score: score, overtook: moved.overtook, overtakenBy: moved.overtakenBy,
                    changedAt: time),
                at: time, trace: trace))
        }
        if !standings.isEmpty {
            events.append(try outbox.record(
                StandingChanged(board: board.key, scope: board.scope, subjectID: board.subjectID, userID: userID, windows: standings, changedAt: time),
                at: time, trace: trace))
        }
        // One insert for all of them: the board windows are locked until commit.
        guard !events.isEmpty else { return }
        try await outbox.append(events, on: connection, logger: logger)
    }
}

extension RankIndex {
    struct Standing: Sendable {
        var rank: Int?
        var score: Double?
    }

    struct Move: Sendable, Equatable {
        var rank: Int
        var overtook: [UUID]
        var overtakenBy: [UUID]
    }

    func standing(of userID: UUID) -> Standing {
        Standing(rank: rank(of: userID), score: entry(userID)?.score)
    }

    /// The winners: every entry ranked first, when that score is above zero.
    var leaders: [RankEntry] {
        guard let best = topScore, best > 0 else { return [] }
        return entries(from: 0, limit: count(atLeast: best))
    }

    /// Entries with a score of at least `score`.
    private func count(atLeast score: Double) -> Int { rank(forScore: score.nextDown) - 1 }
    /// Entries with a score above `score`.
    private func count(above score: Double) -> Int { rank(forScore: score) - 1 }

    /// The user's rank had their score gone from `previous` to `score` (the index still holds `previous`), and who
    /// they passed or who passed them (entering a board above others passes them); nil when the rank stays the same.
    func move(_ userID: UUID, from previous: Standing, to score: Double, naming limit: Int) -> Move? {
        let selfAbove = (previous.score ?? -.infinity) > score ? 1 : 0
        let rank = count(above: score) - selfAbove + 1
        guard rank != previous.rank else { return nil }
        func users(_ range: Range<Int>) -> [UUID] {
            guard !range.isEmpty else { return [] }
            return entries(from: range.lowerBound, limit: min(range.count, limit + 1)).map(\.userID).filter { $0 != userID }.prefix(limit).map { $0 }
        }
        guard let old = previous.score else {
            // A newcomer passes everyone already on the board below their first score.
            return Move(rank: rank, overtook: users(min(count(atLeast: score), count)..<count), overtakenBy: [])
        }
        if score > old {
            // Those at or ahead of the old score and now below the new one.
            return Move(rank: rank, overtook: users(count(atLeast: score)..<count(atLeast: old)), overtakenBy: [])
        }
        // Those at or behind the old score and now above the new one.
        return Move(rank: rank, overtook: [], overtakenBy: users(count(above: old)..<count(above: score)))
    }
}
