import Foundation
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import SurgeContracts
import SurgeKafka
import SurgePostgres
import Synchronization

/// Consumes CloudEvents for one consumer group and applies each at most once in effect.
///
/// Each record's effect runs in a transaction that first records `(consumer, event id)` in `processed_events`; a
/// redelivered event finds its row and has no second effect. A record that cannot be decoded goes straight to the
/// group's dead-letter topic; one whose handler keeps failing goes there after `maxAttempts` tries with exponential
/// backoff. While the database is unreachable the consumer waits instead of dead-lettering. Types the group does not
/// handle are skipped; events its handlers say can have no effect are passed over without a transaction
/// (`PassedOverEvents`).
///
/// A handler that waits for another partition or topic (`AwaitingOtherEvent`) is tried once more, then its record is
/// parked in `deferred_events` and the partition moves on; a later record of the same topic and Kafka key is parked
/// behind it, so a key's order holds. A re-drive running alongside the consumer applies parked records through the
/// same inbox transaction once what they wait for has arrived (`DeferredEvents.swift`).
public final class EventConsumer: Service, Sendable {
    public struct Configuration: Sendable {
        public var group: String
        public var maxAttempts: Int
        public var initialBackoff: Duration
        public var maxBackoff: Duration
        /// How long a parked record may wait for what it awaits, from its first deferral, before it is dead-lettered.
        public var deferralLimit: Duration
        /// The re-drive's wait before trying a parked record again, doubled after each try that finds it still waiting,
        /// up to `maxRedriveBackoff`. A record applied by the consumer wakes the re-drive earlier.
        public var redriveBackoff: Duration
        public var maxRedriveBackoff: Duration
        /// The most records of a partition applied in one transaction (see `EventProcessor.handle(partition:)`); 1
        /// gives every record its own transaction.
        public var batchLimit: Int

        public init(
            group: String, maxAttempts: Int = 5, initialBackoff: Duration = .milliseconds(100), maxBackoff: Duration = .seconds(5),
            deferralLimit: Duration = .seconds(15 * 60), redriveBackoff: Duration = .milliseconds(200), maxRedriveBackoff: Duration = .seconds(5),
            batchLimit: Int = 32
        ) {
            self.group = group
            self.maxAttempts = maxAttempts
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
            self.deferralLimit = deferralLimit
            self.redriveBackoff = redriveBackoff
            self.maxRedriveBackoff = maxRedriveBackoff
            self.batchLimit = max(1, batchLimit)
        }
    }

    public enum DeadLetterHeader {
        public static let error = "surge_error"
        public static let originalTopic = "surge_original_topic"
        public static let originalPartition = "surge_original_partition"
        public static let originalOffset = "surge_original_offset"
        public static let attempts = "surge_attempts"
        /// On a parked record that waited past the deferral limit: what it waited for, and since when (ISO 8601).
        public static let deferredReason = "surge_deferred_reason"
        public static let deferredSince = "surge_deferred_since"
    }

    private let consumer: KafkaConsumer
    private let processor: EventProcessor

    public init(
        configuration: Configuration, kafka: KafkaConfiguration, client: PostgresClient, producer: KafkaProducer,
        handlers: EventHandlers, logger: Logger
    ) throws {
        let metrics = EventMetrics(group: configuration.group)
        // A first dead letter must show as an increase: its series exists from the start, at zero.
        for type in handlers.preparers.keys { metrics.startAtZero(type, "deadlettered") }
        let processor = EventProcessor(
            configuration: configuration, client: client, producer: producer, handlers: handlers, metrics: metrics, logger: logger)
        self.processor = processor
        self.consumer = try KafkaConsumer(
            configuration: kafka, groupID: configuration.group, topics: handlers.topics.sorted(), logger: logger,
            batchHandler: processor.handle(partitions:))
    }

    public var assignedPartitionCount: Int { consumer.assignedPartitionCount }

    /// Consumes until graceful shutdown or cancellation, with the re-drive of parked records alongside.
    public func run() async throws {
        let processor = self.processor
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await processor.redriveUntilCancelled() }
            group.addTask {
                await processor.passedOver.recordUntilCancelled(group: processor.configuration.group, client: processor.client, logger: processor.logger)
            }
            defer { group.cancelAll() }
            try await consumer.run()
        }
    }

    public func checkConnectivity() async throws {
        try await consumer.checkConnectivity()
    }
}

/// Applies one record: decode, inbox check and effect in one transaction, retries, dead-lettering.
struct EventProcessor: Sendable {
    let configuration: EventConsumer.Configuration
    let client: PostgresClient
    let producer: KafkaProducer
    let handlers: EventHandlers
    let metrics: EventMetrics
    let logger: Logger
    /// What the consumer tells the re-drive of parked records.
    let deferrals = Deferrals()
    let passedOver = PassedOverEvents()

    typealias DeadLetterHeader = EventConsumer.DeadLetterHeader

    var deadLetterTopic: String { Topic.deadLetter(consumerGroup: configuration.group).name }

    /// What a record needs, decided before any transaction.
    enum Preparation {
        /// A type the group does not handle.
        case ignored(type: String)
        /// An event its handler says can have no effect here.
        case passedOver(EventRecord)
        /// A record that cannot be decoded: it goes to the dead-letter topic.
        case undecodable(type: String, error: any Error)
        case apply(EventRecord, EventHandlers.Prepared)
    }

    func prepare(_ message: KafkaMessage) -> Preparation {
        do {
            let record = try EventRecord(kafkaKey: message.key, value: message.value, headers: message.headers.map { ($0.name, $0.value) })
            guard let prepare = handlers.preparers[record.type] else { return .ignored(type: record.type) }
            guard let effect = try prepare(record) else { return .passedOver(record) }
            return .apply(record, effect)
        } catch {
            return .undecodable(type: message.header(EventRecord.Header.type) ?? "unknown", error: error)
        }
    }

    /// Handles one partition's records of a poll, in order; returns how many were handled (see
    /// `KafkaConsumer.PartitionHandler`).
    ///
    /// Up to `batchLimit` records that have an effect are applied in one transaction: each is still checked against
    /// the inbox and the parked records of its key, in order, so the result is what one transaction per record would
    /// have done, with one `BEGIN`/`COMMIT` (one WAL flush) for them all. When anything in the batch fails (a handler's
    /// error, a record waiting for another event or behind a parked one, the database), the transaction rolls back
    /// and each of its records takes the one-at-a-time path with its retries, parking and dead-lettering.
    @Sendable func handle(partition messages: [KafkaMessage]) async -> Int {
        var handled = 0
        while handled < messages.count {
            let chunk = messages[handled..<min(handled + configuration.batchLimit, messages.count)]
            let preparations = chunk.map(prepare)
            let effects = preparations.count { if case .apply = $0 { true } else { false } }
            let together = effects > 1 ? await applyTogether(Array(zip(chunk, preparations))) : false
            for (message, preparation) in zip(chunk, preparations) {
                if together, case .apply = preparation {
                    handled += 1
                    continue
                }
                guard await handle(message, preparation) == .handled else { return handled }
                handled += 1
            }
        }
        return handled
    }

    /// Handles a poll's records. When they are spread over several partitions but fit in one batch, the records with
    /// an effect are applied in one transaction across the partitions (each partition's still in order); otherwise,
    /// and when that transaction fails, each partition is handled on its own (`handle(partition:)`), concurrently.
    @Sendable func handle(partitions: [[KafkaMessage]]) async -> [Int] {
        if partitions.count > 1, partitions.reduce(0, { $0 + $1.count }) <= configuration.batchLimit {
            let preparations = partitions.map { $0.map(prepare) }
            let records = zip(partitions, preparations).flatMap { zip($0, $1) }
            if records.count(where: { if case .apply = $1 { true } else { false } }) > 1, await applyTogether(records) {
                var counts: [Int] = []
                for (messages, prepared) in zip(partitions, preparations) {
                    var handled = 0
                    for (message, preparation) in zip(messages, prepared) {
                        if case .apply = preparation {
                            handled += 1
                            continue
                        }
                        guard await handle(message, preparation) == .handled else { break }
                        handled += 1
                    }
                    counts.append(handled)
                }
                return counts
            }
        }
        return await withTaskGroup(of: (Int, Int).self) { group in
            for (index, messages) in partitions.enumerated() {
                group.addTask { (index, await handle(partition: messages)) }
            }
            var counts = [Int](repeating: 0, count: partitions.count)
            for await (index, count) in group { counts[index] = count }
            return counts
        }
    }

    private func handle(_ message: KafkaMessage, _ preparation: Preparation) async -> KafkaConsumer.Outcome {
        let start = ContinuousClock.now
        let record: EventRecord
        let apply: EventHandlers.Prepared
        switch preparation {
        case .ignored(let type):
            metrics.count(type, "ignored")
            return .handled
        case .passedOver(let record):
            passedOver.note(record.id, type: record.type)
            metrics.count(record.type, "passed-over")
            return .handled
        case .undecodable(let type, let error):
            return await deadLetter(message, type: type, error: error, attempts: 0)
        case .apply(let prepared, let effect):
            record = prepared
            apply = effect
        }

        var attempt = 0
        var awaitingRetried = false
        var backoff = configuration.initialBackoff
        while true {
            do {
                switch try await applyOnce(record, message, apply) {
                case .applied:
                    metrics.count(record.type, "applied")
                    deferrals.noteApplied()
                case .duplicate:
                    metrics.count(record.type, "duplicate")
                case .behind(let parked):
                    // A record of the same key is parked: this one may depend on it, so it may not overtake it.
                    return await park(message, record, reason: "behind parked event \(parked.key) of the same key", retryAt: .zero)
                }
                metrics.timer(record.type).record(duration: ContinuousClock.now - start)
                return .handled
            } catch {
                // Stopping: the failure may be our own shutdown (a cancelled request, a closed pool), not the handler's.
                if Task.isCancelled || Task.isShuttingDownGracefully { return .abandoned }
                if error.isDatabaseUnavailable {
                    logger.warning("Database unavailable; will retry event", metadata: ["event.id": "\(record.id)", "error": "\(error)"])
                } else if let awaiting = error.unwrappingTransaction as? any AwaitingOtherEvent {
                    // Ahead of another partition or topic: one quick retry (it may be a moment away), then parked, so
                    // the partition, and what this event waits for, move on.
                    if awaitingRetried {
                        return await park(message, record, reason: awaiting.awaited, retryAt: configuration.redriveBackoff)
                    }
                    awaitingRetried = true
                    logger.info("Event waits for another event; retrying once before parking it", metadata: [
                        "event.id": "\(record.id)", "event.type": "\(record.type)", "awaited": "\(awaiting.awaited)",
                    ])
                    metrics.count(record.type, "retried")
                } else {
                    attempt += 1
                    if attempt >= configuration.maxAttempts {
                        return await deadLetter(message, type: record.type, error: error, attempts: attempt)
                    }
                    logger.info("Event handler failed; retrying", metadata: [
                        "event.id": "\(record.id)", "event.type": "\(record.type)", "attempt": "\(attempt)", "error": "\(error)",
                    ])
                    metrics.count(record.type, "retried")
                }
            }
            do {
                try await Task.sleep(for: backoff)
            } catch {
                return .abandoned
            }
            backoff = min(backoff * 2, configuration.maxBackoff)
        }
    }

    enum Applied { case applied, duplicate, behind(UUID) }

    /// Records the event as processed and applies its effect, in one transaction; the inbox insert also checks, in
    /// the same statement, that no record of the same topic and key is parked (`behind`, nothing done).
    private func applyOnce(_ record: EventRecord, _ message: KafkaMessage, _ apply: EventHandlers.Prepared) async throws -> Applied {
        try await client.transaction(logger: logger) { connection in
            try await recordAndApply(record, message, apply, on: connection)
        }
    }

    /// The inbox statement and, unless it finds the record processed or a record of its key parked, the effect, on
    /// the transaction's connection.
    private func recordAndApply(
        _ record: EventRecord, _ message: KafkaMessage, _ apply: EventHandlers.Prepared, on connection: PostgresConnection
    ) async throws -> Applied {
        switch try await recordProcessed([(message, record)], on: connection) {
        case .behind(let parked): return .behind(parked)
        case .fresh(let ids): guard ids.contains(record.id) else { return .duplicate }
        }
        try await apply(connection, logger)
        return .applied
    }

    enum Inbox { case fresh(Set<UUID>), behind(UUID) }

    /// The inbox insert of the records, in one statement: the ids not processed before, or, with nothing inserted, the
    /// oldest parked event of a key one of them has.
    private func recordProcessed(_ records: [(KafkaMessage, EventRecord)], on connection: PostgresConnection) async throws -> Inbox {
        let statement = RecordProcessed(
            consumer: configuration.group, eventIDs: records.map(\.1.id), types: records.map(\.1.type), topics: records.map(\.0.topic),
            keys: records.map(\.0.key))
        var fresh: Set<UUID> = []
        for try await (eventID, parked) in try await connection.execute(statement, logger: logger) {
            if let parked { return .behind(parked) }
            if let eventID { fresh.insert(eventID) }
        }
        return .fresh(fresh)
    }

    /// Applies the records with an effect in one transaction; false, with nothing applied, when any of them fails
    /// or must wait (behind a parked record of its key, or awaiting another event).
    private func applyTogether(_ records: [(KafkaMessage, Preparation)]) async -> Bool {
        let start = ContinuousClock.now
        do {
            let results = try await client.transaction(logger: logger) { connection in
                let batch = records.compactMap { message, preparation -> (KafkaMessage, EventRecord, EventHandlers.Prepared)? in
                    if case .apply(let record, let effect) = preparation { (message, record, effect) } else { nil }
                }
                // One inbox statement for the whole batch; a record of a parked key sends the batch one at a time.
                guard case .fresh(var fresh) = try await recordProcessed(batch.map { ($0.0, $0.1) }, on: connection) else {
                    throw BatchInterrupted()
                }
                var results: [(type: String, applied: Bool)] = []
                for (_, record, effect) in batch {
                    // A record twice in one batch is applied once.
                    guard fresh.remove(record.id) != nil else {
                        results.append((record.type, false))
                        continue
                    }
                    try await effect(connection, logger)
                    results.append((record.type, true))
                }
                return results
            }
            let each = (ContinuousClock.now - start) / results.count
            for (type, applied) in results {
                metrics.count(type, applied ? "applied" : "duplicate")
                metrics.timer(type).record(duration: each)
            }
            if results.contains(where: \.applied) { deferrals.noteApplied() }
            metrics.batch(results.count)
            return true
        } catch {
            logger.info("Batch rolled back; applying its records one at a time", metadata: ["error": "\(String(describing: error.unwrappingTransaction).prefix(300))"])
            metrics.batchRolledBack()
            return false
        }
    }

    private struct BatchInterrupted: Error {}

    /// Parks the record on the dead-letter topic; retries until the broker acknowledges, since moving on without
    /// it would lose the record.
    func deadLetter(_ message: KafkaMessage, type: String, error: any Error, attempts: Int) async -> KafkaConsumer.Outcome {
        let record = deadLetterRecord(message, type: type, error: String(describing: error.unwrappingTransaction), attempts: attempts)
        while true {
            do {
                _ = try await producer.send(record)
                metrics.count(type, "deadlettered")
                return .handled
            } catch {
                logger.warning("Dead-letter publish failed; retrying", metadata: ["error": "\(error)"])
                do { try await Task.sleep(for: .seconds(1)) } catch { return .abandoned }
            }
        }
    }

    /// The dead letter of a record: its key, value and headers, and why it failed where.
    func deadLetterRecord(_ message: KafkaMessage, type: String, error: String, attempts: Int, extra: [KafkaHeader] = []) -> KafkaRecord {
        logger.error("Event dead-lettered", metadata: [
            "topic": "\(message.topic)", "partition": "\(message.partition)", "offset": "\(message.offset)",
            "event.type": "\(type)", "error": "\(error)",
        ])
        var headers = message.headers
        headers.append(KafkaHeader(DeadLetterHeader.error, error))
        headers.append(KafkaHeader(DeadLetterHeader.originalTopic, message.topic))
        headers.append(KafkaHeader(DeadLetterHeader.originalPartition, String(message.partition)))
        headers.append(KafkaHeader(DeadLetterHeader.originalOffset, String(message.offset)))
        headers.append(KafkaHeader(DeadLetterHeader.attempts, String(attempts)))
        headers.append(contentsOf: extra)
        return KafkaRecord(topic: deadLetterTopic, key: message.key, value: message.value, headers: headers)
    }
}

/// The inbox insert of records (prepared once per connection), with the per-key check in the same statement: if a record
/// of the same consumer, topic and Kafka key as one of them is parked, nothing is inserted and a single row names the
/// oldest such parked event; otherwise a row per event id inserted (those not processed before). With nothing parked
/// the check is one probe of an empty index range per record.
struct RecordProcessed: PostgresPreparedStatement {
    static let sql = """
        WITH batch AS (
            SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::bytea[], $6::bool[]) AS b(event_id, event_type, topic, kafka_key, keyed)
        ), parked AS (
            SELECT d.event_id FROM batch b
            JOIN deferred_events d ON d.consumer = $1 AND d.topic = b.topic AND d.kafka_key = b.kafka_key
            WHERE b.keyed ORDER BY d.id LIMIT 1
        ), inserted AS (
            INSERT INTO processed_events (consumer, event_id, event_type)
            SELECT DISTINCT ON (event_id) $1, event_id, event_type FROM batch WHERE NOT EXISTS (SELECT 1 FROM parked)
            ON CONFLICT DO NOTHING RETURNING event_id
        )
        SELECT event_id, NULL::uuid FROM inserted
        UNION ALL
        SELECT NULL::uuid, event_id FROM parked
        """
    static var bindingDataTypes: [PostgresDataType] { [.text, .uuidArray, .textArray, .textArray, .byteaArray, .boolArray] }
    typealias Row = (eventID: UUID?, parked: UUID?)

    var consumer: String
    var eventIDs: [UUID]
    var types: [String]
    var topics: [String]
    var keys: [Data?]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(consumer)
        bindings.append(eventIDs)
        bindings.append(types)
        bindings.append(topics)
        // PostgresNIO encodes no NULL inside an array: an absent key travels as empty bytes, flagged unkeyed.
        bindings.append(keys.map { ByteBuffer(bytes: $0 ?? Data()) })
        bindings.append(keys.map { $0 != nil })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (eventID, parked) = try row.decode((UUID?, UUID?).self)
        return (eventID, parked)
    }
}

/// A consumer group's metrics per event type, made once rather than per record.
final class EventMetrics: Sendable {
    private let group: String
    private let counters = Mutex<[String: [String: Counter]]>([:])
    private let timers = Mutex<[String: Metrics.Timer]>([:])

    private let parkedGauge: Gauge
    private let batchedCounter: Counter
    private let batchesCounter: Counter
    private let rolledBackCounter: Counter

    init(group: String) {
        self.group = group
        self.parkedGauge = Gauge(label: "surge_events_deferred", dimensions: [("consumer", group)])
        self.batchesCounter = Counter(label: "surge_event_batches_total", dimensions: [("consumer", group)])
        self.batchedCounter = Counter(label: "surge_events_batched_total", dimensions: [("consumer", group)])
        self.rolledBackCounter = Counter(label: "surge_event_batches_rolled_back_total", dimensions: [("consumer", group)])
    }

    /// A batch whose transaction failed: its records are applied one at a time.
    func batchRolledBack() {
        rolledBackCounter.increment()
    }

    /// A transaction that applied `records` records together.
    func batch(_ records: Int) {
        batchesCounter.increment()
        batchedCounter.increment(by: records)
    }

    func count(_ type: String, _ result: String) {
        counter(type, result).increment()
    }

    func startAtZero(_ type: String, _ result: String) {
        _ = counter(type, result)
    }

    private func counter(_ type: String, _ result: String) -> Counter {
        counters.withLock { byType in
            if let counter = byType[type]?[result] { return counter }
            let counter = Counter(label: "surge_events_handled_total", dimensions: [("consumer", group), ("type", type), ("result", result)])
            byType[type, default: [:]][result] = counter
            return counter
        }
    }

    /// The group's parked records (`deferred_events`), shared by its replicas.
    func parked(_ count: Int) {
        parkedGauge.record(count)
    }

    func timer(_ type: String) -> Metrics.Timer {
        timers.withLock { timers in
            if let timer = timers[type] { return timer }
            let timer = Metrics.Timer(label: "surge_event_handle_seconds", dimensions: [("consumer", group), ("type", type)])
            timers[type] = timer
            return timer
        }
    }
}
