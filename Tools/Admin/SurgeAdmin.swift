import ArgumentParser
import AsyncHTTPClient
import NIOFoundationCompat
import Foundation
import IdentityService
import Logging
import PostgresNIO
import SurgeAPICatalogue
import SurgeContracts
import SurgePostgres

@main
struct SurgeAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "surge-admin",
        abstract: "Operational tasks for Surge: database provisioning, admin roles, event schemas, the topic list, the development clock, a simulated population.",
        subcommands: [
            Provision.self, GrantAdmin.self, RevokeAdmin.self, EventSchemas.self, OpenAPI.self, RegistryFilesCommand.self, Topics.self, Clock.self,
            Simulate.self,
        ])
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
    var services: [String] = SurgeService.deployed.map(\.rawValue)

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

/// Where `grant-admin` and `revoke-admin` find identity's accounts: the URL given, else the administrator URL
/// `provision` uses (SURGE_ADMIN_DATABASE_URL) on the `--database` it provisioned; always identity's schema.
struct IdentityDatabaseOptions: ParsableArguments {
    @Option(help: "A PostgreSQL URL allowed to update identity's users (default: SURGE_ADMIN_DATABASE_URL on --database).")
    var databaseURL: String?

    @Option(help: "The database `provision` created, used with SURGE_ADMIN_DATABASE_URL.")
    var database = "surge"

    func setAdmin(_ admin: Bool, email: String) async throws {
        var configuration: DatabaseConfiguration
        if let databaseURL {
            configuration = try DatabaseConfiguration(url: databaseURL, maximumConnections: 1)
        } else {
            guard let adminURL = ProcessInfo.processInfo.environment["SURGE_ADMIN_DATABASE_URL"] else {
                throw ValidationError("SURGE_ADMIN_DATABASE_URL (or --database-url) is required")
            }
            configuration = try DatabaseConfiguration(url: adminURL, maximumConnections: 1)
            configuration.database = database
        }
        let logger = Logger(label: "surge-admin")
        let outcome = try await PostgresClient.withRunning(configuration.makeClient(schema: SurgeService.identity.schema, logger: logger)) { client in
            try await AdminRoles.set(admin, email: email, client: client, logger: logger)
        }
        switch outcome {
        case .noSuchAccount:
            throw ValidationError("no account has the e-mail address \(email)")
        case .updated(let userID, let changed):
            let account = "\(email) (\(userID.uuidString.lowercased()))"
            switch (admin, changed) {
            case (true, true): print("\(account) is now an admin; its access tokens carry the role from its next refresh or sign-in (within 15 minutes)")
            case (false, true): print("\(account) is no longer an admin; tokens issued before keep the role until they expire (within 15 minutes)")
            case (true, false): print("\(account) was already an admin")
            case (false, false): print("\(account) was not an admin")
            }
        }
    }
}

struct GrantAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant-admin",
        abstract: "Make an account an admin: its next access token carries the admin role (KPI dashboard, /v1/admin/...).",
        discussion: """
            Updates identity's table directly; there is no API for it. The account's current access token keeps what it
            said until it expires: the role arrives with the next token, at the next refresh or sign-in (at most 15
            minutes). The account must have an e-mail address (guests cannot be admins).
            """)

    @Option(help: "The account's e-mail address.")
    var email: String

    @OptionGroup var target: IdentityDatabaseOptions

    func run() async throws {
        try await target.setAdmin(true, email: email)
    }
}

struct RevokeAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke-admin",
        abstract: "Take the admin role from an account, from its next access token on (at most 15 minutes).",
        discussion: """
            Access tokens already issued keep the role until they expire (15 minutes at most); to end it at once, also
            delete or sign out the account's sessions.
            """)

    @Option(help: "The account's e-mail address.")
    var email: String

    @OptionGroup var target: IdentityDatabaseOptions

    func run() async throws {
        try await target.setAdmin(false, email: email)
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

struct RegistryFilesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "registry-files",
        abstract: "Write what the scripts, deployment files and README say per service from the service registry: lists, compose blocks, Kubernetes manifests.")

    @Option(help: "The repository root.")
    var output = "."

    func run() throws {
        for path in RegistryFiles.paths {
            let url = URL(fileURLWithPath: output).appendingPathComponent(path)
            let text = try? String(contentsOf: url, encoding: .utf8)
            let written = try RegistryFiles.generated(path: path, current: text)
            guard written != text else { continue }
            try written.write(to: url, atomically: true, encoding: .utf8)
            print("wrote \(path)")
        }
    }
}

struct Topics: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every topic of the catalogue as `name partitions`, for creating them on a Kafka cluster.",
        discussion: """
            Each domain topic gets --partitions, else KAFKA_TOPIC_PARTITIONS, else 12; each dead-letter topic one. \
            An existing topic keeps its count: docs/deployment.md says how to grow one and what it does to per-key order.
            """)

    @Option(help: "Partitions of each domain topic (default: KAFKA_TOPIC_PARTITIONS, else 12).")
    var partitions: Int?

    func run() throws {
        let count = try Topic.partitions(given: partitions, environment: ProcessInfo.processInfo.environment)
        for topic in Topic.catalogue(partitions: count) {
            print("\(topic.name) \(topic.partitions)")
        }
    }
}

struct Clock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or move the simulated clock of every service of a stack started with SIMULATED_CLOCK=true.",
        discussion: """
            `surge-admin clock set 2026-12-24T18:00:00Z` moves every service to that instant; `surge-admin clock advance
            36h` (s, m, h, d) moves them all from the first service's now; `surge-admin clock show` prints each one's now.
            All services get the same instant, so days judged, boards and reminders agree. Services started without a
            simulated clock are listed and left alone. The clock only moves forward: an earlier instant is refused. The
            gateway keeps the real clock (its port is the public door, and has no clock to move).
            """)

    @Argument(help: "show, set or advance.")
    var action: String

    @Argument(help: "An ISO 8601 instant for set; a duration such as 90m, 36h or 7d for advance.")
    var value: String?

    @Option(help: "Where each service listens: {service} and {port} are filled in from the registry.")
    var urlTemplate = "http://127.0.0.1:{port}"

    struct ClockBody: Codable { var now: Date }

    func run() async throws {
        let urls = SurgeService.deployed.filter { $0 != .gateway }.map { service in
            (service, urlTemplate.replacingOccurrences(of: "{service}", with: service.rawValue)
                .replacingOccurrences(of: "{port}", with: String(service.entry.port)) + "/internal/clock")
        }
        var simulated: [(SurgeService, String, Date)] = []
        for (service, url) in urls {
            let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(5))
            guard let response, response.status == .ok else {
                print("\(service.rawValue): not simulated or not running")
                continue
            }
            let body = try await response.body.collect(upTo: 1 << 16)
            simulated.append((service, url, try SurgeJSON.decode(ClockBody.self, from: Data(buffer: body)).now))
        }
        guard let first = simulated.first else { throw ValidationError("no running service has a simulated clock") }
        let target: Date
        switch action {
        case "show":
            for (service, _, now) in simulated { print("\(service.rawValue): \(Timestamp.format(now))") }
            return
        case "set":
            guard let value, let instant = Timestamp.parse(value) else { throw ValidationError("set needs an ISO 8601 instant") }
            target = instant
        case "advance":
            guard let value, let seconds = Self.seconds(in: value) else { throw ValidationError("advance needs a duration such as 90m, 36h or 7d") }
            target = first.2.addingTimeInterval(seconds)
        default:
            throw ValidationError("the action is show, set or advance")
        }
        let body = try SurgeJSON.encode(ClockBody(now: target))
        for (service, url, _) in simulated {
            var request = HTTPClientRequest(url: url)
            request.method = .PUT
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(body)
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(5))
            guard response.status == .ok else {
                let problem = String(buffer: try await response.body.collect(upTo: 1 << 16))
                throw ValidationError("\(service.rawValue) refused the clock (\(response.status.code)): \(problem)")
            }
        }
        print("clock of \(simulated.map(\.0.rawValue).joined(separator: ", ")) set to \(Timestamp.format(target))")
    }

    /// `90m`, `36h`, `7d`, `45s`, or plain seconds.
    static func seconds(in text: String) -> TimeInterval? {
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let last = text.last, let unit = units[last], let amount = Double(text.dropLast()) { return amount * unit }
        return Double(text)
    }
}
