import Foundation
import LeaderboardDomain
#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgresNIO
import Synchronization

/// The standings of board windows in memory, one `RankIndex` each. Every read first catches up with the rows
/// changed in PostgreSQL since the version it holds (one indexed lookup when nothing changed), so a read reflects
/// every event any replica has consumed, and replicas need not divide boards between them.
final class BoardCache: Sendable {
    private struct Cached {
        var index = RankIndex()
        var version: Int64 = 0
    }

    private let boards = Mutex<[BoardWindow: Cached]>([:])
    let client: PostgresClient
    let logger: Logger

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Runs `body` on the board window's standings, caught up with every committed change.
    func read<T>(_ boardWindow: BoardWindow, _ body: (inout RankIndex) -> T) async throws -> T {
        try await catchUp(boardWindow)
        return boards.withLock { boards in body(&boards[boardWindow, default: Cached()].index) }
    }

    func catchUp(_ boardWindow: BoardWindow) async throws {
        guard let held = boards.withLock({ $0[boardWindow]?.version }) else {
            // Not held yet: the whole window in one snapshot, built in one pass.
            let (version, rows) = try await ScoreStore.rows(boardWindow, client: client, logger: logger)
            let index = RankIndex(rows)
            boards.withLock { boards in
                // Another read may have loaded or caught up further meanwhile: keep the newer.
                if (boards[boardWindow]?.version ?? -1) < version { boards[boardWindow] = Cached(index: index, version: version) }
            }
            return
        }
        let (version, changes) = try await ScoreStore.changes(boardWindow, after: held, client: client, logger: logger)
        guard version > held else { return }
        boards.withLock { boards in
            var cached = boards.removeValue(forKey: boardWindow) ?? Cached()
            // Another read may have caught up further meanwhile: rows are absolute, so only newer ones apply.
            for change in changes where change.version > cached.version {
                if change.removed {
                    cached.index.remove(change.userID)
                } else {
                    cached.index.set(change.userID, score: change.score, name: change.name)
                }
            }
            cached.version = max(cached.version, version)
            boards[boardWindow] = cached
        }
    }

    /// Loads the given board windows (at start: the current ones), so the first reads are fast.
    func load(_ boardWindows: [BoardWindow]) async throws {
        for boardWindow in boardWindows { try await catchUp(boardWindow) }
        Self.releaseFreedMemory()
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
        boards.withLock { boards in boards = boards.filter { !isOver($0.key.window) } }
    }

    var entries: Int { boards.withLock { $0.values.reduce(0) { $0 + $1.index.count } } }
}
