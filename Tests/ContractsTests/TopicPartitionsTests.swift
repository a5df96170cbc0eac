import SurgeContracts
import Testing

/// `KAFKA_TOPIC_PARTITIONS`: how many partitions each domain topic gets where topics are created.
@Suite("Topic partitions setting", .tags(.unit), .kind(.unit))
struct TopicPartitionsTests {
    @Test("12 unless set; the option before the variable; a count outside 1...10000 or not a number is refused, naming the variable")
    func resolution() throws {
        #expect(try Topic.partitions(given: nil, environment: [:]) == 12)
        #expect(try Topic.partitions(given: nil, environment: ["KAFKA_TOPIC_PARTITIONS": "24"]) == 24)
        #expect(try Topic.partitions(given: 3, environment: ["KAFKA_TOPIC_PARTITIONS": "24"]) == 3)
        for bad in ["0", "-1", "10001", "twelve", "", "12.5"] {
            let error = #expect(throws: Topic.InvalidPartitions.self) { try Topic.partitions(given: nil, environment: ["KAFKA_TOPIC_PARTITIONS": bad]) }
            #expect(error?.description.contains("KAFKA_TOPIC_PARTITIONS") == true)
        }
        #expect(throws: Topic.InvalidPartitions.self) { try Topic.partitions(given: 0, environment: [:]) }
    }

    @Test("the catalogue to create: every domain topic with the count, every dead-letter topic with one, names as the event catalogue's")
    func catalogue() {
        let topics = Topic.catalogue(partitions: 3)
        #expect(topics.map(\.name) == (Topic.all + Topic.deadLetters).map(\.name))
        #expect(topics.filter { Topic.all.map(\.name).contains($0.name) }.allSatisfy { $0.partitions == 3 })
        #expect(topics.filter { $0.name.hasPrefix("surge.deadletter.") }.allSatisfy { $0.partitions == 1 })
        #expect(Topic.catalogue(partitions: Topic.defaultPartitions).map(\.partitions) == (Topic.all + Topic.deadLetters).map(\.partitions))
    }
}
