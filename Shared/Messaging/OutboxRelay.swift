import Foundation
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization
import SurgeContracts
import SurgeKafka

/// Publishes the outbox to Kafka in order and marks rows published (takes them off `outbox_pending`) only after the
/// broker acknowledged them.
///
/// Woken when a transaction of this process that wrote events commits (`Outbox.written`), with a polling fallback. No
/// `NOTIFY` is sent from the writing transaction: PostgreSQL serialises the commits of every notifying transaction of
/// a database, WAL flush included, which capped check-ins far below what the server sustains. With several replicas,
/// each batch is taken under a transaction-scoped advisory lock, so one replica publishes at a time, in `position`
/// order; a relay that finds the lock taken tries again shortly, so the events its own replica wrote do not wait for
/// the next poll.
/// `position` is taken at insert, not at commit: of two transactions writing events for one key, the later insert
/// can commit (and be published) first. Per-key order therefore holds only because writers of one key serialise
/// their transactions, which services do through the rows they lock.
///
/// Published rows written longer ago than the outbox retention and processed-event records older than the inbox
/// retention are purged. The inbox retention must exceed the topics' retention, or a redelivered old record would be
/// applied again.
public final class OutboxRelay: Service {
    public struct Configuration: Sendable {
        public var schema: String
        public var pollInterval: Duration
        public var batchSize: Int
        public var outboxRetention: Duration
        public var inboxRetention: Duration

        public init(
            schema: String, pollInterval: Duration = .seconds(1), batchSize: Int = 500, outboxRetention: Duration = .seconds(7 * 24 * 3600),
            inboxRetention: Duration = .seconds(30 * 24 * 3600)
        ) {
            self.schema = schema
            self.pollInterval = pollInterval
            self.batchSize = batchSize
            self.outboxRetention = outboxRetention
            self.inboxRetention = inboxRetention
        }
    }

    private let client: PostgresClient
    private let producer: KafkaProducer
    private let configuration: Configuration
    private let logger: Logger
    private let doorbell: Doorbell
    /// What the round in progress waits for, and since when: a monitor reports a round that does not end.
    private let round = Mutex<(stage: String, since: ContinuousClock.Instant)?>(nil)

    /// A relay for the outbox that `outbox` writes to: it is woken when that outbox's transactions commit.
    public init(client: PostgresClient, producer: KafkaProducer, outbox: Outbox, configuration: Configuration, logger: Logger) {
        self.client = client
        self.producer = producer
        self.doorbell = outbox.written
        self.configuration = configuration
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.publishUntilCancelled() }
                group.addTask { await self.monitorUntilCancelled() }
            }
        }
    }

    private func publishUntilCancelled() async {
        var lastPurge = ContinuousClock.now
        var lastVacuum = ContinuousClock.now
        var publishedSinceVacuum = 0
        while !Task.isCancelled {
            do {
                guard let published = try await publishBatch() else {
                    // Another replica is publishing: what this one wrote may be committed after its batch was read.
                    await doorbell.wait(timeout: .milliseconds(20))
                    continue
                }
                if ContinuousClock.now - lastPurge > .seconds(600) {
                    try await purge()
                    lastPurge = .now
                }
                // Every published event leaves a dead row at the low end of `outbox_pending`, which each batch's read
                // walks past until a vacuum clears it: under load autovacuum (a pass a minute at most) let each read
                // walk tens of thousands. A vacuum of the small table costs a few milliseconds.
                publishedSinceVacuum += published
                if publishedSinceVacuum >= 2_000, ContinuousClock.now - lastVacuum > .seconds(5) {
                    try await client.query("VACUUM outbox_pending", logger: logger)
                    (publishedSinceVacuum, lastVacuum) = (0, .now)
                }
                if published == configuration.batchSize { continue }
            } catch {
                logger.warning("Outbox relay round failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            await doorbell.wait(timeout: configuration.pollInterval)
        }
    }

    /// Once a second, apart from publishing so that a stalled relay still shows its backlog: the lag gauges (the whole
    /// backlog, so not per batch), and a warning naming what a round has waited for once it runs past a minute.
    private func monitorUntilCancelled() async {
        var lastWarning: ContinuousClock.Instant?
        while !Task.isCancelled {
            do {
                try await recordLag()
            } catch {
                logger.debug("Outbox lag reading failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            if let (stage, since) = round.withLock({ $0 }), ContinuousClock.now - since > .seconds(60),
                lastWarning.map({ ContinuousClock.now - $0 > .seconds(60) }) ?? true
            {
                logger.warning("Outbox relay round has not ended", metadata: ["stage": "\(stage)", "running": "\(ContinuousClock.now - since)"])
                lastWarning = .now
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    private func enter(_ stage: String) {
        round.withLock { $0 = (stage, $0?.since ?? .now) }
    }

    /// Publishes up to one batch; returns how many rows were marked published, or nil when another replica holds the lock.
    func publishBatch() async throws -> Int? {
        let lockKey = "surge.outbox.\(configuration.schema)"
        enter("leasing a connection")
        defer { round.withLock { $0 = nil } }
        return try await client.transaction(logger: logger) { connection in
            enter("taking the batch lock")
            let locked = try await connection.query("SELECT pg_try_advisory_xact_lock(hashtext(\(lockKey)))", logger: logger)
                .collect().first?.decode(Bool.self) ?? false
            guard locked else { return nil }
            enter("reading the batch")
            var pending: [(position: Int64, topic: String, record: EventRecord)] = []
            for try await row in try await connection.execute(UnpublishedEvents(limit: configuration.batchSize), logger: logger) {
                let (position, id, topic, key, type, source, subject, time, traceparent, tracestate, requestID, payload) = row
                let record = EventRecord(
                    id: id, source: source, type: type, time: time, subject: subject, partitionKey: key,
                    trace: TraceContext(traceparent: traceparent, tracestate: tracestate, requestID: requestID),
                    data: Data(payload.utf8))
                pending.append((position, topic, record))
            }
            guard !pending.isEmpty else { return 0 }
            enter("waiting for the broker to acknowledge \(pending.count) records")
            let results = await producer.send(pending.map { KafkaRecord(publishing: $0.record, to: $0.topic) })
            var published: [Int64] = []
            for (row, result) in zip(pending, results) {
                switch result {
                case .success: published.append(row.position)
                case .failure(let error):
                    logger.warning("Outbox event not acknowledged; will retry", metadata: [
                        "event.id": "\(row.record.id)", "event.type": "\(row.record.type)", "error": "\(error)",
                    ])
                }
            }
            if !published.isEmpty {
                enter("marking \(published.count) records published")
                // The broker may have kept this round waiting long enough for PostgreSQL to restart meanwhile.
                try connection.ensureOpen()
                try await connection.execute(MarkPublished(positions: published), logger: logger)
            }
            Counter(label: "surge_outbox_published_total", dimensions: [("schema", configuration.schema)]).increment(by: published.count)
            return published.count
        }
    }

    private func recordLag() async throws {
        let rows = try await client.query(
            // From the pending list only (the oldest is the least position), never a pass over the whole outbox.
            """
            SELECT (SELECT count(*) FROM outbox_pending),
                   COALESCE(EXTRACT(EPOCH FROM now() - (
                       SELECT created_at FROM outbox WHERE position = (SELECT min(position) FROM outbox_pending))), 0)::float8
            """,
            logger: logger)
        for try await (count, age) in rows.decode((Int, Double).self) {
            Gauge(label: "surge_outbox_pending", dimensions: [("schema", configuration.schema)]).record(count)
            Gauge(label: "surge_outbox_lag_seconds", dimensions: [("schema", configuration.schema)]).record(age)
        }
    }

    func purge() async throws {
        let outboxSeconds = Double(configuration.outboxRetention.components.seconds)
        let inboxSeconds = Double(configuration.inboxRetention.components.seconds)
        try await client.query(
            """
            DELETE FROM outbox WHERE created_at < now() - make_interval(secs => \(outboxSeconds))
                AND NOT EXISTS (SELECT FROM outbox_pending WHERE outbox_pending.position = outbox.position)
            """, logger: logger)
        try await client.query(
            "DELETE FROM processed_events WHERE processed_at < now() - make_interval(secs => \(inboxSeconds))", logger: logger)
    }
}

/// The relay's statements run on every batch: prepared once per connection, so PostgreSQL plans them once. The batch's
/// positions are taken from the pending list first and looked up by primary key: a join let the planner hash the whole
/// outbox (a week of events) on every batch.
struct UnpublishedEvents: PostgresPreparedStatement {
    static let sql = """
        SELECT position, event_id, topic, partition_key, type, source, subject, occurred_at, traceparent, tracestate, request_id, payload::text
        FROM outbox WHERE position = ANY(ARRAY(SELECT position FROM outbox_pending ORDER BY position LIMIT $1)) ORDER BY position
        """
    typealias Row = (Int64, UUID, String, String, String, String, String, Date, String?, String?, String?, String)

    var limit: Int

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(limit)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

struct MarkPublished: PostgresPreparedStatement {
    static let sql = "DELETE FROM outbox_pending WHERE position = ANY($1)"
    typealias Row = ()

    var positions: [Int64]

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(positions)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}

extension KafkaRecord {
    public init(publishing record: EventRecord, to topic: String) {
        self.init(
            topic: topic, key: record.kafkaKey, value: record.data,
            headers: record.kafkaHeaders.map { KafkaHeader(name: $0.name, value: $0.value) })
    }
}
