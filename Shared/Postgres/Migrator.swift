import Logging
import PostgresNIO

/// One schema change: statements run in order inside one transaction.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let statements: [String]

    public init(_ version: Int, _ name: String, _ statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }

    /// FNV-1a over the statements: detects a migration edited after it was applied.
    var checksum: Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in statements.joined(separator: "\u{0}").utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }
}

/// An ordered list of migrations owned by one component (a service, or a shared module such as the outbox).
public struct MigrationSet: Sendable {
    public let component: String
    public let migrations: [Migration]

    public init(component: String, migrations: [Migration]) {
        self.component = component
        self.migrations = migrations
    }
}

public enum MigrationError: Error, CustomStringConvertible {
    case edited(component: String, version: Int, name: String)
    case outOfOrder(component: String)

    public var description: String {
        switch self {
        case .edited(let component, let version, let name):
            "migration \(component) #\(version) (\(name)) was changed after it was applied; add a new migration instead"
        case .outOfOrder(let component): "migrations of \(component) must have increasing versions"
        }
    }
}

/// Applies migrations to the schema on the client's search path. Replicas starting together are safe: the first
/// takes a session advisory lock per schema, the others wait and then find nothing left to do.
public enum Migrator {
    @discardableResult
    public static func migrate(_ sets: [MigrationSet], schema: String, client: PostgresClient, logger: Logger) async throws -> [String] {
        for set in sets where zip(set.migrations, set.migrations.dropFirst()).contains(where: { $0.version >= $1.version }) {
            throw MigrationError.outOfOrder(component: set.component)
        }
        let lockKey = "surge.migrations.\(schema)"
        return try await client.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(hashtext(\(lockKey)))", logger: logger)
            do {
                let applied = try await apply(sets, connection: connection, logger: logger)
                try await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger)
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger)
                throw error
            }
        }
    }

    private static func apply(_ sets: [MigrationSet], connection: PostgresConnection, logger: Logger) async throws -> [String] {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                component text NOT NULL,
                version integer NOT NULL,
                name text NOT NULL,
                checksum bigint NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (component, version)
            )
            """, logger: logger)
        var existing: [String: [Int: Int64]] = [:]
        for try await (component, version, checksum) in try await connection.query(
            "SELECT component, version, checksum FROM schema_migrations", logger: logger
        ).decode((String, Int, Int64).self) {
            existing[component, default: [:]][version] = checksum
        }
        var applied: [String] = []
        for set in sets {
            for migration in set.migrations {
                if let checksum = existing[set.component]?[migration.version] {
                    guard checksum == migration.checksum else {
                        throw MigrationError.edited(component: set.component, version: migration.version, name: migration.name)
                    }
                    continue
                }
                try await connection.withTransaction(logger: logger) { connection in
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(
                        """
                        INSERT INTO schema_migrations (component, version, name, checksum)
                        VALUES (\(set.component), \(migration.version), \(migration.name), \(migration.checksum))
                        """, logger: logger)
                }
                logger.info("Applied migration", metadata: ["component": "\(set.component)", "version": "\(migration.version)", "name": "\(migration.name)"])
                applied.append("\(set.component)#\(migration.version)")
            }
        }
        return applied
    }
}
