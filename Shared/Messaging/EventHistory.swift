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
    /// again, pass over what was replayed. A record whose handler fails is rolled back alone and skipped.
    public static func replay(
        _ records: [EventRecord?], through handlers: EventHandlers, group: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> Replayed {
        var replayed = Replayed()
        for record in records {
            replayed.events += 1
            guard let record else {
                replayed.skipped += 1
                continue
            }
            try await connection.query("SAVEPOINT event", logger: logger)
            do {
                let first = try await connection.query(
                    """
                    INSERT INTO processed_events (consumer, event_id, event_type) VALUES (\(group), \(record.id), \(record.type))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger
                ).collect().isEmpty == false
                if !first {
                    replayed.duplicates += 1
                } else if try await handlers.apply(record, on: connection, logger: logger) {
                    replayed.applied += 1
                }
                try await connection.query("RELEASE SAVEPOINT event", logger: logger)
            } catch {
                try await connection.query("ROLLBACK TO SAVEPOINT event", logger: logger)
                replayed.skipped += 1
                logger.warning("Event skipped by the rebuild", metadata: ["event.type": "\(record.type)", "event.id": "\(record.id)", "error": "\(error)"])
            }
        }
        return replayed
    }
}
