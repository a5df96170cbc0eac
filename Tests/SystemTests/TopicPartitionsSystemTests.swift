import Foundation
import Logging
import SurgeContracts
import SurgeKafka
import SurgeTestSupport
import Testing

/// The partition count of the domain topics as a deployment setting, through the two programs that create topics.
@Suite("Topic partitions as a deployment setting", .tags(.system), .kind(.system))
struct TopicPartitionsSystemTests {
    @Test("surge-admin topics lists each domain topic with KAFKA_TOPIC_PARTITIONS or --partitions (12 unset) and each dead-letter topic with one; a bad count exits with a line naming the setting")
    func adminTopics() async throws {
        let admin = TestEnvironment.binaries.appendingPathComponent("surge-admin")
        func topics(_ arguments: [String] = [], partitions: String? = nil) async throws -> (status: Int32, counts: [String: Int], output: String) {
            var environment = ProcessInfo.processInfo.environment
            environment["KAFKA_TOPIC_PARTITIONS"] = partitions
            let (status, output) = try await runProgram(admin, ["topics"] + arguments, environment: environment)
            var counts: [String: Int] = [:]
            for line in output.split(separator: "\n") {
                let fields = line.split(separator: " ")
                if fields.count == 2, let count = Int(fields[1]) { counts[String(fields[0])] = count }
            }
            return (status, counts, output)
        }
        let expected = { (count: Int) in
            Dictionary(uniqueKeysWithValues: Topic.all.map { ($0.name, count) } + Topic.deadLetters.map { ($0.name, 1) })
        }
        let unset = try await topics()
        #expect(unset.status == 0)
        #expect(unset.counts == expected(12))
        #expect(try await topics(partitions: "24").counts == expected(24))
        #expect(try await topics(["--partitions", "6"], partitions: "24").counts == expected(6))
        let bad = try await topics(partitions: "many")
        #expect(bad.status != 0)
        #expect(bad.output.contains("KAFKA_TOPIC_PARTITIONS"), "\(bad.output)")
        #expect(bad.counts.isEmpty)
    }

    @Test("surge-broker creates the domain topics with KAFKA_TOPIC_PARTITIONS partitions and the dead-letter topics with one", .timeLimit(.minutes(1)))
    func brokerTopics() async throws {
        let logDirectory = TestEnvironment.logDirectory.appendingPathComponent("partitions-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        let broker = ServiceProcess.broker(logDirectory: logDirectory, environment: ["KAFKA_TOPIC_PARTITIONS": "3"])
        try await broker.start()
        do {
            let reader = try KafkaTopicReader(
                configuration: KafkaConfiguration(bootstrapServers: try broker.announcement, clientID: "partitions-test"), logger: Logger(label: "partitions"))
            for topic in Topic.all {
                #expect(try reader.partitions(of: topic.name).count == 3, "\(topic.name)")
            }
            #expect(try reader.partitions(of: Topic.deadLetter(consumerGroup: "surge-progress").name).count == 1)
        } catch {
            await broker.stop()
            throw error
        }
        await broker.stop()
    }
}
