import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres

/// A fresh database on the test cluster with one login role and schema per service, as production has them. Role
/// names carry the database name so that parallel tests never share a role.
public final class TestDatabase: Sendable {
    public let name: String
    public let admin: DatabaseConfiguration
    public let passwords: [String: String]
    /// At error level: PostgresNIO warns when a query is issued before the pool's `run()` task has started, which
    /// `withRunning` cannot order; the query simply waits for the pool.
    let logger = {
        var logger = Logger.test("test-database")
        logger.logLevel = max(logger.logLevel, .error)
        return logger
    }()

    public static func create(services: [String] = SurgeService.allCases.map(\.rawValue)) async throws -> TestDatabase {
        let admin = try DatabaseConfiguration(url: try TestEnvironment.adminDatabaseURL, maximumConnections: 2)
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        let database = TestDatabase(name: String(name), admin: admin, services: services)
        let logger = database.logger
        try await PostgresClient.withRunning(admin.makeClient(logger: logger)) { client in
            try await DatabaseProvisioner.createDatabase(database.name, admin: client, logger: logger)
        }
        try await database.withAdmin { client in
            try await DatabaseProvisioner.provision(
                services.map { .init(role: database.role(for: $0), schema: $0, password: database.passwords[$0]!) },
                database: database.name, admin: client, logger: logger)
        }
        return database
    }

    private init(name: String, admin: DatabaseConfiguration, services: [String]) {
        self.name = name
        var admin = admin
        admin.database = name
        self.admin = admin
        self.passwords = Dictionary(uniqueKeysWithValues: services.map { ($0, UUID().uuidString) })
    }

    public func role(for service: String) -> String { "\(name)_\(service)" }

    /// How `service` connects: its own role, which may use only its own schema.
    public func configuration(for service: String) -> DatabaseConfiguration {
        var configuration = admin
        configuration.username = role(for: service)
        configuration.password = passwords[service]
        configuration.maximumConnections = 5
        return configuration
    }

    /// Runs `body` with a superuser client on this database, to inspect any schema.
    public func withAdmin<Result: Sendable>(_ body: @Sendable (PostgresClient) async throws -> Result) async throws -> Result {
        try await PostgresClient.withRunning(admin.makeClient(logger: logger), body)
    }

    /// One integer from a query run as superuser, e.g. `SELECT count(*) FROM progress.members`.
    public func count(_ query: PostgresQuery) async throws -> Int {
        try await withAdmin { client in
            try await client.query(query, logger: self.logger).collect().first?.decode(Int.self) ?? 0
        }
    }

    /// Drops the database and its roles.
    public func drop() async {
        var maintenance = admin
        maintenance.database = "postgres"
        let logger = self.logger
        let name = self.name
        let roles = passwords.keys.map(role(for:))
        _ = try? await PostgresClient.withRunning(maintenance.makeClient(logger: logger)) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)"), logger: logger)
            for role in roles {
                try await client.query(PostgresQuery(unsafeSQL: "DROP ROLE IF EXISTS \"\(role)\""), logger: logger)
            }
        }
    }
}

/// Runs `body` with a fresh database that is dropped afterwards, pass or fail.
public func withTestDatabase<Result>(
    services: [String] = SurgeService.allCases.map(\.rawValue), _ body: (TestDatabase) async throws -> Result
) async throws -> Result {
    let database = try await TestDatabase.create(services: services)
    do {
        let result = try await body(database)
        await database.drop()
        return result
    } catch {
        await database.drop()
        throw error
    }
}
