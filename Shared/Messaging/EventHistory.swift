import Foundation
import Logging
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
}
