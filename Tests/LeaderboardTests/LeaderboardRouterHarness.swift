import Foundation
import Hummingbird
import HummingbirdTesting
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime
import SurgeTestSupport

@testable import LeaderboardService

/// The service's router over a fresh, migrated database, called as the gateway calls it: no broker, no consumer and
/// no change feed (so every read catches up from PostgreSQL); what the events would have recorded is written with
/// the handlers' own `Directory` and `ScoreStore`. The clock stands at `now`.
struct LeaderboardRoutes: Sendable {
    let client: any TestClientProtocol
    let database: PostgresClient
    let signer: InternalCallSigner
    let logger: Logger

    /// Wednesday of 2026-W47, in the middle of November.
    static let now = Timestamp.parse("2026-11-18T12:00:00Z")!
    static let today = LocalDate("2026-11-18")!

    static func run(_ body: @Sendable (LeaderboardRoutes) async throws -> Void) async throws {
        let signer = try RouterTesting.signer()
        let clock = ServiceClock(simulated: true)
        clock.set(now)
        try await withTestDatabase(services: ["leaderboard"]) { testDatabase in
            let logger = Logger.test("leaderboard")
            let database = testDatabase.configuration(for: "leaderboard").makeClient(schema: "leaderboard", logger: logger)
            try await PostgresClient.withRunning(database) { database in
                try await Migrator.migrate([MessagingMigrations.set, LeaderboardMigrations.set], schema: "leaderboard", client: database, logger: logger)
                let router = RouterTesting.router(signer: signer)
                let queries = BoardQueries(
                    client: database, cache: BoardCache(client: database, logger: logger), directory: DirectoryCache(), clock: clock, logger: logger)
                LeaderboardService.addRoutes(to: router, queries: queries)
                try await Application(router: router).test(.router) { client in
                    try await body(LeaderboardRoutes(client: client, database: database, signer: signer, logger: logger))
                }
            }
        }
    }

    /// A GET as the gateway forwards it: signed, on behalf of `caller` (none: a call without one).
    func get(_ target: String, as caller: UUID?) async throws -> HummingbirdTesting.TestResponse {
        try await client.executeRequest(
            uri: target, method: .get, headers: RouterTesting.signedHeaders(.get, target, caller: caller, signer: signer), body: nil)
    }

    /// Writes in one transaction, as an event's handler would.
    func record(_ body: @Sendable (PostgresConnection, Logger) async throws -> Void) async throws {
        let logger = self.logger
        try await database.transaction(logger: logger) { connection in try await body(connection, logger) }
    }

    /// Users with their names, in Rome.
    func profiles(_ names: [UUID: String]) async throws {
        try await record { connection, logger in
            for (userID, name) in names {
                try await DirectoryStore(connection: connection, logger: logger).saveProfile(.init(userID: userID, displayName: name, avatarURL: nil, timeZone: "Europe/Rome"))
            }
        }
    }

    /// Points for the user on the board's week, month and all time of `day`.
    func score(_ points: Double, for userID: UUID, on board: Board, day: LocalDate = today) async throws {
        try await record { connection, logger in
            let deltas = Windows.of(day).map { (ScoreKey(BoardWindow(board: board, window: $0), userID), points) }
            _ = try await ScoreStore(connection: connection, logger: logger).add(Dictionary(uniqueKeysWithValues: deltas))
        }
    }
}
