import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SurgeContracts
import SurgeKafka

/// A development-only Kafka-protocol broker: librdkafka's mock cluster with the catalogue's topics. Everything is in
/// memory and lost when it stops. Production uses Apache Kafka.
@main
struct SurgeBroker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "surge-broker",
        abstract: "Development-only in-memory Kafka-protocol broker (librdkafka mock cluster). Not for production.")

    @Option(help: "Number of brokers in the mock cluster.")
    var brokers = 1

    @Option(help: "Write the bootstrap servers address to this file once the topics exist.")
    var bootstrapFile: String?

    @Option(help: "Partitions of each domain topic (default: KAFKA_TOPIC_PARTITIONS, else 12).")
    var partitions: Int?

    func run() async throws {
        var logger = Logger(label: "surge-broker")
        logger.logLevel = .info
        let cluster = try KafkaMockCluster(brokers: brokers, logger: logger)
        let count = try Topic.partitions(given: partitions, environment: ProcessInfo.processInfo.environment)
        for topic in Topic.catalogue(partitions: count) {
            try cluster.createTopic(topic.name, partitions: topic.partitions)
        }
        let address = cluster.bootstrapServers
        if let bootstrapFile {
            try address.write(toFile: bootstrapFile, atomically: true, encoding: .utf8)
        }
        logger.info("Mock Kafka cluster ready (in memory, development only)", metadata: ["bootstrap": "\(address)"])
        print(address)
        let group = ServiceGroup(services: [HoldOpen(cluster: cluster)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
        logger.info("Mock Kafka cluster stopped")
    }
}

/// Keeps the cluster alive until a shutdown signal.
struct HoldOpen: Service {
    let cluster: KafkaMockCluster

    func run() async throws {
        try? await gracefulShutdown()
        withExtendedLifetime(cluster) {}
    }
}
