import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import SurgeContracts
import SurgeKafka
@testable import SurgeMessaging
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
        Migration(2, "the order effects were applied in", ["CREATE TABLE effect_log (position bigint GENERATED ALWAYS AS IDENTITY, key text NOT NULL)"]),
        Migration(3, "the transaction each effect was applied in", ["ALTER TABLE effect_log ADD COLUMN transaction_id bigint NOT NULL DEFAULT txid_current()"]),
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

    /// A consumer whose effect increments `effects.applied` for the event's display name (a second application
    /// would show) and appends it to `effect_log`.
    func consumer(
        group: String = "surge-progress", maxAttempts: Int = 3, batchLimit: Int = 32, logger: Logger? = nil,
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
            try await connection.query("INSERT INTO effect_log (key) VALUES (\(event.data.displayName))", logger: logger)
        }
        return try EventConsumer(
            configuration: .init(group: group, maxAttempts: maxAttempts, initialBackoff: .milliseconds(10), batchLimit: batchLimit),
            kafka: kafka.configuration(), client: client, producer: producer, handlers: handlers, logger: logger ?? self.logger)
    }

    /// What a deferring consumer's handler throws while the registration it needs has not been applied.
    struct NotYetRegistered: AwaitingOtherEvent {
        var name: String
        var awaited: String { "registration \(name) not applied yet" }
    }

    /// A consumer whose handler needs another event first, as notifications needs a recipient's registration: a
    /// registration named `X<-Y` is applied only once the one named `Y` has been (until then it throws
    /// `NotYetRegistered`). Every effect is also appended to `effect_log`, to see the order.
    func deferringConsumer(
        group: String = "surge-progress", deferralLimit: Duration = .seconds(15 * 60), logger: Logger? = nil,
        whileApplying: (@Sendable () async throws -> Void)? = nil, gathered: Bool = false
    ) throws -> EventConsumer {
        @Sendable func apply(_ name: String, on connection: PostgresConnection, logger: Logger) async throws {
            if let arrow = name.range(of: "<-") {
                let needed = String(name[arrow.upperBound...])
                let known = try await connection.query("SELECT 1 FROM effects WHERE key = \(needed)", logger: logger).collect().isEmpty == false
                guard known else { throw NotYetRegistered(name: needed) }
            }
            try await whileApplying?()
            try await connection.query(
                """
                INSERT INTO effects (key, applied) VALUES (\(name), 1)
                ON CONFLICT (key) DO UPDATE SET applied = effects.applied + 1
                """, logger: logger)
            try await connection.query("INSERT INTO effect_log (key) VALUES (\(name))", logger: logger)
        }
        var handlers = EventHandlers()
        handlers.on(UserRegistered.self) { event, connection, logger in
            guard gathered else { return try await apply(event.data.displayName, on: connection, logger: logger) }
            // As a handler that gathers its writes until the transaction's body ends (`BeforeCommit`), failing there.
            try await BeforeCommit.gather(event.data.displayName, on: connection, logger: logger) { names, connection, logger in
                for name in names { try await apply(name, on: connection, logger: logger) }
            }
        }
        return try EventConsumer(
            configuration: .init(group: group, maxAttempts: 3, initialBackoff: .milliseconds(10), deferralLimit: deferralLimit),
            kafka: kafka.configuration(), client: client, producer: producer, handlers: handlers, logger: logger ?? self.logger)
    }

    /// The keys in the order their effects were applied.
    func effectLog() async throws -> [String] {
        try await client.query("SELECT key FROM effect_log ORDER BY position", logger: logger).collect().map { try $0.decode(String.self) }
    }

    /// The transactions the logged effects were applied in.
    func effectTransactions() async throws -> Int {
        try await client.query("SELECT count(DISTINCT transaction_id) FROM effect_log", logger: logger).collect().first?.decode(Int.self) ?? 0
    }

    /// The parked records of a consumer group, oldest first: event id, tries so far and reason.
    func parked(group: String = "surge-progress") async throws -> [(eventID: UUID, attempts: Int, reason: String)] {
        try await client.query(
            "SELECT event_id, attempts, reason FROM deferred_events WHERE consumer = \(group) ORDER BY id", logger: logger
        ).collect().map { try $0.decode((UUID, Int, String).self) }.map { (eventID: $0.0, attempts: $0.1, reason: $0.2) }
    }

    func applied(_ key: String) async throws -> Int {
        try await client.query("SELECT applied FROM effects WHERE key = \(key)", logger: logger).collect().first?.decode(Int.self) ?? 0
    }

    func unpublished() async throws -> Int {
        try await client.query("SELECT count(*) FROM outbox_pending", logger: logger).collect().first?.decode(Int.self) ?? -1
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
