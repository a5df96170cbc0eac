import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts

/// Something that runs a query: the pool, or one connection inside a transaction.
protocol QueryRunner: Sendable {
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence
}

extension PostgresClient: QueryRunner {
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await self.query(query, logger: logger)
    }
}

extension PostgresConnection: QueryRunner {
    func run(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await self.query(query, logger: logger)
    }
}

extension QueryRunner {
    /// Runs a statement and discards its rows.
    func execute(_ query: PostgresQuery, logger: Logger) async throws {
        _ = try await run(query, logger: logger).collect()
    }

    /// How many rows a statement with `RETURNING` returned (how many it touched).
    func count(_ query: PostgresQuery, logger: Logger) async throws -> Int {
        try await run(query, logger: logger).collect().count
    }
}

/// Reading accounts and public profiles from rows.
enum AccountRows {
    static let columns = "u.id, u.display_name, u.avatar_url, u.email, u.time_zone, u.locale, u.kind, u.created_at"

    static func decode(_ row: PostgresRow) throws -> Account {
        let (id, displayName, avatarURL, email, timeZone, locale, kind, createdAt) = try row.decode(
            (UUID, String, String?, String?, String, String?, String, Date).self)
        return make(id, displayName, avatarURL, email, timeZone, locale, kind, createdAt)
    }

    static func make(
        _ id: UUID, _ displayName: String, _ avatarURL: String?, _ email: String?, _ timeZone: String, _ locale: String?, _ kind: String,
        _ createdAt: Date
    ) -> Account {
        Account(
            id: id, displayName: displayName, avatarURL: avatarURL, email: email, timeZone: timeZone, locale: locale,
            kind: AccountKind(rawValue: kind) ?? .guest, createdAt: createdAt)
    }

    static func account(_ id: UUID, on runner: some QueryRunner, lock: Bool = false, logger: Logger) async throws -> Account? {
        let query: PostgresQuery =
            "SELECT \(unescaped: columns) FROM users u WHERE u.id = \(id) \(unescaped: lock ? "FOR UPDATE" : "")"
        return try await runner.run(query, logger: logger).collect().first.map(decode)
    }

    static func exists(_ id: UUID, on runner: some QueryRunner, logger: Logger) async throws -> Bool {
        try await runner.count("SELECT 1 FROM users WHERE id = \(id)", logger: logger) > 0
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
