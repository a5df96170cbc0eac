import CRdKafka
import Foundation
import Logging

/// Reads whole topics, from each partition's earliest offset to the end it had when reading began, each partition in
/// order: a rebuild's input. It assigns itself the partitions (no consumer group, nothing committed), so the
/// group's offsets stay as they were.
public final class KafkaTopicReader: Sendable {
    public struct Partition: Hashable, Sendable {
        public var topic: String
        public var partition: Int32

        public init(topic: String, partition: Int32) {
            self.topic = topic
            self.partition = partition
        }
    }

    private let handle: KafkaHandle
    private let logger: Logger

    public init(configuration: KafkaConfiguration, logger: Logger) throws {
        handle = try KafkaHandle.assigningConsumer(configuration: configuration, properties: ["auto.offset.reset": "earliest"], logger: logger)
        self.logger = logger
    }

    deinit { _ = handle.destroy { pointer in _ = rd_kafka_consumer_close(pointer) } }

    public enum ReadError: Error, CustomStringConvertible {
        case stalled(after: Duration, partitionsLeft: Int)
        case record(topic: String, partition: Int32, offset: Int64, any Error)

        public var description: String {
            switch self {
            case .stalled(let after, let left): "no record arrived for \(after) with \(left) partitions still to read"
            case .record(let topic, let partition, let offset, let error): "record \(topic)/\(partition)@\(offset): \(error)"
            }
        }
    }

    /// Hands every record of `topics` to `body`, up to the end each partition had at the start, and returns those
    /// ends. Throws when no record arrives for `stallTimeout` while some are still due.
    public func readAll(
        _ topics: [String], stallTimeout: Duration = .seconds(30), _ body: @escaping @Sendable (KafkaMessage) throws -> Void
    ) async throws -> [Partition: Int64] {
        let handle = self.handle
        return try await offThePool { () throws -> [Partition: Int64] in
            let ranges = try handle.withPointer { pointer throws(KafkaError) in try Self.ranges(of: topics, on: pointer) }
            var remaining = ranges.filter { $0.value.low < $0.value.high }
            try handle.withPointer { pointer throws(KafkaError) in
                let list = rd_kafka_topic_partition_list_new(Int32(max(remaining.count, 1)))!
                defer { rd_kafka_topic_partition_list_destroy(list) }
                for (partition, range) in remaining {
                    rd_kafka_topic_partition_list_add(list, partition.topic, partition.partition).pointee.offset = range.low
                }
                let assigned = rd_kafka_assign(pointer, list)
                guard assigned == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(assigned) }
            }
            var lastProgress = ContinuousClock.now
            while !remaining.isEmpty {
                let polled = try handle.withPointer { pointer throws(KafkaError) -> KafkaMessage? in
                    guard let message = rd_kafka_consumer_poll(pointer, 200) else { return nil }
                    defer { rd_kafka_message_destroy(message) }
                    guard message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(message.pointee.err) }
                    return KafkaMessage(copying: message)
                }
                guard let record = polled else {
                    let waited = ContinuousClock.now - lastProgress
                    guard waited < stallTimeout else { throw ReadError.stalled(after: waited, partitionsLeft: remaining.count) }
                    continue
                }
                lastProgress = ContinuousClock.now
                let partition = Partition(topic: record.topic, partition: record.partition)
                guard let range = remaining[partition], record.offset < range.high else { continue }
                do {
                    try body(record)
                } catch {
                    throw ReadError.record(topic: record.topic, partition: record.partition, offset: record.offset, error)
                }
                if record.offset + 1 >= range.high { remaining[partition] = nil }
            }
            _ = try handle.withPointer { pointer throws(KafkaError) in rd_kafka_assign(pointer, nil) }
            return ranges.mapValues(\.high)
        }
    }

    /// Each partition's earliest and end offsets.
    private static func ranges(of topics: [String], on pointer: OpaquePointer) throws(KafkaError) -> [Partition: (low: Int64, high: Int64)] {
        var ranges: [Partition: (low: Int64, high: Int64)] = [:]
        for topic in topics {
            for partition in try partitions(of: topic, on: pointer) {
                var low: Int64 = 0
                var high: Int64 = 0
                let error = rd_kafka_query_watermark_offsets(pointer, topic, partition, &low, &high, 10_000)
                guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error) }
                ranges[Partition(topic: topic, partition: partition)] = (low, high)
            }
        }
        return ranges
    }

    static func partitions(of topic: String, on pointer: OpaquePointer) throws(KafkaError) -> [Int32] {
        guard let topicHandle = rd_kafka_topic_new(pointer, topic, nil) else { throw KafkaError.configuration("cannot open topic \(topic)") }
        defer { rd_kafka_topic_destroy(topicHandle) }
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let error = rd_kafka_metadata(pointer, 0, topicHandle, &metadata, 10_000)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else { throw KafkaError(error) }
        defer { rd_kafka_metadata_destroy(metadata) }
        guard metadata.pointee.topic_cnt > 0 else { return [] }
        let described = metadata.pointee.topics[0]
        guard described.err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(described.err) }
        return (0..<Int(described.partition_cnt)).map { described.partitions[$0].id }
    }
}
