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
/// a relay publishes only while it holds an advisory lock, so one replica publishes at a time, in `position` order; a
/// relay that finds the lock taken tries again shortly, so the events its own replica wrote do not wait for the next
/// poll. A busy relay keeps the lock from batch to batch (`publishWhileBusy`).
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
        var housekeeping = Housekeeping()
        while !Task.isCancelled {
            do {
                guard let spell = try await publishWhileBusy() else {
                    // Another replica is publishing: what this one wrote may be committed after its last read.
                    await doorbell.wait(timeout: .milliseconds(20))
                    continue
                }
                try await housekeeping.after(publishing: spell.published, relay: self)
                if spell.stoppedForHousekeeping { continue }
            } catch {
                logger.warning("Outbox relay round failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            await doorbell.wait(timeout: configuration.pollInterval)
        }
    }

    /// What the relay does between busy spells, by the clock and by the events published.
    private struct Housekeeping {
        var lastPurge = ContinuousClock.now
        var lastVacuum = ContinuousClock.now
        var publishedSinceVacuum = 0

        mutating func after(publishing published: Int, relay: OutboxRelay) async throws {
            if ContinuousClock.now - lastPurge > .seconds(600) {
                try await relay.purge()
                lastPurge = .now
            }
            // Every published event leaves a dead row at the low end of `outbox_pending`, which each read walks past
            // until a vacuum clears it: under load autovacuum (a pass a minute at most) let each read walk tens of
            // thousands. A vacuum of the small table costs a few milliseconds.
            publishedSinceVacuum += published
            if publishedSinceVacuum >= OutboxRelay.vacuumEvery, ContinuousClock.now - lastVacuum > .seconds(5) {
                try await relay.client.query("VACUUM outbox_pending", logger: relay.logger)
                (publishedSinceVacuum, lastVacuum) = (0, .now)
            }
        }
    }

    /// Published events between two vacuums of the pending list; also the most one busy spell publishes before the
    /// relay lets go of its lock for its housekeeping.
    static let vacuumEvery = 2_000

    /// Publishes batch after batch while there are events to publish, holding the replicas' publishing lock; returns
    /// how many were marked published and whether it stopped only to let the housekeeping run (more may be pending),
    /// or nil when another replica holds the lock.
    ///
    /// A busy relay spends one statement per batch: the statement that marks a batch published also reads the next.
    /// The lock is a session lock on one leased connection rather than a transaction's, so that no transaction stays
    /// open across batches (it would hold back every vacuum). It is released when the spell ends, and should the
    /// release fail the connection is closed, which releases it too: a pooled connection may not keep it.
    func publishWhileBusy() async throws -> (published: Int, stoppedForHousekeeping: Bool)? {
        enter("leasing a connection")
        defer { round.withLock { $0 = nil } }
        return try await client.withConnection { connection in
            enter("taking the publishing lock")
            // The pool can hand out a connection the server has just closed (a restart) before it has noticed.
            let locked = try await connection.queryUnlessClosed("SELECT pg_try_advisory_lock(hashtext(\(lockKey)))", logger: logger)
                .first?.decode(Bool.self) ?? false
            guard locked else { return nil }
            do {
                let spell = try await publishBatches(on: connection)
                try connection.ensureOpen()
                try await connection.query("SELECT pg_advisory_unlock(hashtext(\(lockKey)))", logger: logger)
                return spell
            } catch {
                try? await connection.close()
                throw error
            }
        }
    }

    private var lockKey: String { "surge.outbox.\(configuration.schema)" }

    private func publishBatches(on connection: PostgresConnection) async throws -> (published: Int, stoppedForHousekeeping: Bool) {
        var acknowledged: [Int64] = []
        var published = 0
        while true {
            // Rings from here on are for commits this read may not see.
            doorbell.forget()
            // Each batch is a round of its own for the monitor: a busy spell may last long, a batch may not.
            enter(acknowledged.isEmpty ? "reading a batch" : "marking \(acknowledged.count) records published and reading the next batch", anew: true)
            try connection.ensureOpen()
            var pending: [(position: Int64, topic: String, record: EventRecord)] = []
            for try await row in try await connection.execute(
                MarkPublishedAndReadNext(published: acknowledged, limit: configuration.batchSize), logger: logger)
            {
                let (position, id, topic, key, type, source, subject, time, traceparent, tracestate, requestID, payload) = row
                let record = EventRecord(
                    id: id, source: source, type: type, time: time, subject: subject, partitionKey: key,
                    trace: TraceContext(traceparent: traceparent, tracestate: tracestate, requestID: requestID),
                    data: Data(payload.utf8))
                pending.append((position, topic, record))
            }
            published += acknowledged.count
            guard !pending.isEmpty else { return (published, false) }
            enter("waiting for the broker to acknowledge \(pending.count) records")
            let results = await producer.send(pending.map { KafkaRecord(publishing: $0.record, to: $0.topic) })
            acknowledged = []
            for (row, result) in zip(pending, results) {
                switch result {
                case .success: acknowledged.append(row.position)
                case .failure(let error):
                    logger.warning("Outbox event not acknowledged; will retry", metadata: [
                        "event.id": "\(row.record.id)", "event.type": "\(row.record.type)", "error": "\(error)",
                    ])
                }
            }
            Counter(label: "surge_outbox_published_total", dimensions: [("schema", configuration.schema)]).increment(by: acknowledged.count)
            // Some were not acknowledged (the broker is away): mark the others and leave the rest to a later spell.
            // After many, let go for the housekeeping.
            let unacknowledged = acknowledged.count < pending.count
            if unacknowledged || published + acknowledged.count >= Self.vacuumEvery {
                enter("marking \(acknowledged.count) records published")
                // The broker may have kept this round waiting long enough for PostgreSQL to restart meanwhile.
                try connection.ensureOpen()
                try await connection.execute(MarkPublished(positions: acknowledged), logger: logger)
                return (published + acknowledged.count, !unacknowledged)
            }
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

    private func enter(_ stage: String, anew: Bool = false) {
        round.withLock { $0 = (stage, anew ? .now : $0?.since ?? .now) }
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

/// The relay's statements run on every batch: prepared once per connection, so PostgreSQL plans them once.
///
/// Marks the batch the broker acknowledged (`$1`) published and reads the next: the rows still pending besides those,
/// in position order. The batch's positions are taken from the pending list first and looked up by primary key: a
/// join let the planner hash the whole outbox (a week of events) on every batch. Both parts see the statement's one
/// snapshot, so the read leaves out the positions the same statement takes off the list.
struct MarkPublishedAndReadNext: PostgresPreparedStatement {
    static let sql = """
        WITH published AS (DELETE FROM outbox_pending WHERE position = ANY($1))
        SELECT position, event_id, topic, partition_key, type, source, subject, occurred_at, traceparent, tracestate, request_id, payload::text
        FROM outbox WHERE position = ANY(ARRAY(SELECT position FROM outbox_pending WHERE position <> ALL($1) ORDER BY position LIMIT $2))
        ORDER BY position
        """
    typealias Row = (Int64, UUID, String, String, String, String, String, Date, String?, String?, String?, String)

    var published: [Int64]
    var limit: Int

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(published)
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
