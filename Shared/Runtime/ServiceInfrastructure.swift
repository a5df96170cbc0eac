import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
import PostgresNIO
import ServiceLifecycle
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgePostgres

/// What every Surge service stands on: its database (migrated before anything else uses it), a Kafka producer,
/// the transactional outbox and its relay, consumers, and the operational HTTP routes.
public struct ServiceInfrastructure: Sendable {
    public let settings: ServiceSettings
    public let logger: Logger
    public let database: PostgresClient
    public let producer: KafkaProducer
    public let outbox: Outbox
    /// Now, for everything the service decides by time. Simulated only outside production.
    public let clock: ServiceClock

    /// The service's migrations (plus the outbox and inbox tables), applied by `migrate()`.
    public let migrations: [MigrationSet]
    /// Opens when `migrate()` has run inside the application; the relay, consumers and extra services wait for it.
    let migrated = MigrationGate()

    /// Bootstraps logging and metrics and creates the long-lived clients, without connecting to anything: building an
    /// application does no I/O. The application migrates as its first lifecycle step (`makeApplication`); a one-shot
    /// command calls `migrate()` itself.
    public init(_ settings: ServiceSettings, migrations: [MigrationSet]) throws {
        Observability.bootstrap(format: settings.logFormat, level: settings.logLevel)
        Problem.useTypeBase(settings.problemTypeBase)
        Gauge(label: "surge_build_info", dimensions: [("version", SurgeBuild.version), ("commit", settings.commit)]).record(1)
        var logger = Logger(label: "surge-\(settings.service)")
        logger.logLevel = settings.logLevel
        var kafkaLogger = logger
        kafkaLogger[metadataKey: "component"] = "kafka"
        self.settings = settings
        self.logger = logger
        self.migrations = [MessagingMigrations.set] + migrations
        database = settings.database.makeClient(
            schema: settings.service, logger: logger,
            metrics: PoolMetrics(pool: "main", maximumConnections: settings.database.maximumConnections))
        producer = try KafkaProducer(configuration: settings.kafka, logger: kafkaLogger)
        outbox = Outbox(service: settings.service)
        clock = try ServiceClock.from(settings)
    }

    /// Applies the migrations on a connection of its own. Waits about a minute for the database to accept
    /// connections, retrying each second; a login the server refuses (a wrong password or role in `DATABASE_URL`) is a
    /// `ConfigurationError` at once, which waiting would not mend.
    public func migrate() async throws {
        let schema = settings.service
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                try await settings.database.checkLogin(logger: logger)
                let applied = try await PostgresClient.withRunning(settings.database.makeClient(schema: schema, logger: logger)) { client in
                    try await Migrator.migrate(migrations, schema: schema, client: client, logger: logger)
                }
                logger.info("Database ready", metadata: ["schema": "\(schema)", "applied": "\(applied.count)"])
                return
            } catch where error.isLoginRefused {
                let database = settings.database
                throw ConfigurationError(
                    variable: "DATABASE_URL",
                    problem: "is refused by PostgreSQL at \(database.host):\(database.port) for role \(database.username), database "
                        + "\(database.database): \(error.serverMessage ?? "\(error)")")
            } catch where error.isDatabaseUnavailable && ContinuousClock.now < deadline {
                logger.warning(
                    "Database not reachable yet; retrying",
                    metadata: ["host": "\(settings.database.host):\(settings.database.port)", "error": "\(String(describing: error).prefix(300))"])
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// A consumer for this service's consumer group (`surge-<service>`), applying up to `CONSUMER_BATCH_LIMIT` records
    /// per transaction (`EventConsumer.Configuration.batchLimit`).
    public func consumer(_ handlers: EventHandlers) throws -> EventConsumer {
        try EventConsumer(
            configuration: .init(
                group: "surge-\(settings.service)", maxAttempts: settings.consumerMaxAttempts,
                initialBackoff: settings.consumerInitialBackoff,
                batchLimit: settings.consumerBatchLimit),
            kafka: settings.kafka, client: database, producer: producer, handlers: handlers, logger: logger)
    }

    /// A router for an internal service: problem documents, metrics, the caller and trace the gateway forwarded,
    /// the first answer to each keyed request kept with its command (`IdempotentRequestMiddleware`), and the
    /// operational routes.
    public func makeRouter(consumers: [EventConsumer] = []) -> Router<SurgeRequestContext> {
        let router = makeRouter(context: SurgeRequestContext.self, consumers: consumers)
        router.add(middleware: ForwardedContextMiddleware(signer: settings.internalCalls))
        router.add(middleware: IdempotentRequestMiddleware(client: database, connections: settings.database.maximumConnections, logger: logger))
        return router
    }

    /// A router with problem documents, metrics and the operational routes, and the simulated clock's route unless
    /// `developmentClock` is false (the gateway: its port is the public door).
    public func makeRouter<Context: RequestContext>(
        context: Context.Type, consumers: [EventConsumer] = [], developmentClock: Bool = true
    ) -> Router<Context> {
        let router = Router(context: Context.self)
        router.add(middleware: RequestMetricsMiddleware())
        router.add(middleware: ProblemMiddleware())
        let database = self.database
        let producer = self.producer
        let logger = self.logger
        var checks = [
            ReadinessCheck("database") { try await database.query("SELECT 1", logger: logger) },
            ReadinessCheck("kafka") { try await producer.checkConnectivity() },
        ]
        if let consumer = consumers.first {
            checks.append(ReadinessCheck("kafka-consumer") { try await consumer.checkConnectivity() })
        }
        OperationalRoutes(checks: checks).addRoutes(to: router)
        if developmentClock { clock.addRoutes(to: router) }
        return router
    }

    /// The `Server` header of every answer.
    public var serverName: String { "surge-\(settings.service)" }

    /// The application: database clients, producer, outbox relay, consumers and extra services, then the HTTP server.
    /// Its first step migrates the database; the relay, consumers and `services` start once that is done, and
    /// `beforeServerStarts` (seeding, warm-up) runs after it, before the server listens (so before `/readyz` is green).
    /// On SIGTERM the server stops first, then consumers finish their batch, the relay stops, the producer flushes
    /// and the database client closes.
    /// `databases` are further clients of the service's own database, started with it and closed after everything
    /// that may use them.
    /// `channelHandlers` make the handlers each connection's HTTP requests pass before Hummingbird's (the gateway's
    /// `RoutedAnswers`, which puts its proxy in front of the HTTP decoder).
    public func makeApplication<Context: RequestContext>(
        router: Router<Context>, databases: [PostgresClient] = [], consumers: [EventConsumer] = [], services: [any Service] = [],
        channelHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] },
        beforeServerStarts: [@Sendable () async throws -> Void] = []
    ) -> some ApplicationProtocol where Context.Source == ApplicationRequestContextSource {
        let portFile = settings.reader.string("SURGE_PORT_FILE")
        let logger = self.logger
        var app = Application(
            router: router,
            server: .http1(configuration: .init(additionalChannelHandlers: channelHandlers())),
            configuration: ApplicationConfiguration(
                address: .hostname(settings.httpHost, port: settings.httpPort), serverName: serverName),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("Listening", metadata: ["port": "\(port)"])
                if let portFile { try? String(port).write(toFile: portFile, atomically: true, encoding: .utf8) }
            },
            logger: logger)
        let relay = OutboxRelay(client: database, producer: producer, outbox: outbox, configuration: settings.outbox, logger: logger)
        let migrated = self.migrated
        app.addServices(database)
        app.addServices(databases)
        app.addServices(producer)
        let keys = RequestKeyStore(client: database, logger: logger)
        let keysPurge = PeriodicService("request-keys-purge", every: .seconds(600), logger: logger) { try await keys.purge() }
        for service in [relay, keysPurge] + consumers + services {
            app.addServices(AfterMigration(gate: migrated, service: service))
        }
        app.beforeServerStarts { [self] in
            try await migrate()
            await migrated.open()
        }
        for step in beforeServerStarts { app.beforeServerStarts(perform: step) }
        return app
    }
}
