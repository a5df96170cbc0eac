import CRdKafka
import Foundation
import Logging
import Synchronization

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

        public var description: String {
            switch self {
            case .stalled(let after, let left): "no record arrived for \(after) with \(left) partitions still to read"
            }
        }
    }

    /// Every record of `topics`, up to the end each partition had at the start, as `transform` makes it: each
    /// partition's in offset order, partitions in (topic, partition) order. Throws when no record arrives for
    /// `stallTimeout` while some are still due.
    ///
    /// `transform` runs on the records of one poll at a time, several polls in parallel while reading goes on, and each
    /// record is dropped once transformed: a rebuild holds what it made of hundreds of thousands of records, never the
    /// records themselves (touching fresh memory is most of what reading costs on a virtual machine).
    public func read<Transformed: Sendable>(
        _ topics: [String], stallTimeout: Duration = .seconds(30), transform: @escaping @Sendable (KafkaMessage) -> Transformed
    ) async throws -> [[Transformed]] {
        let handle = self.handle
        return try await onThreadOfItsOwn(named: "surge-topic-reader") { () throws -> [[Transformed]] in
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
            // Each poll's records transformed apart, in the order polled; at most `inFlight` polls wait to be.
            let transformed = Mutex<[Int: [(Partition, Transformed)]]>([:])
            let transforming = DispatchGroup()
            let inFlight = DispatchSemaphore(value: 4)
            var polls = 0
            var lastProgress = ContinuousClock.now
            // Many records per call into librdkafka: a rebuild reads hundreds of thousands.
            var polled = [UnsafeMutablePointer<rd_kafka_message_t>?](repeating: nil, count: 1_000)
            // A topic's name by librdkafka's handle of it, so that each record does not copy it again.
            var topicNames: [OpaquePointer: String] = [:]
            while !remaining.isEmpty {
                let count = try handle.withPointer { pointer throws(KafkaError) -> Int in
                    let queue = rd_kafka_queue_get_consumer(pointer)
                    defer { rd_kafka_queue_destroy(queue) }
                    return polled.withUnsafeMutableBufferPointer { buffer in
                        rd_kafka_consume_batch_queue(queue, 200, buffer.baseAddress, buffer.count)
                    }
                }
                guard count > 0 else {
                    let waited = ContinuousClock.now - lastProgress
                    guard waited < stallTimeout else {
                        transforming.wait()
                        throw ReadError.stalled(after: waited, partitionsLeft: remaining.count)
                    }
                    continue
                }
                lastProgress = ContinuousClock.now
                if let failed = polled[0..<count].first(where: { $0 == nil || $0!.pointee.err != RD_KAFKA_RESP_ERR_NO_ERROR }) {
                    let error = KafkaError(failed?.pointee.err ?? RD_KAFKA_RESP_ERR__FAIL)
                    for message in polled[0..<count] { rd_kafka_message_destroy(message) }
                    transforming.wait()
                    throw error
                }
                var due: [(Partition, RawMessage)] = []
                due.reserveCapacity(count)
                for message in polled[0..<count] {
                    let raw = message!.pointee
                    var topic = ""
                    if let rkt = raw.rkt {
                        if let name = topicNames[rkt] {
                            topic = name
                        } else {
                            topic = String(cString: rd_kafka_topic_name(rkt))
                            topicNames[rkt] = topic
                        }
                    }
                    let partition = Partition(topic: topic, partition: raw.partition)
                    guard let range = remaining[partition], raw.offset < range.high else {
                        rd_kafka_message_destroy(message)
                        continue
                    }
                    due.append((partition, RawMessage(pointer: message!)))
                    if raw.offset + 1 >= range.high { remaining[partition] = nil }
                }
                let poll = polls
                polls += 1
                inFlight.wait()
                // Copied out of librdkafka, transformed and dropped on the same worker: each record's memory is freed by
                // the thread that allocated it (a free from another thread contends for the allocator's lock).
                DispatchQueue.global().async(group: transforming) { [due] in
                    let made = due.map { partition, raw in
                        let message = KafkaMessage(copying: UnsafePointer(raw.pointer), topic: partition.topic)
                        rd_kafka_message_destroy(raw.pointer)
                        return (partition, transform(message))
                    }
                    transformed.withLock { $0[poll] = made }
                    inFlight.signal()
                }
            }
            transforming.wait()
            _ = try handle.withPointer { pointer throws(KafkaError) in rd_kafka_assign(pointer, nil) }
            var read: [Partition: [Transformed]] = [:]
            for (partition, range) in ranges where range.low < range.high {
                read[partition] = []
                read[partition]?.reserveCapacity(Int(range.high - range.low))
            }
            transformed.withLock { transformed in
                for poll in 0..<polls {
                    for (partition, made) in transformed.removeValue(forKey: poll) ?? [] { read[partition, default: []].append(made) }
                }
            }
            return read.sorted { ($0.key.topic, $0.key.partition) < ($1.key.topic, $1.key.partition) }.map(\.value)
        }
    }

    /// The partitions `topic` has on the cluster (a metadata request; waits up to 10 s).
    public func partitions(of topic: String) throws -> [Int32] {
        try handle.withPointer { pointer throws(KafkaError) in try Self.partitions(of: topic, on: pointer) }
    }

    /// A record as librdkafka returned it, handed to the worker that copies it out and destroys it.
    private struct RawMessage: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<rd_kafka_message_t>
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
