import Foundation
import Logging
import SurgeContracts
import SurgeKafka

/// A private mock Kafka cluster for one test, with the catalogue's topics created.
public final class TestKafka: Sendable {
    public let cluster: KafkaMockCluster
    public let logger = Logger.test("test-kafka")

    public init(brokers: Int = 1, partitions: Int = 4) throws {
        cluster = try KafkaMockCluster(brokers: brokers, logger: logger)
        for topic in Topic.all {
            try cluster.createTopic(topic.name, partitions: partitions)
        }
    }

    public var bootstrapServers: String { cluster.bootstrapServers }

    /// Low fetch wait: the mock broker does not wake a waiting fetch when data arrives.
    public static let consumerProperties = [
        "fetch.wait.max.ms": "10",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "500",
    ]

    public func configuration(clientID: String = "test") -> KafkaConfiguration {
        KafkaConfiguration(
            bootstrapServers: bootstrapServers, clientID: clientID, consumerProperties: Self.consumerProperties)
    }

    /// Reads everything on a topic from the beginning until `count` records arrived or the deadline passed.
    public func readAll(topic: String, expecting count: Int, timeout: Duration = .seconds(20)) async throws -> [KafkaMessage] {
        let received = ReceivedMessages()
        let consumer = try KafkaConsumer(
            configuration: configuration(clientID: "reader"), groupID: "reader-\(UUID().uuidString)", topics: [topic],
            logger: logger
        ) { message in
            received.append(message)
            return .handled
        }
        let task = Task { try await consumer.run() }
        defer { task.cancel() }
        try await waitUntil("\(count) records on \(topic)", timeout: timeout) { received.count >= count }
        task.cancel()
        _ = try? await task.value
        return received.all
    }
}

extension TestKafka {
    /// Reads everything on a topic from the beginning, until no record has arrived for `quiet` (after the group's
    /// first assignment, which the mock broker delays by 3 s).
    public func drain(topic: String, quiet: Duration = .seconds(2), timeout: Duration = .seconds(60)) async throws -> [KafkaMessage] {
        let received = ReceivedMessages()
        let lastArrival = LockedValue<ContinuousClock.Instant?>(nil)
        let consumer = try KafkaConsumer(
            configuration: configuration(clientID: "drain"), groupID: "drain-\(UUID().uuidString)", topics: [topic], logger: logger
        ) { message in
            received.append(message)
            lastArrival.withLock { $0 = .now }
            return .handled
        }
        let task = Task { try await consumer.run() }
        defer { task.cancel() }
        try await waitUntil("\(consumer.groupID) is assigned \(topic)", timeout: timeout) { consumer.assignedPartitionCount > 0 }
        let assigned = ContinuousClock.now
        try await waitUntil("\(topic) goes quiet", timeout: timeout) {
            ContinuousClock.now - (lastArrival.withLock { $0 } ?? assigned) >= quiet
        }
        task.cancel()
        _ = try? await task.value
        return received.all
    }
}

/// Collects consumed records across tasks.
public final class ReceivedMessages: Sendable {
    private let storage = LockedValue<[KafkaMessage]>([])

    public init() {}

    public func append(_ message: KafkaMessage) { storage.withLock { $0.append(message) } }
    public var all: [KafkaMessage] { storage.withLock { $0 } }
    public var count: Int { storage.withLock { $0.count } }
}
