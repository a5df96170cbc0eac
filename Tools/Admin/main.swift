import ArgumentParser
import Foundation
import Logging
import PostgresNIO
import SurgeAPICatalogue
import SurgeContracts
import SurgePostgres

@main
struct SurgeAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "surge-admin",
        abstract: "Operational tasks for Surge: database provisioning, event schemas, the topic list.",
        subcommands: [Provision.self, EventSchemas.self, OpenAPI.self, Topics.self])
}

struct Provision: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the database, and one login role and schema per service, each role allowed only its schema.",
        discussion: """
            Reads the administrator URL from SURGE_ADMIN_DATABASE_URL (a superuser, connected to any database) and
            each service's password from SURGE_DB_PASSWORD_<SERVICE> (e.g. SURGE_DB_PASSWORD_IDENTITY). Idempotent:
            run it on every deploy; it also rotates passwords.
            """)

    @Option(help: "The database to create and provision.")
    var database = "surge"

    @Option(help: "Role names are <prefix><service>.")
    var rolePrefix = "surge_"

    @Option(parsing: .upToNextOption, help: "Services to provision (default: all).")
    var services: [String] = SurgeService.allCases.map(\.rawValue)

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let adminURL = environment["SURGE_ADMIN_DATABASE_URL"] else {
            throw ValidationError("SURGE_ADMIN_DATABASE_URL is required")
        }
        let accounts = try services.map { service in
            let variable = "SURGE_DB_PASSWORD_\(service.uppercased())"
            guard let password = environment[variable], !password.isEmpty else { throw ValidationError("\(variable) is required") }
            return DatabaseProvisioner.ServiceAccount(role: rolePrefix + service, schema: service, password: password)
        }
        let logger = Logger(label: "surge-admin")
        var admin = try DatabaseConfiguration(url: adminURL, maximumConnections: 2)
        try await PostgresClient.withRunning(admin.makeClient(logger: logger)) { client in
            try await DatabaseProvisioner.createDatabase(database, admin: client, logger: logger)
        }
        admin.database = database
        try await PostgresClient.withRunning(admin.makeClient(logger: logger)) { client in
            try await DatabaseProvisioner.provision(accounts, database: database, admin: client, logger: logger)
        }
        print("provisioned \(accounts.map(\.role).joined(separator: ", ")) in \(database)")
    }
}

struct EventSchemas: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the JSON Schema of every event type, or write the event catalogue folder.")

    @Option(help: "Write the catalogue (README.md and schemas/) into this folder instead of printing.")
    var output: String?

    func run() throws {
        let files = try EventCatalogue.documentation()
        guard let output else {
            for payload in EventCatalogue.all {
                print(String(decoding: try EventCatalogue.schemaDocument(for: payload), as: UTF8.self))
            }
            return
        }
        let root = URL(fileURLWithPath: output)
        try? FileManager.default.removeItem(at: root.appendingPathComponent("schemas"))
        for file in files {
            let url = root.appendingPathComponent(file.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try file.contents.write(to: url)
        }
        print("wrote \(files.count) files to \(output)")
    }
}

struct OpenAPI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi",
        abstract: "Print the OpenAPI document of the public API, or write it and the gateway's route table.")

    @Option(help: "The repository root to write docs/openapi.json and the gateway's generated route table into.")
    var output: String?

    func run() throws {
        let files = try PublicAPICatalogue.files()
        guard let output else {
            print(String(decoding: files[0].contents, as: UTF8.self))
            return
        }
        for file in files {
            let url = URL(fileURLWithPath: output).appendingPathComponent(file.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try file.contents.write(to: url)
        }
        print("wrote \(files.map(\.path).joined(separator: ", "))")
    }
}

struct Topics: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every topic of the catalogue as `name partitions`, for creating them on a Kafka cluster.")

    func run() {
        for topic in Topic.all + Topic.deadLetters {
            print("\(topic.name) \(topic.partitions)")
        }
    }
}
