import Logging
import PostgresNIO
@testable import SurgePostgres
import SurgeTestSupport
import Testing

@Suite("Migrations and database roles", .tags(.integration), .kind(.integration))
struct MigrationTests {
    let logger = Logger.test("migrations")

    static let migrations = MigrationSet(component: "sample", migrations: [
        Migration(1, "widgets", ["CREATE TABLE widgets (id int PRIMARY KEY)", "INSERT INTO widgets VALUES (1)"]),
        Migration(2, "gadgets", ["CREATE TABLE gadgets (id int PRIMARY KEY)"]),
    ])

    @Test("replicas migrating at once apply each migration exactly once")
    func concurrentReplicas() async throws {
        try await withTestDatabase(services: ["identity"]) { database in
            let configuration = database.configuration(for: "identity")
            let logger = self.logger
            let results = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await PostgresClient.withRunning(configuration.makeClient(schema: "identity", logger: logger)) { client in
                            try await Migrator.migrate([Self.migrations], schema: "identity", client: client, logger: logger)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.flatMap { $0 }.sorted() == ["sample#1", "sample#2"])
            #expect(try await database.count("SELECT count(*) FROM identity.schema_migrations") == 2)
            #expect(try await database.count("SELECT count(*) FROM identity.widgets") == 1)
        }
    }

    @Test("a migration edited after it was applied stops start-up")
    func editedMigration() async throws {
        try await withTestDatabase(services: ["identity"]) { database in
            let client = database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            try await PostgresClient.withRunning(client) { client in
                try await Migrator.migrate([Self.migrations], schema: "identity", client: client, logger: logger)
                let edited = MigrationSet(component: "sample", migrations: [
                    Migration(1, "widgets", ["CREATE TABLE widgets (id bigint PRIMARY KEY)"]),
                ])
                await #expect(throws: MigrationError.self) {
                    try await Migrator.migrate([edited], schema: "identity", client: client, logger: logger)
                }
            }
        }
    }

    @Test("versions must increase")
    func outOfOrder() async throws {
        try await withTestDatabase(services: ["identity"]) { database in
            let client = database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            try await PostgresClient.withRunning(client) { client in
                let backwards = MigrationSet(component: "sample", migrations: [Migration(2, "b", []), Migration(1, "a", [])])
                await #expect(throws: MigrationError.self) {
                    try await Migrator.migrate([backwards], schema: "identity", client: client, logger: logger)
                }
            }
        }
    }

    @Test("a role created twice at once, then provisioned with new passwords, takes any characters in the password")
    func provisioningPasswords() async throws {
        try await withTestDatabase(services: ["identity"]) { database in
            let logger = self.logger
            let role = database.role(for: "tricky")
            let first = #"pa$$word'with\back$$slash"#
            let second = #"$$'\'$$ ; DROP ROLE x; --"#
            func provision(_ password: String) async throws {
                try await database.withAdmin { admin in
                    try await DatabaseProvisioner.provision(
                        [.init(role: role, schema: "tricky", password: password)], database: database.name, admin: admin, logger: logger)
                }
            }
            func canLogIn(_ password: String) async -> Bool {
                let admin = database.admin
                let configuration = PostgresConnection.Configuration(
                    host: admin.host, port: admin.port, username: role, password: password, database: admin.database, tls: .disable)
                guard let connection = try? await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger) else { return false }
                try? await connection.close()
                return true
            }
            do {
                try await database.withAdmin { admin in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for _ in 0..<2 {
                            group.addTask { try await DatabaseProvisioner.createOrUpdateRole(role, password: first, admin: admin, logger: logger) }
                        }
                        try await group.waitForAll()
                    }
                }
                try await provision(first)
                #expect(await canLogIn(first))
                try await provision(second)
                #expect(await canLogIn(second))
                #expect(!(await canLogIn(first)))
            } catch {
                Issue.record(error)
            }
            try await database.withAdmin { admin in
                try await admin.query(PostgresQuery(unsafeSQL: "DROP OWNED BY \"\(role)\""), logger: logger)
                try await admin.query(PostgresQuery(unsafeSQL: "DROP ROLE \"\(role)\""), logger: logger)
            }
        }
    }

    @Test("each service role may use its own schema only")
    func rolesAreConfined() async throws {
        try await withTestDatabase(services: ["identity", "progress"]) { database in
            let progress = database.configuration(for: "progress").makeClient(schema: "progress", logger: logger)
            _ = try await PostgresClient.withRunning(progress) { client in
                try await client.query("CREATE TABLE secrets (id int)", logger: logger)
            }
            let identity = database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            try await PostgresClient.withRunning(identity) { client in
                try await client.query("CREATE TABLE mine (id int)", logger: logger)
                let error = await #expect(throws: PSQLError.self) {
                    try await client.query("SELECT * FROM progress.secrets", logger: logger)
                }
                #expect(error?.sqlState == "42501")  // insufficient_privilege
                await #expect(throws: PSQLError.self) {
                    try await client.query("CREATE TABLE public.sneaky (id int)", logger: logger)
                }
            }
        }
    }
}
