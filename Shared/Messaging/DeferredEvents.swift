import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeKafka
import SurgePostgres
import Synchronization

// Parked records: an event whose handler waits for something another partition or topic has not delivered yet
// (`AwaitingOtherEvent`) is kept in the consumer's `deferred_events` table instead of holding its partition back.
//
// - Parking is a committed insert made before the record's offset is stored, so nothing is lost; a redelivered record
//   that is already parked finds its row (`UNIQUE (consumer, event_id)`) and is not parked twice.
// - Per-key order: a later record of the same consumer, topic and Kafka key is parked behind a parked one (checked in
//   the inbox insert, `RecordProcessed`), and the re-drive only takes the oldest parked record of each key.
// - The re-drive (one loop per consumer, next to it in `EventConsumer.run`) takes due records with `FOR UPDATE SKIP
//   LOCKED`, so the group's replicas share the table, and applies each through the same inbox insert and effect, in a
//   transaction that also deletes its row. Still waiting: tried again after a backoff doubling from
//   `redriveBackoff` to `maxRedriveBackoff`, or dead-lettered once `deferralLimit` has passed since it was parked.
//   Failing otherwise: the usual rules, `maxAttempts` tries with backoff, then the dead-letter topic.
// - It runs when a record's backoff is over, and sooner when the consumer applied a record (what a parked one waits
//   for may just have arrived), at most once per `redriveBackoff`.

/// What the consumer tells its re-drive: a record was parked, or applied (a parked one may now be applicable).
final class Deferrals: Sendable {
    let bell = Doorbell()
    /// Parked records of the group as last counted, plus those parked here since; nothing to re-drive while 0.
    let known = Atomic<Int>(0)
    /// A record was applied since the re-drive last looked: parked records are tried before their backoff is over.
    let applied = Atomic<Bool>(false)

    func noteParked() {
        known.add(1, ordering: .relaxed)
        bell.ring()
    }

    func noteApplied() {
        guard known.load(ordering: .relaxed) > 0 else { return }
        applied.store(true, ordering: .relaxed)
        bell.ring()
    }
}

extension EventProcessor {
    /// Parks the record, to be applied by the re-drive in `retryAt` or later. Waits out an unreachable database; a
    /// record that cannot be parked otherwise is dead-lettered rather than lost.
    func park(_ message: KafkaMessage, _ record: EventRecord, reason: String, retryAt delay: Duration) async -> KafkaConsumer.Outcome {
        let statement = ParkEvent(consumer: configuration.group, record: record, message: message, reason: reason, delay: delay)
        var backoff = configuration.initialBackoff
        while true {
            do {
                guard try await client.query(statement.query, logger: logger).collect().isEmpty == false else {
                    // A redelivery of a record parked already (or a copy of its event): it waits there once.
                    metrics.count(record.type, "duplicate")
                    return .handled
                }
                logger.info("Event parked until what it waits for arrives", metadata: [
                    "event.id": "\(record.id)", "event.type": "\(record.type)", "topic": "\(message.topic)", "partition": "\(message.partition)",
                    "offset": "\(message.offset)", "reason": "\(reason)",
                ])
                metrics.count(record.type, "deferred")
                deferrals.noteParked()
                return .handled
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { return .abandoned }
                guard error.isDatabaseUnavailable else {
                    return await deadLetter(message, type: record.type, error: error, attempts: 1)
                }
                logger.warning("Database unavailable; will retry parking event", metadata: ["event.id": "\(record.id)", "error": "\(error)"])
            }
            do { try await Task.sleep(for: backoff) } catch { return .abandoned }
            backoff = min(backoff * 2, configuration.maxBackoff)
        }
    }

    /// The re-drive loop: runs until cancelled.
    func redriveUntilCancelled() async {
        while !Task.isCancelled {
            let passStart = ContinuousClock.now
            var wait = configuration.maxRedriveBackoff
            // Woken by an applied record: parked records are tried before their backoff ends (each at most once per
            // `redriveBackoff`).
            let eager = deferrals.applied.exchange(false, ordering: .relaxed)
            do {
                var tried = 0
                while tried < 100, !Task.isCancelled, try await redriveOne(eager: eager) { tried += 1 }
                let (count, due) = try await parkedStatus()
                deferrals.known.store(count, ordering: .relaxed)
                metrics.parked(count)
                if tried == 100 {
                    wait = .zero
                } else if let due {
                    // Due already: taken by another replica's re-drive just now; look again shortly.
                    wait = max(.milliseconds(50), min(due, configuration.maxRedriveBackoff))
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("Re-drive of parked events failed; will retry", metadata: ["error": "\(String(reflecting: error))"])
                wait = .seconds(1)
            }
            guard wait > .zero else { continue }
            await deferrals.bell.wait(timeout: wait)
            // However many records the consumer applies, a pass at most every `redriveBackoff` (sooner only when a
            // parked record is due sooner).
            let gap = min(wait, configuration.redriveBackoff) - (ContinuousClock.now - passStart)
            if gap > .zero {
                do { try await Task.sleep(for: gap) } catch { return }
            }
        }
    }

    /// How many records the group has parked, and how long until the next one at the head of its key is due (nil:
    /// none parked). A record parked behind another of its key waits for that one, not for its own time.
    private func parkedStatus() async throws -> (Int, Duration?) {
        let group = configuration.group
        let rows = try await client.query(
            """
            SELECT (SELECT count(*) FROM deferred_events WHERE consumer = \(group)),
                   EXTRACT(EPOCH FROM (
                       SELECT min(next_attempt_at) FROM deferred_events d
                       WHERE consumer = \(group) AND NOT EXISTS (
                           SELECT 1 FROM deferred_events e WHERE e.consumer = d.consumer AND e.topic = d.topic AND e.kafka_key = d.kafka_key AND e.id < d.id)
                   ) - now())::float8
            """, logger: logger)
        for try await (count, seconds) in rows.decode((Int, Double?).self) {
            return (count, seconds.map { .milliseconds(Int64(max(0, $0) * 1000)) })
        }
        return (0, nil)
    }

    /// Takes the oldest due parked record at the head of its key and tries it; false when there was none.
    private func redriveOne(eager: Bool) async throws -> Bool {
        let logger = self.logger
        let group = configuration.group
        let minimumGap = configuration.redriveBackoff.inSeconds
        return try await client.transaction(logger: logger) { connection in
            guard let row = try await connection.query(
                """
                SELECT id, event_id, event_type, topic, kafka_partition, kafka_offset, kafka_key, value, header_names, header_values, reason,
                       attempts, failures, first_deferred_at, EXTRACT(EPOCH FROM now() - first_deferred_at)::float8
                FROM deferred_events d
                WHERE consumer = \(group)
                  AND (next_attempt_at <= now() OR (\(eager) AND last_attempt_at <= now() - make_interval(secs => \(minimumGap))))
                  AND NOT EXISTS (
                      SELECT 1 FROM deferred_events e WHERE e.consumer = d.consumer AND e.topic = d.topic AND e.kafka_key = d.kafka_key AND e.id < d.id)
                ORDER BY id
                LIMIT 1
                FOR UPDATE SKIP LOCKED
                """, logger: logger
            ).collect().first else { return false }
            let parked = try ParkedEvent(row)
            try await redrive(parked, on: connection)
            return true
        }
    }

    /// Applies a parked record inside the re-drive's transaction (which holds its row), deleting the row once applied
    /// or dead-lettered; otherwise records the try and when to try again.
    private func redrive(_ parked: ParkedEvent, on connection: PostgresConnection) async throws {
        let message = parked.message
        let record: EventRecord
        let apply: EventHandlers.Prepared
        do {
            record = try EventRecord(kafkaKey: message.key, value: message.value, headers: message.headers.map { ($0.name, $0.value) })
            guard let prepare = handlers.preparers[record.type], let effect = try prepare(record) else {
                metrics.count(record.type, "ignored")
                try await connection.query("DELETE FROM deferred_events WHERE id = \(parked.id)", logger: logger)
                return
            }
            apply = effect
        } catch {
            try await deadLetterParked(parked, error: String(describing: error), attempts: parked.attempts, on: connection)
            return
        }

        try await connection.query("SAVEPOINT redrive", logger: logger)
        do {
            let inserted = try await connection.query(
                """
                INSERT INTO processed_events (consumer, event_id, event_type) VALUES (\(configuration.group), \(record.id), \(record.type))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger
            ).collect().isEmpty == false
            if inserted {
                try await apply(connection, logger)
                try await BeforeCommit.writeGathered(on: connection, logger: logger)
            }
            try await connection.query("DELETE FROM deferred_events WHERE id = \(parked.id)", logger: logger)
            metrics.count(record.type, inserted ? "applied" : "duplicate")
            logger.info("Parked event applied", metadata: [
                "event.id": "\(record.id)", "event.type": "\(record.type)", "attempts": "\(parked.attempts)",
                "waited": "\(String(format: "%.1f", parked.age)) s", "duplicate": "\(!inserted)",
            ])
            return
        } catch {
            // Stopping, or the database went away: the row stays parked as it was.
            if Task.isCancelled || error.isDatabaseUnavailable { throw error }
            try await connection.query("ROLLBACK TO SAVEPOINT redrive", logger: logger)
            BeforeCommit.discardGathered()
            if let awaiting = error.unwrappingTransaction as? any AwaitingOtherEvent {
                guard parked.age < configuration.deferralLimit.inSeconds else {
                    try await deadLetterParked(
                        parked, error: "still waiting after \(Int(parked.age)) s: \(awaiting.awaited)", attempts: parked.attempts + 1,
                        reason: awaiting.awaited, on: connection)
                    return
                }
                let delay = backoff(configuration.redriveBackoff, doubled: parked.attempts, max: configuration.maxRedriveBackoff)
                try await connection.query(
                    """
                    UPDATE deferred_events SET attempts = attempts + 1, reason = \(awaiting.awaited), last_attempt_at = now(),
                        next_attempt_at = now() + make_interval(secs => \(delay.inSeconds))
                    WHERE id = \(parked.id)
                    """, logger: logger)
            } else {
                let failures = parked.failures + 1
                guard failures < configuration.maxAttempts else {
                    try await deadLetterParked(
                        parked, error: String(describing: error.unwrappingTransaction), attempts: parked.attempts + failures, on: connection)
                    return
                }
                logger.info("Parked event's handler failed; retrying", metadata: [
                    "event.id": "\(record.id)", "event.type": "\(record.type)", "failures": "\(failures)",
                    "error": "\(String(describing: error.unwrappingTransaction))",
                ])
                metrics.count(record.type, "retried")
                let delay = backoff(configuration.initialBackoff, doubled: failures - 1, max: configuration.maxBackoff)
                try await connection.query(
                    """
                    UPDATE deferred_events SET failures = \(failures), last_attempt_at = now(),
                        next_attempt_at = now() + make_interval(secs => \(delay.inSeconds))
                    WHERE id = \(parked.id)
                    """, logger: logger)
            }
        }
    }

    /// Publishes the parked record's dead letter (once: a failed publish leaves the row for the next pass) and deletes
    /// its row.
    private func deadLetterParked(
        _ parked: ParkedEvent, error: String, attempts: Int, reason: String? = nil, on connection: PostgresConnection
    ) async throws {
        let record = deadLetterRecord(
            parked.message, type: parked.type, error: error, attempts: attempts,
            extra: [
                KafkaHeader(DeadLetterHeader.deferredReason, reason ?? parked.reason),
                KafkaHeader(DeadLetterHeader.deferredSince, ISO8601DateFormatter().string(from: parked.firstDeferredAt)),
            ])
        _ = try await producer.send(record)
        metrics.count(parked.type, "deadlettered")
        try await connection.query("DELETE FROM deferred_events WHERE id = \(parked.id)", logger: logger)
    }

    private func backoff(_ initial: Duration, doubled times: Int, max limit: Duration) -> Duration {
        min(initial * (1 << min(max(times, 0), 20)), limit)
    }
}

/// A parked record as the re-drive reads it.
struct ParkedEvent {
    var id: Int64
    var eventID: UUID
    var type: String
    var reason: String
    var attempts: Int
    var failures: Int
    var firstDeferredAt: Date
    /// Seconds since it was first parked.
    var age: Double
    var message: KafkaMessage

    init(_ row: PostgresRow) throws {
        let (id, eventID, type, topic, partition, offset, key, value, headerNames, headerValues, reason, attempts, failures, first, age) = try row.decode(
            (Int64, UUID, String, String, Int32, Int64, ByteBuffer?, ByteBuffer?, [String], [ByteBuffer], String, Int, Int, Date, Double).self)
        self.id = id
        self.eventID = eventID
        self.type = type
        self.reason = reason
        self.attempts = attempts
        self.failures = failures
        self.firstDeferredAt = first
        self.age = age
        let headers = zip(headerNames, headerValues).map { KafkaHeader(name: $0, value: Data($1.readableBytesView)) }
        self.message = KafkaMessage(
            topic: topic, partition: partition, offset: offset, key: key.map { Data($0.readableBytesView) },
            value: value.map { Data($0.readableBytesView) }, headers: headers)
    }
}

/// The insert that parks a record; a record parked already (a redelivery) is left as it is and returns no row.
struct ParkEvent {
    var consumer: String
    var record: EventRecord
    var message: KafkaMessage
    var reason: String
    var delay: Duration

    var query: PostgresQuery {
        let names = message.headers.map(\.name)
        let values = message.headers.map { ByteBuffer(bytes: $0.value) }
        let key = message.key.map { ByteBuffer(bytes: $0) }
        let value = message.value.map { ByteBuffer(bytes: $0) }
        return """
            INSERT INTO deferred_events (consumer, event_id, event_type, topic, kafka_partition, kafka_offset, kafka_key, value, header_names,
                                         header_values, reason, next_attempt_at)
            VALUES (\(consumer), \(record.id), \(record.type), \(message.topic), \(message.partition), \(message.offset), \(key), \(value),
                    \(names), \(values), \(reason), now() + make_interval(secs => \(delay.inSeconds)))
            ON CONFLICT (consumer, event_id) DO NOTHING RETURNING 1
            """
    }
}

extension Duration {
    /// In seconds, for SQL intervals and comparisons with ages read from the database.
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
