import BadgesDomain
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime
import SurgeTestSupport

@testable import BadgesService

/// The service's router over a fresh, migrated database with the standard catalogue, called as the gateway calls it:
/// no broker and no consumer; what the events would have recorded is written with the handlers' own store.
struct BadgesRoutes: Sendable {
    let client: any TestClientProtocol
    let database: PostgresClient
    let signer: InternalCallSigner
    let awarder: Awarder
    let logger: Logger

    static func run(_ body: @Sendable (BadgesRoutes) async throws -> Void) async throws {
        let catalogue = try BadgeCatalogue.standard()
        let signer = try RouterTesting.signer()
        try await withTestDatabase(services: ["badges"]) { testDatabase in
            let logger = Logger.test("badges")
            let database = testDatabase.configuration(for: "badges").makeClient(schema: "badges", logger: logger)
            try await PostgresClient.withRunning(database) { database in
                try await Migrator.migrate([MessagingMigrations.set, BadgesMigrations.set], schema: "badges", client: database, logger: logger)
                let router = RouterTesting.router(signer: signer)
                BadgesService.addRoutes(to: router, queries: BadgeQueries(client: database, catalogue: catalogue, logger: logger))
                let awarder = Awarder(catalogue: catalogue)
                try await Application(router: router).test(.router) { client in
                    try await body(BadgesRoutes(client: client, database: database, signer: signer, awarder: awarder, logger: logger))
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
    func record(_ body: @Sendable (inout PostgresBadgeStore) async throws -> Void) async throws {
        let logger = self.logger
        try await database.transaction(logger: logger) { connection in
            var store = PostgresBadgeStore(connection: connection, logger: logger, outbox: Outbox(service: "badges"))
            try await body(&store)
        }
    }

    /// The user completed a chore: the fact counted and what it reaches awarded, as the chore handler does.
    func choreCompleted(by userID: UUID) async throws {
        let awarder = self.awarder
        try await record { store in
            try await awarder.record(
                Fact.scopes(Rule.Measure.chores.rawValue, kind: .chore, challengeID: UUID()), .add(1), for: userID, at: Date(), trace: nil,
                store: &store)
        }
    }
}
