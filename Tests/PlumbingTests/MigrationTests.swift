import Logging
import PostgresNIO
import SurgePostgres
import SurgeTestSupport
import Testing

@Suite("Migrations and database roles")
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
