import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgePostgres
import SurgeTestSupport
import Synchronization

/// One service's messaging plumbing in the test process: its schema migrated, a producer, the outbox.
struct MessagingHarness {
    let database: TestDatabase
    let kafka: TestKafka
    let client: PostgresClient
    let producer: KafkaProducer
    let outbox = Outbox(service: "identity")
    let logger = Logger.test("messaging")

    static let effects = MigrationSet(component: "test", migrations: [
        Migration(1, "effects", ["CREATE TABLE effects (key text PRIMARY KEY, applied int NOT NULL)"]),
    ])

    /// Runs `body` with a running client and the outbox tables migrated in the identity schema.
    static func with(_ body: (MessagingHarness) async throws -> Void) async throws {
        try await withTestDatabase(services: ["identity"]) { database in
            let kafka = try TestKafka()
            let logger = Logger.test("messaging")
            let client = database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            let producer = try KafkaProducer(configuration: kafka.configuration(), logger: logger)
            let harness = MessagingHarness(database: database, kafka: kafka, client: client, producer: producer)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                try await Migrator.migrate([MessagingMigrations.set, effects], schema: "identity", client: client, logger: logger)
                try await body(harness)
            }
        }
    }

    func relay(pollInterval: Duration = .milliseconds(100)) -> OutboxRelay {
        OutboxRelay(
            client: client, producer: producer, outbox: outbox, configuration: .init(schema: "identity", pollInterval: pollInterval), logger: logger)
    }

    func registration(_ name: String) -> UserRegistered {
        UserRegistered(userID: UUID(), displayName: name, timeZone: "Europe/Rome", locale: nil, kind: .guest, registeredAt: Date())
    }

    /// Appends events in one committed transaction.
    @discardableResult
    func commit(_ payloads: [UserRegistered]) async throws -> [UUID] {
        try await client.transaction(logger: logger) { connection in
            var ids: [UUID] = []
            for payload in payloads { ids.append(try await outbox.append(payload, on: connection, logger: logger)) }
            return ids
        }
    }

    /// A consumer whose effect increments `effects.applied` for the event's display name: a second application
    /// would show.
    func consumer(
        group: String = "surge-progress", maxAttempts: Int = 3, logger: Logger? = nil,
        effect: (@Sendable (CloudEvent<UserRegistered>) throws -> Void)? = nil
    ) throws -> EventConsumer {
        var handlers = EventHandlers()
        handlers.on(UserRegistered.self) { event, connection, logger in
            try effect?(event)
            try await connection.query(
                """
                INSERT INTO effects (key, applied) VALUES (\(event.data.displayName), 1)
                ON CONFLICT (key) DO UPDATE SET applied = effects.applied + 1
                """, logger: logger)
        }
        return try EventConsumer(
            configuration: .init(group: group, maxAttempts: maxAttempts, initialBackoff: .milliseconds(10)),
            kafka: kafka.configuration(), client: client, producer: producer, handlers: handlers, logger: logger ?? self.logger)
    }

    func applied(_ key: String) async throws -> Int {
        try await client.query("SELECT applied FROM effects WHERE key = \(key)", logger: logger).collect().first?.decode(Int.self) ?? 0
    }

    func unpublished() async throws -> Int {
        try await client.query("SELECT count(*) FROM outbox WHERE published_at IS NULL", logger: logger).collect().first?.decode(Int.self) ?? -1
    }
}

/// Runs a service until the body returns, then cancels it.
func running<Result>(_ services: [any Service], _ body: () async throws -> Result) async throws -> Result {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for service in services { group.addTask { try await service.run() } }
        defer { group.cancelAll() }
        return try await body()
    }
}

/// A logger that keeps every message, to wait on what a component reported.
final class CapturedLog: Sendable {
    private let messages = Mutex<[String]>([])

    var logger: Logger {
        Logger(label: "captured") { _ in Handler(log: self) }
    }

    func count(where matches: (String) -> Bool) -> Int {
        messages.withLock { $0.filter(matches).count }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.messages.withLock { $0.append(event.message.description) }
        }
    }
}
