import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres

/// Applies score changes to boards' windows and says whom each moved past: a `RankChanged` for the user on each
/// window where their rank actually changed, and one `StandingChanged` with the user's new score and rank in every
/// window, written to the outbox in the same transaction.
///
/// Inside a transaction (a consumer batch) the changes are gathered and written when its body ends
/// (`BeforeCommit`): every board window's bump and every score in one statement, every event in one insert, so a
/// batch pays the round trips of one change. Each change still ranks against the ones before it in the batch, none
/// committed (`BoardCache.applyUncommitted`).
struct Scoring: Sendable {
    let cache: BoardCache
    let outbox: Outbox
    static let namedUsers = 20

    struct Change: Sendable {
        var delta: Double
        var userID: UUID
        var board: Board
        var windows: [WindowKey]
        var time: Date
        var trace: TraceContext?
    }

    func apply(
        _ delta: Double, userID: UUID, board: Board, windows: [WindowKey], at time: Date, trace: TraceContext?, connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let change = Change(delta: delta, userID: userID, board: board, windows: windows, time: time, trace: trace)
        try await BeforeCommit.gather(change, on: connection, logger: logger) { [self] changes, connection, logger in
            try await write(changes, connection: connection, logger: logger)
        }
    }

    /// Writes the changes the transaction has gathered so far: before a statement of it that reads or changes scores.
    func flush(connection: PostgresConnection, logger: Logger) async throws {
        try await BeforeCommit.writeGathered(Change.self, on: connection, logger: logger)
    }

    func write(_ changes: [Change], connection: PostgresConnection, logger: Logger) async throws {
        guard !changes.isEmpty else { return }
        var windowsByBoard: [Board: [WindowKey]] = [:]
        var totals: [ScoreKey: Double] = [:]
        for change in changes {
            for window in change.windows {
                if !(windowsByBoard[change.board]?.contains(window) ?? false) { windowsByBoard[change.board, default: []].append(window) }
                totals[ScoreKey(BoardWindow(board: change.board, window: window), change.userID), default: 0] += change.delta
            }
        }
        for (board, windows) in windowsByBoard { try await cache.catchUp(board: board, windows: windows) }
        let scores = try await ScoreStore(connection: connection, logger: logger).add(totals)
        // What each change left its user with: the score written, less the changes after it in the batch.
        var later: [ScoreKey: Double] = [:]
        var after: [[Double?]] = []
        for change in changes.reversed() {
            after.append(change.windows.map { window in
                let key = ScoreKey(BoardWindow(board: change.board, window: window), change.userID)
                defer { later[key, default: 0] += change.delta }
                return scores[key].map { $0 - later[key, default: 0] }
            })
        }
        var events: [(EventRecord, topic: String)] = []
        for (change, scores) in zip(changes, after.reversed()) {
            events += try await rankEvents(change, scores: scores)
        }
        // One insert for all of them: the board windows are locked until commit.
        guard !events.isEmpty else { return }
        try await outbox.append(events, on: connection, logger: logger)
    }

    /// The change's events, ranked against what this replica holds (caught up before the windows were locked, so it
    /// misses at most what committed since), which it then enters, so later changes of the batch rank against it.
    private func rankEvents(_ change: Change, scores: [Double?]) async throws -> [(EventRecord, topic: String)] {
        let (userID, board) = (change.userID, change.board)
        var standings: [StandingChanged.WindowStanding] = []
        var events: [(EventRecord, topic: String)] = []
        for (window, score) in zip(change.windows, scores) {
            guard let score else { continue }
            let boardWindow = BoardWindow(board: board, window: window)
            let (previous, moved) = try await cache.readHeld(boardWindow) { index in
                let previous = index.standing(of: userID)
                return (previous, index.move(userID, from: previous, to: score, naming: Self.namedUsers))
            }
            cache.applyUncommitted(boardWindow, userID: userID, score: score)
            if let rank = moved?.rank ?? previous.rank { standings.append(.init(window: window.description, rank: rank, score: score)) }
            guard let moved else { continue }
            events.append(try outbox.record(
                RankChanged(
                    board: board.key, scope: board.scope, subjectID: board.subjectID, window: window.description, userID: userID,
                    previousRank: previous.rank, rank: moved.rank, score: score, overtook: moved.overtook, overtakenBy: moved.overtakenBy,
                    changedAt: change.time),
                at: change.time, trace: change.trace))
        }
        if !standings.isEmpty {
            events.append(try outbox.record(
                StandingChanged(board: board.key, scope: board.scope, subjectID: board.subjectID, userID: userID, windows: standings, changedAt: change.time),
                at: change.time, trace: change.trace))
        }
        return events
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
