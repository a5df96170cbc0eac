import Foundation
import LeaderboardDomain
#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgresNIO
import SurgePostgres
import Synchronization

/// The standings of board windows in memory, one `RankIndex` each, caught up from the rows changed in PostgreSQL
/// since the version it holds. While the change feed is listened to, a read catches up only when a notice said its
/// board window changed (no round trip otherwise); without the feed, before every read (one indexed lookup when
/// nothing changed). Either way a read reflects every event any replica has committed and been told of, and
/// replicas need not divide boards between them.
final class BoardCache: Sendable {
    private struct Cached {
        var index = RankIndex()
        var version: Int64 = 0
        /// The count of change notices this holds everything up to.
        var notice = 0
    }

    private struct State {
        var boards: [BoardWindow: Cached] = [:]
        /// Change notices per board window, counted since the feed was (re)joined.
        var notices: [BoardWindow: Int] = [:]
        /// Bumped when the feed is joined or lost: a catch-up begun before does not make a window trusted.
        var epoch = 0
        var trusted = false

        /// Whether the held window may be read without asking PostgreSQL.
        func isCurrent(_ boardWindow: BoardWindow) -> Bool {
            guard trusted, let cached = boards[boardWindow] else { return false }
            return cached.notice == notices[boardWindow, default: 0]
        }

        /// After a catch-up that began with `notice` notices seen: the window is current up to those, unless the
        /// feed was joined or lost meanwhile.
        mutating func noteCaughtUp(_ boardWindow: BoardWindow, through notice: Int, epoch: Int) {
            guard epoch == self.epoch, var cached = boards[boardWindow] else { return }
            cached.notice = max(cached.notice, notice)
            boards[boardWindow] = cached
        }
    }

    private let state = Mutex(State())
    let client: PostgresClient
    let logger: Logger

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Runs `body` on the board window's standings, caught up with every committed change.
    func read<T>(_ boardWindow: BoardWindow, _ body: (inout RankIndex) -> T) async throws -> T {
        if let result = state.withLock({ state -> T? in
            guard state.isCurrent(boardWindow) else { return nil }
            return body(&state.boards[boardWindow, default: Cached()].index)
        }) {
            return result
        }
        try await catchUp(boardWindow)
        return state.withLock { state in body(&state.boards[boardWindow, default: Cached()].index) }
    }

    /// What the replica holds of the window now, without catching up (unless it holds nothing of it yet): for a
    /// computation inside a transaction that holds the window's row lock, where a round trip would lengthen the wait
    /// of every other change of the board. What it misses is at most what committed since the last catch-up.
    func readHeld<T>(_ boardWindow: BoardWindow, _ body: (inout RankIndex) -> T) async throws -> T {
        if let result = state.withLock({ state -> T? in
            guard state.boards[boardWindow] != nil else { return nil }
            return body(&state.boards[boardWindow, default: Cached()].index)
        }) {
            return result
        }
        return try await read(boardWindow, body)
    }

    /// Puts a score the caller's transaction has written, not yet committed, into the held standings, so the next
    /// event of the same batch ranks against it (the commit's notice later re-reads the row, with the same score). If
    /// the transaction rolls back, the user's entry is put back as it was.
    func applyUncommitted(_ boardWindow: BoardWindow, userID: UUID, score: Double) {
        let previous = state.withLock { state -> RankEntry?? in
            guard state.boards[boardWindow] != nil else { return nil }
            let entry = state.boards[boardWindow]?.index.entry(userID)
            state.boards[boardWindow]?.index.set(userID, score: score, name: entry?.name ?? "")
            return .some(entry)
        }
        guard let previous else { return }
        AfterCommit.current?.ifRolledBack { [self] in
            state.withLock { state in
                if let previous {
                    state.boards[boardWindow]?.index.set(userID, score: previous.score, name: previous.name)
                } else {
                    state.boards[boardWindow]?.index.remove(userID)
                }
            }
        }
    }

    func catchUp(_ boardWindow: BoardWindow) async throws {
        try await catchUp(board: boardWindow.board, windows: [boardWindow.window])
    }

    /// Catches up the board's windows that are not current, those already held in one round trip (a score change
    /// reads its standing in every window of its board first).
    func catchUp(board: Board, windows: [WindowKey]) async throws {
        // The notices seen before asking PostgreSQL: what it answers covers at least those.
        let (stale, epoch) = state.withLock { state in
            (windows.filter { !state.isCurrent(BoardWindow(board: board, window: $0)) }.map { window in
                let boardWindow = BoardWindow(board: board, window: window)
                return (window: window, held: state.boards[boardWindow]?.version, notice: state.notices[boardWindow, default: 0])
            }, state.epoch)
        }
        for (window, held, notice) in stale where held == nil {
            // Not held yet: the whole window in one snapshot, built in one pass.
            let boardWindow = BoardWindow(board: board, window: window)
            let (version, rows) = try await ScoreReader(client: client, logger: logger).rows(boardWindow)
            let index = RankIndex(rows)
            state.withLock { state in
                // Another read may have loaded or caught up further meanwhile: keep the newer.
                if (state.boards[boardWindow]?.version ?? -1) < version {
                    state.boards[boardWindow] = Cached(index: index, version: version, notice: -1)
                }
                state.noteCaughtUp(boardWindow, through: notice, epoch: epoch)
            }
        }
        let held = stale.compactMap { entry in entry.held.map { (entry.window, $0) } }
        guard !held.isEmpty else { return }
        let changed = try await ScoreReader(client: client, logger: logger).changes(on: board, after: held)
        state.withLock { state in
            for (window, held, notice) in stale where held != nil {
                let boardWindow = BoardWindow(board: board, window: window)
                guard let (version, changes) = changed[window] else { continue }
                var cached = state.boards.removeValue(forKey: boardWindow) ?? Cached()
                // Another read may have caught up further meanwhile: rows are absolute, so only newer ones apply.
                for change in changes where change.version > cached.version {
                    if change.removed {
                        cached.index.remove(change.userID)
                    } else {
                        cached.index.set(change.userID, score: change.score, name: change.name)
                    }
                }
                cached.version = max(cached.version, version)
                state.boards[boardWindow] = cached
                state.noteCaughtUp(boardWindow, through: notice, epoch: epoch)
            }
        }
    }

    /// A notice: the board window changed in PostgreSQL.
    func changed(_ boardWindow: BoardWindow) {
        state.withLock { $0.notices[boardWindow, default: 0] += 1 }
    }

    /// The feed is listened to from now on; what is held may have missed notices, so each window catches up once.
    func trustAfterReconnect() {
        state.withLock { state in
            state.epoch += 1
            state.notices.removeAll()
            for key in state.boards.keys { state.boards[key]?.notice = -1 }
            state.trusted = true
        }
    }

    /// The feed is lost: every read checks PostgreSQL until it is back.
    func distrust() {
        state.withLock { state in
            state.epoch += 1
            state.trusted = false
        }
    }

    /// Loads the given board windows (at start: the current ones), so the first reads are fast.
    func load(_ boardWindows: [BoardWindow]) async throws {
        for boardWindow in boardWindows { try await catchUp(boardWindow) }
        Self.releaseFreedMemory()
    }

    /// The windows of every board from yesterday to the day after tomorrow in the last zone to finish a day, listed by
    /// `client` and loaded through the cache's own: at start, so the first reads are fast.
    func loadCurrentWindows(listedBy client: PostgresClient, now: Date) async throws {
        let started = ContinuousClock.now
        let today = WindowCloser.lastZone.date(at: now)
        let windows = Set([-1, 0, 1, 2].flatMap { Windows.of(today.adding(days: $0)) })
        let boardWindows = try await ScoreReader(client: client, logger: logger).boardWindows(in: Array(windows))
        try await load(boardWindows)
        logger.info(
            "Boards loaded", metadata: ["windows": "\(boardWindows.count)", "entries": "\(entries)", "duration": "\(ContinuousClock.now - started)"])
    }

    /// Loading leaves freed rows and sort buffers in glibc's malloc arenas: `malloc_trim` hands those pages back to
    /// the system (looked up at run time: Swift's Glibc module leaves out malloc.h).
    private static func releaseFreedMemory() {
        #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> Int32
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }

    /// Forgets windows that are over, keeping memory to the current ones; they load again from PostgreSQL if read.
    func evict(where isOver: (WindowKey) -> Bool) {
        state.withLock { state in
            state.boards = state.boards.filter { !isOver($0.key.window) }
            state.notices = state.notices.filter { !isOver($0.key.window) }
        }
    }

    var entries: Int { state.withLock { $0.boards.values.reduce(0) { $0 + $1.index.count } } }
}
