import Foundation
import Logging
import PostgresNIO
import SurgeMessaging
import SurgePostgres

/// Identity's stores over one connection: what one use case reads and writes, inside one transaction for a command
/// (its events included) or on one pooled connection for a read.
struct IdentityStores {
    let accounts: AccountStore
    let sessions: SessionStore
    let signInAttempts: SignInAttemptStore
    let friends: FriendStore
    let groups: GroupStore
    let mail: MailStore
    let events: EventOutbox
}

/// Where use cases get their stores: one transaction for a command, one pooled connection for a read, one
/// repeatable-read snapshot for an export.
struct IdentityStorage: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    /// Runs `body` in one transaction: its writes and events commit together or not at all.
    func transaction<Result: Sendable>(_ body: (IdentityStores) async throws -> Result) async throws -> Result {
        try await client.transaction(logger: logger) { connection in try await body(stores(on: connection)) }
    }

    /// Runs `body` on one connection, outside a transaction.
    func read<Result: Sendable>(_ body: (IdentityStores) async throws -> Result) async throws -> Result {
        try await client.withConnection { connection in try await body(stores(on: connection)) }
    }

    /// Runs `body` in one read-only repeatable-read transaction, so that everything it reads agrees.
    func snapshot<Result: Sendable>(_ body: (IdentityStores) async throws -> Result) async throws -> Result {
        try await client.transaction(logger: logger) { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            return try await body(stores(on: connection))
        }
    }

    private func stores(on connection: PostgresConnection) -> IdentityStores {
        IdentityStores(
            accounts: AccountStore(connection: connection, logger: logger),
            sessions: SessionStore(connection: connection, logger: logger),
            signInAttempts: SignInAttemptStore(connection: connection, logger: logger),
            friends: FriendStore(connection: connection, logger: logger),
            groups: GroupStore(connection: connection, logger: logger),
            mail: MailStore(connection: connection, logger: logger),
            events: EventOutbox(outbox: outbox, connection: connection, logger: logger))
    }
}

extension PostgresConnection {
    /// Runs a statement and discards its rows.
    func execute(_ query: PostgresQuery, logger: Logger) async throws {
        _ = try await self.query(query, logger: logger).collect()
    }

    /// How many rows a statement with `RETURNING` returned (how many it touched).
    func count(_ query: PostgresQuery, logger: Logger) async throws -> Int {
        try await self.query(query, logger: logger).collect().count
    }
}

/// Where a list page ended, for lists in insertion order (`seq` columns).
struct SequencePosition: Codable, Sendable {
    var seq: Int64
}

/// Where a list page ended, for lists sorted by display name.
struct NamePosition: Codable, Sendable {
    var name: String
    var id: UUID
}
