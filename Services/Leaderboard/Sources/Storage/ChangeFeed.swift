import LeaderboardDomain
import Logging
import PostgresNIO
import SurgePostgres

/// How replicas learn that what they hold in memory changed: every transaction that changes a board window's
/// scores or the directory also sends a `NOTIFY` (delivered when it commits, in commit order), and each replica
/// listens. A read then trusts memory unless a notice said otherwise, so it makes no PostgreSQL round trip.
struct ChangeFeed {
    let connection: PostgresConnection
    let logger: Logger

    static let channel = "leaderboard_changes"
    /// The payload of a directory change (profiles, groups, members, friendships, challenges, participants).
    static let directoryNotice = "directory"

    /// Held (shared) by every running replica on its listening connection; a rebuild takes it exclusively, so it
    /// cannot run beside a replica.
    static let replicas = ReplicaLock("surge-leaderboard-replicas")

    func boardChanged(_ boardWindow: BoardWindow) async throws {
        try await connection.query("SELECT pg_notify(\(Self.channel), \(Self.notice(boardWindow)))", logger: logger)
    }

    func directoryChanged() async throws {
        try await connection.query("SELECT pg_notify(\(Self.channel), \(Self.directoryNotice))", logger: logger)
    }

    static func notice(_ boardWindow: BoardWindow) -> String { "board \(boardWindow.board.key) \(boardWindow.window.description)" }

    static func boardWindow(inNotice payload: String) -> BoardWindow? {
        let parts = payload.split(separator: " ")
        guard parts.count == 3, parts[0] == "board", let board = Board(key: String(parts[1])), let window = WindowKey(String(parts[2])) else {
            return nil
        }
        return BoardWindow(board: board, window: window)
    }
}

/// Listens on the change feed for the replica's caches, on the connection that holds the replica lock. Until it
/// listens (at start, and after a lost connection) the caches are not trusted: every read checks PostgreSQL, as it
/// would without the feed; when it listens again, everything held is treated as changed once.
enum ChangeListener {
    static func service(client: PostgresClient, boards: BoardCache, directory: DirectoryCache, logger: Logger) -> ReplicaPresence {
        ReplicaPresence(client: client, lock: ChangeFeed.replicas, logger: logger) { connection in
            defer {
                boards.distrust()
                directory.distrust()
            }
            try await connection.listen(on: ChangeFeed.channel) { notifications in
                boards.trustAfterReconnect()
                directory.trustAfterReconnect()
                logger.debug("Listening for leaderboard changes")
                for try await notification in notifications {
                    if notification.payload == ChangeFeed.directoryNotice {
                        directory.invalidateAll()
                    } else if let boardWindow = ChangeFeed.boardWindow(inNotice: notification.payload) {
                        boards.changed(boardWindow)
                    }
                }
            }
        } lost: { error in
            logger.warning("Change feed lost; reads check PostgreSQL until it is back", metadata: ["error": "\(error)"])
        }
    }
}
