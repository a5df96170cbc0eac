import Foundation
import Hummingbird
import Logging
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// Rankings per challenge, competition, group and friends, built only from the event stream. Scores are kept per
/// board window in PostgreSQL (history included); each replica holds the current windows in memory as `RankIndex`es
/// and catches up from PostgreSQL when the change feed says a window changed, so any replica answers any board.
public enum LeaderboardService {
    public static var api: [APIOperation] { LeaderboardAPI.all }

    struct Settings {
        var closeInterval: Duration
        /// Catch-up queries are short and never wait on anything else: a few connections serve every handler.
        var catchUpConnections = 4

        static func from(_ reader: EnvironmentReader) throws -> Settings {
            Settings(closeInterval: .milliseconds(try reader.int("WINDOW_CLOSE_INTERVAL_MS", default: 1000, range: 10...600_000)))
        }
    }

    /// `surge-leaderboard rebuild`: every board and the directory from the earliest offsets (`Rebuild`); returns its report.
    public static func rebuild(_ settings: ServiceSettings) async throws -> String {
        let infrastructure = try ServiceInfrastructure(settings, migrations: [LeaderboardMigrations.set])
        try await infrastructure.migrate()
        return try await Rebuild.run(settings, logger: infrastructure.logger).description
    }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let leaderboard = try Settings.from(settings.reader)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [LeaderboardMigrations.set])
        let logger = infrastructure.logger
        // A board window is caught up inside consumer transactions, each holding a connection of the main pool while
        // every partition's handler runs at once: catch-ups get a pool of their own, or handlers waiting for a second
        // connection could hold every connection of the pool they wait on.
        var catchUpDatabase = settings.database
        catchUpDatabase.maximumConnections = leaderboard.catchUpConnections
        let catchUps = catchUpDatabase.makeClient(
            schema: settings.service, logger: logger,
            metrics: PoolMetrics(pool: "catch-up", maximumConnections: leaderboard.catchUpConnections))
        let cache = BoardCache(client: catchUps, logger: logger)
        let directory = DirectoryCache()
        let scoring = Scoring(cache: cache, outbox: infrastructure.outbox)
        var routes = ConsumerRoutes { connection, logger in PostgresLeaderboardStore(connection: connection, logger: logger, scoring: scoring) }
        LeaderboardEvents.visit(&routes)
        let consumer = try infrastructure.consumer(routes.handlers)
        let router = infrastructure.makeRouter(consumers: [consumer])
        let clock = infrastructure.clock
        addRoutes(to: router, queries: BoardQueries(client: infrastructure.database, cache: cache, directory: directory, clock: clock, logger: logger))
        let closer = WindowCloser(client: infrastructure.database, cache: cache, outbox: infrastructure.outbox, logger: logger)
        return infrastructure.makeApplication(
            router: router, databases: [catchUps], consumers: [consumer],
            services: [
                ChangeListener.service(client: infrastructure.database, boards: cache, directory: directory, logger: logger),
                PeriodicService("window-closer", every: leaderboard.closeInterval, logger: logger) { try await closer.closeDue(now: clock.now()) },
            ],
            // Not listening (so not ready) until the current windows are in memory.
            beforeServerStarts: [{ try await cache.loadCurrentWindows(listedBy: infrastructure.database, now: clock.now()) }])
    }

    static func addRoutes(to router: Router<SurgeRequestContext>, queries: BoardQueries) {
        BoardsController(queries: queries).addRoutes(to: router)
    }
}
