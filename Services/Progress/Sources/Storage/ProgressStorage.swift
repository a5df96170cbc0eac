import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres

/// Progress's stores over one connection: what one use case reads and writes, inside one transaction for a command
/// (its events included) or on one pooled connection for a read.
struct Stores {
    var attempts: AttemptStore
    var projections: ProjectionStore
    var ledger: LedgerStore
    var photos: PhotoStore
    var chores: ChoreStore
    var userData: UserDataStore
    var outbox: EventOutbox
}

/// Where use cases get their stores: one transaction for a command, one pooled connection for a read.
struct ProgressStorage {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    /// Runs `body` in one transaction: its writes and events commit together or not at all.
    func transaction<Result: Sendable>(_ body: (Stores) async throws -> Result) async throws -> Result {
        try await client.transaction(logger: logger) { connection in try await body(stores(on: connection, logger: logger)) }
    }

    /// Runs `body` on one connection, outside a transaction.
    func read<Result: Sendable>(_ body: (Stores) async throws -> Result) async throws -> Result {
        try await client.withConnection { connection in try await body(stores(on: connection, logger: logger)) }
    }

    /// The stores over a connection whose transaction someone else runs: a consumer's inbox transaction.
    func stores(on connection: PostgresConnection, logger: Logger) -> Stores {
        Stores(
            attempts: AttemptStore(connection: connection, logger: logger),
            projections: ProjectionStore(connection: connection, logger: logger),
            ledger: LedgerStore(connection: connection, logger: logger),
            photos: PhotoStore(connection: connection, logger: logger),
            chores: ChoreStore(connection: connection, logger: logger),
            userData: UserDataStore(connection: connection, logger: logger),
            outbox: EventOutbox(outbox: outbox, connection: connection, logger: logger))
    }
}
