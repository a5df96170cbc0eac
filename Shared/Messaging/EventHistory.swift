import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeKafka
import Synchronization

/// Every record of some topics from the earliest offset, in the order things happened: each partition in offset order
/// (as a consumer reads it), partitions merged by event time (ties by topic and partition). A record that cannot be
/// read as an event is nil and comes first among equals, so a rebuild can count it. Rebuilds replay this through a
/// service's own handlers.
public enum EventHistory {
    public static func read(_ topics: [String], configuration: KafkaConfiguration, logger: Logger) async throws -> [EventRecord?] {
        let reader = try KafkaTopicReader(configuration: configuration, logger: logger)
        let collected = Mutex<[KafkaTopicReader.Partition: [KafkaMessage]]>([:])
        _ = try await reader.readAll(topics) { message in
            collected.withLock { $0[KafkaTopicReader.Partition(topic: message.topic, partition: message.partition), default: []].append(message) }
        }
        let partitions = collected.withLock { $0 }.sorted { ($0.key.topic, $0.key.partition) < ($1.key.topic, $1.key.partition) }.map { messages in
            messages.value.map { message in
                try? EventRecord(kafkaKey: message.key, value: message.value, headers: message.headers.map { ($0.name, $0.value) })
            }
        }
        var heads = Array(repeating: 0, count: partitions.count)
        var merged: [EventRecord?] = []
        while true {
            var next: Int?
            for index in partitions.indices where heads[index] < partitions[index].count {
                if let best = next, time(partitions[best][heads[best]]) <= time(partitions[index][heads[index]]) { continue }
                next = index
            }
            guard let next else { return merged }
            merged.append(partitions[next][heads[next]])
            heads[next] += 1
        }
    }

    private static func time(_ record: EventRecord?) -> Date { record?.time ?? .distantPast }

    /// What a replay did with the records it was given.
    public struct Replayed: Sendable {
        public var events = 0
        public var applied = 0
        public var duplicates = 0
        /// Unreadable records, and those whose handler failed (the incremental path dead-lettered them).
        public var skipped = 0
    }

    /// Applies `records` in order through `handlers` on `connection` (inside the caller's transaction), each recorded
    /// as processed by `group` as the inbox does, so a duplicate is applied once and the group's replicas, started
    /// again, pass over what was replayed. A record whose handler fails is rolled back alone and skipped. The caller
    /// has emptied `processed_events` (a rebuild starts from nothing), so duplicates are found in memory.
    ///
    /// Records go in chunks of `chunkSize`, each under one savepoint and recorded as processed in one statement; only
    /// a chunk in which a handler failed is rolled back and applied again one savepoint per record, so the failing
    /// record is skipped alone. A rebuild thus costs the handlers' own statements and little more.
    public static func replay(
        _ records: [EventRecord?], through handlers: EventHandlers, group: String, on connection: PostgresConnection, logger: Logger,
        chunkSize: Int = 1000
    ) async throws -> Replayed {
        var replayed = Replayed()
        var processed = Set<UUID>()
        var start = records.startIndex
        while start < records.endIndex {
            let chunk = records[start..<min(start + chunkSize, records.endIndex)]
            start = chunk.endIndex
            try await connection.query("SAVEPOINT chunk", logger: logger)
            var outcome: Chunk
            do {
                outcome = try await apply(chunk, through: handlers, after: processed, guarded: false, on: connection, logger: logger)
            } catch {
                try await connection.query("ROLLBACK TO SAVEPOINT chunk", logger: logger)
                outcome = try await apply(chunk, through: handlers, after: processed, guarded: true, on: connection, logger: logger)
            }
            try await connection.query(
                """
                INSERT INTO processed_events (consumer, event_id, event_type)
                SELECT \(group), id, type FROM unnest(\(outcome.processed.map(\.id))::uuid[], \(outcome.processed.map(\.type))::text[]) AS p (id, type)
                """, logger: logger)
            try await connection.query("RELEASE SAVEPOINT chunk", logger: logger)
            processed.formUnion(outcome.processed.map(\.id))
            replayed.events += chunk.count
            replayed.applied += outcome.applied
            replayed.duplicates += outcome.duplicates
            replayed.skipped += outcome.skipped
        }
        return replayed
    }

    private struct Chunk {
        var processed: [(id: UUID, type: String)] = []
        var applied = 0
        var duplicates = 0
        var skipped = 0
    }

    /// One chunk's records in order; `guarded` puts each under its own savepoint and skips the ones that fail.
    private static func apply(
        _ records: ArraySlice<EventRecord?>, through handlers: EventHandlers, after earlier: Set<UUID>, guarded: Bool, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> Chunk {
        var chunk = Chunk()
        var seen = Set<UUID>()
        for record in records {
            guard let record else {
                chunk.skipped += 1
                continue
            }
            guard !earlier.contains(record.id), seen.insert(record.id).inserted else {
                chunk.duplicates += 1
                continue
            }
            if guarded { try await connection.query("SAVEPOINT event", logger: logger) }
            do {
                if try await handlers.apply(record, on: connection, logger: logger) { chunk.applied += 1 }
                if guarded { try await connection.query("RELEASE SAVEPOINT event", logger: logger) }
            } catch where guarded {
                try await connection.query("ROLLBACK TO SAVEPOINT event", logger: logger)
                seen.remove(record.id)
                chunk.skipped += 1
                logger.warning("Event skipped by the rebuild", metadata: ["event.type": "\(record.type)", "event.id": "\(record.id)", "error": "\(error)"])
                continue
            }
            chunk.processed.append((record.id, record.type))
        }
        return chunk
    }
}
