import CRdKafka
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Follows topics from their end: every record written after it started, from every partition, to one handler. It
/// assigns itself the partitions (no consumer group, nothing committed), so every process running one sees every
/// record: what a fan-out to connected clients needs, where a consumer group would give each record to one member.
public final class KafkaTail: Service, Sendable {
    public typealias Handler = @Sendable (KafkaMessage) -> Void

    private let handle: KafkaHandle
    private let topics: [String]
    private let handler: Handler
    private let logger: Logger

    /// `fetch.wait.max.ms` is librdkafka's (500 ms) unless the configuration's consumer properties set it: Kafka answers
    /// a waiting fetch as soon as a record arrives, so a longer wait only means fewer empty fetches from an idle tail. The
    /// development broker answers only when the wait is over: `make run`, the tests and the benchmarks set 10 ms.
    public init(configuration: KafkaConfiguration, topics: [String], logger: Logger, handler: @escaping Handler) throws {
        handle = try KafkaHandle.assigningConsumer(configuration: configuration, properties: ["auto.offset.reset": "latest"], logger: logger)
        self.topics = topics
        self.handler = handler
        self.logger = logger
    }

    deinit { _ = handle.destroy { pointer in _ = rd_kafka_consumer_close(pointer) } }

    /// Assigns every partition of the topics at its end (retrying until each topic exists), then hands records to the
    /// handler until graceful shutdown or cancellation.
    public func run() async throws {
        let handle = self.handle
        let handler = self.handler
        var assigned = false
        while !assigned {
            do {
                try await offThePool { () throws(KafkaError) in
                    try handle.withPointer { pointer throws(KafkaError) in try Self.assignEnds(of: self.topics, on: pointer) }
                }
                assigned = true
            } catch {
                logger.warning("Kafka tail cannot assign its partitions yet; retrying", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .seconds(1))
            }
        }
        logger.info("Kafka tail following", metadata: ["topics": "\(topics.joined(separator: ","))"])
        let stopping = Atomic<Bool>(false)
        await withGracefulShutdownHandler {
            while !stopping.load(ordering: .relaxed), !Task.isCancelled {
                let batch = await offThePool { () -> [KafkaMessage] in
                    (try? handle.withPointer { pointer throws(KafkaError) -> [KafkaMessage] in
                        var batch: [KafkaMessage] = []
                        var timeout: Int32 = 100
                        while batch.count < 256, let message = rd_kafka_consumer_poll(pointer, timeout) {
                            defer { rd_kafka_message_destroy(message) }
                            timeout = 0
                            guard message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR else { continue }
                            batch.append(KafkaMessage(copying: message))
                        }
                        return batch
                    }) ?? []
                }
                for message in batch { handler(message) }
            }
        } onGracefulShutdown: {
            stopping.store(true, ordering: .relaxed)
        }
    }

    private static func assignEnds(of topics: [String], on pointer: OpaquePointer) throws(KafkaError) {
        var partitions: [(String, Int32)] = []
        for topic in topics {
            let found = try KafkaTopicReader.partitions(of: topic, on: pointer)
            guard !found.isEmpty else { throw KafkaError.configuration("topic \(topic) has no partitions yet") }
            partitions += found.map { (topic, $0) }
        }
        let list = rd_kafka_topic_partition_list_new(Int32(partitions.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for (topic, partition) in partitions {
            rd_kafka_topic_partition_list_add(list, topic, partition).pointee.offset = Int64(RD_KAFKA_OFFSET_END)
        }
        let assigned = rd_kafka_assign(pointer, list)
        guard assigned == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(assigned) }
    }
}
