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
/// handle are skipped.
public final class EventConsumer: Service, Sendable {
    public struct Configuration: Sendable {
        public var group: String
        public var maxAttempts: Int
        public var initialBackoff: Duration
        public var maxBackoff: Duration

        public init(group: String, maxAttempts: Int = 5, initialBackoff: Duration = .milliseconds(100), maxBackoff: Duration = .seconds(5)) {
            self.group = group
            self.maxAttempts = maxAttempts
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
        }
    }

    public enum DeadLetterHeader {
        public static let error = "surge_error"
        public static let originalTopic = "surge_original_topic"
        public static let originalPartition = "surge_original_partition"
        public static let originalOffset = "surge_original_offset"
        public static let attempts = "surge_attempts"
    }

    private let consumer: KafkaConsumer

    public init(
        configuration: Configuration, kafka: KafkaConfiguration, client: PostgresClient, producer: KafkaProducer,
        handlers: EventHandlers, logger: Logger
    ) throws {
        let processor = EventProcessor(
            configuration: configuration, client: client, producer: producer, handlers: handlers, metrics: EventMetrics(group: configuration.group),
            logger: logger)
        self.consumer = try KafkaConsumer(
            configuration: kafka, groupID: configuration.group, topics: handlers.topics.sorted(), logger: logger,
            handler: processor.handle)
    }

    public var assignedPartitionCount: Int { consumer.assignedPartitionCount }

    public func run() async throws {
        try await consumer.run()
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

    private typealias DeadLetterHeader = EventConsumer.DeadLetterHeader

    var deadLetterTopic: String { Topic.deadLetter(consumerGroup: configuration.group).name }

    @Sendable func handle(_ message: KafkaMessage) async -> KafkaConsumer.Outcome {
        let start = ContinuousClock.now
        let record: EventRecord
        let apply: EventHandlers.Prepared
        do {
            record = try EventRecord(
                kafkaKey: message.key, value: message.value, headers: message.headers.map { ($0.name, $0.value) })
            guard let prepare = handlers.preparers[record.type] else {
                metrics.count(record.type, "ignored")
                return .handled
            }
            apply = try prepare(record)
        } catch {
            return await deadLetter(message, type: message.header(EventRecord.Header.type) ?? "unknown", error: error, attempts: 0)
        }

        var attempt = 0
        var backoff = configuration.initialBackoff
        while true {
            do {
                let applied = try await applyOnce(record, apply)
                metrics.count(record.type, applied ? "applied" : "duplicate")
                metrics.timer(record.type).record(duration: ContinuousClock.now - start)
                return .handled
            } catch {
                // Stopping: the failure may be our own shutdown (a cancelled request, a closed pool), not the handler's.
                if Task.isCancelled || Task.isShuttingDownGracefully { return .abandoned }
                if error.isDatabaseUnavailable {
                    logger.warning("Database unavailable; will retry event", metadata: ["event.id": "\(record.id)", "error": "\(error)"])
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

    /// Returns false when the event had already been processed.
    private func applyOnce(_ record: EventRecord, _ apply: EventHandlers.Prepared) async throws -> Bool {
        let group = configuration.group
        let logger = self.logger
        return try await client.transaction(logger: logger) { connection in
            let inserted = try await connection.query(
                """
                INSERT INTO processed_events (consumer, event_id, event_type) VALUES (\(group), \(record.id), \(record.type))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger
            ).collect()
            guard !inserted.isEmpty else { return false }
            try await apply(connection, logger)
            return true
        }
    }

    /// Parks the record on the dead-letter topic; retries until the broker acknowledges, since moving on without
    /// it would lose the record.
    private func deadLetter(_ message: KafkaMessage, type: String, error: any Error, attempts: Int) async -> KafkaConsumer.Outcome {
        logger.error("Event dead-lettered", metadata: [
            "topic": "\(message.topic)", "partition": "\(message.partition)", "offset": "\(message.offset)",
            "event.type": "\(type)", "error": "\(String(describing: error.unwrappingTransaction))",
        ])
        var headers = message.headers
        headers.append(KafkaHeader(DeadLetterHeader.error, String(describing: error.unwrappingTransaction)))
        headers.append(KafkaHeader(DeadLetterHeader.originalTopic, message.topic))
        headers.append(KafkaHeader(DeadLetterHeader.originalPartition, String(message.partition)))
        headers.append(KafkaHeader(DeadLetterHeader.originalOffset, String(message.offset)))
        headers.append(KafkaHeader(DeadLetterHeader.attempts, String(attempts)))
        let record = KafkaRecord(topic: deadLetterTopic, key: message.key, value: message.value, headers: headers)
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
}

/// A consumer group's metrics per event type, made once rather than per record.
final class EventMetrics: Sendable {
    private let group: String
    private let counters = Mutex<[String: [String: Counter]]>([:])
    private let timers = Mutex<[String: Metrics.Timer]>([:])

    init(group: String) {
        self.group = group
    }

    func count(_ type: String, _ result: String) {
        counters.withLock { byType in
            if let counter = byType[type]?[result] { return counter }
            let counter = Counter(label: "surge_events_handled_total", dimensions: [("consumer", group), ("type", type), ("result", result)])
            byType[type, default: [:]][result] = counter
            return counter
        }.increment()
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
