import CRdKafka
import Foundation
import Logging

/// librdkafka's in-memory mock cluster: a real Kafka-protocol broker over TCP for development and tests. It keeps
/// everything in memory and can inject faults; production uses Apache Kafka.
public final class KafkaMockCluster: @unchecked Sendable {
    private let handle: KafkaHandle
    private let cluster: OpaquePointer
    public let brokerCount: Int

    public init(brokers: Int = 1, logger: Logger) throws {
        self.handle = try KafkaHandle(type: RD_KAFKA_PRODUCER, properties: [:], context: KafkaCallbackContext(logger: logger))
        guard let cluster = try handle.withPointer({ pointer in rd_kafka_mock_cluster_new(pointer, Int32(brokers)) }) else {
            handle.destroy()
            throw KafkaError.configuration("could not start the mock cluster")
        }
        self.cluster = cluster
        self.brokerCount = brokers
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster)
        handle.destroy()
    }

    public var bootstrapServers: String { String(cString: rd_kafka_mock_cluster_bootstraps(cluster)) }

    public func createTopic(_ name: String, partitions: Int) throws {
        let error = rd_kafka_mock_topic_create(cluster, name, Int32(partitions), Int32(min(brokerCount, 3)))
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error) }
    }

    /// Makes the next requests of one Kafka protocol type (`apiKey`, e.g. 0 for Produce) fail with these error codes,
    /// one request per code.
    public func failRequests(apiKey: Int16, with errorCodes: [Int32]) {
        let errors = errorCodes.map { rd_kafka_resp_err_t(rawValue: $0) }
        rd_kafka_mock_push_request_errors_array(cluster, apiKey, errors.count, errors)
    }

    /// Makes `broker` the leader of one partition, or leaves the partition without a leader (nil): nobody can produce
    /// to it or fetch from it until it has one again, while the topic's other partitions carry on.
    public func setLeader(of topic: String, partition: Int32, to broker: Int32?) throws {
        let error = rd_kafka_mock_partition_set_leader(cluster, topic, partition, broker ?? -1)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error) }
    }

    /// Takes every broker down (connections are closed and refused) or brings them back.
    public func setBrokersAvailable(_ available: Bool) {
        for broker in 1...brokerCount {
            if available {
                rd_kafka_mock_broker_set_up(cluster, Int32(broker))
            } else {
                rd_kafka_mock_broker_set_down(cluster, Int32(broker))
            }
        }
    }
}
