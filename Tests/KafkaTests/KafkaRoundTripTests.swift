import Foundation
import Logging
import SurgeKafka
import SurgeTestSupport
import Testing

@Suite("Kafka producer and consumer against the mock cluster", .tags(.integration), .kind(.integration, needsDatabase: false))
struct KafkaRoundTripTests {
    let logger = Logger.test("kafka-tests")

    @Test("every produced record is acknowledged and consumed with its key, value and headers")
    func roundTrip() async throws {
        let kafka = try TestKafka()
        let producer = try KafkaProducer(configuration: kafka.configuration(), logger: logger)
        let records = (0..<50).map { index in
            KafkaRecord(
                topic: "surge.progress.events", key: Data("user-\(index % 7)".utf8), value: Data("payload \(index)".utf8),
                headers: [KafkaHeader("ce_id", "id-\(index)"), KafkaHeader("empty", "")])
        }
        let reports = await producer.send(records)
        let offsets = try reports.map { try $0.get() }
        #expect(offsets.allSatisfy { $0.topic == "surge.progress.events" && $0.offset >= 0 })

        let received = try await kafka.readAll(topic: "surge.progress.events", expecting: 50)
        #expect(received.count == 50)
        let byID = Dictionary(uniqueKeysWithValues: received.map { ($0.header("ce_id")!, $0) })
        for (index, record) in records.enumerated() {
            let message = try #require(byID["id-\(index)"])
            #expect(message.key == record.key)
            #expect(message.value == record.value)
            #expect(message.header("empty") == "")
        }
        // One key always lands on one partition.
        let partitionsPerKey = Dictionary(grouping: received, by: { $0.key! }).mapValues { Set($0.map(\.partition)) }
        #expect(partitionsPerKey.values.allSatisfy { $0.count == 1 })
    }

    @Test("records of one key are consumed in the order produced")
    func perKeyOrder() async throws {
        let kafka = try TestKafka()
        let producer = try KafkaProducer(configuration: kafka.configuration(), logger: logger)
        for index in 0..<30 {
            _ = try await producer.send(KafkaRecord(topic: "surge.identity.events", key: Data("same".utf8), value: Data("\(index)".utf8)))
        }
        let received = try await kafka.readAll(topic: "surge.identity.events", expecting: 30)
        #expect(received.map { String(decoding: $0.value!, as: UTF8.self) } == (0..<30).map(String.init))
    }

    @Test("a consumer group resumes after the last handled record, and an abandoned record comes back")
    func offsetsStoredOnlyAfterHandling() async throws {
        let kafka = try TestKafka()
        let producer = try KafkaProducer(configuration: kafka.configuration(), logger: logger)
        for index in 0..<10 {
            _ = try await producer.send(KafkaRecord(topic: "surge.badges.events", key: Data("k".utf8), value: Data("\(index)".utf8)))
        }
        // First member handles records 0...4 and abandons 5 (as on shutdown with the database down).
        let firstSeen = ReceivedMessages()
        let first = try KafkaConsumer(configuration: kafka.configuration(), groupID: "g", topics: ["surge.badges.events"], logger: logger) { message in
            let value = Int(String(decoding: message.value!, as: UTF8.self))!
            guard value < 5 else { return .abandoned }
            firstSeen.append(message)
            return .handled
        }
        let firstRun = Task { try await first.run() }
        try await waitUntil("first member handled 5") { firstSeen.count == 5 }
        firstRun.cancel()
        try await firstRun.value

        let secondSeen = ReceivedMessages()
        let second = try KafkaConsumer(configuration: kafka.configuration(), groupID: "g", topics: ["surge.badges.events"], logger: logger) { message in
            secondSeen.append(message)
            return .handled
        }
        let secondRun = Task { try await second.run() }
        try await waitUntil("second member handled the rest") { secondSeen.count >= 5 }
        secondRun.cancel()
        try await secondRun.value
        #expect(secondSeen.all.map { String(decoding: $0.value!, as: UTF8.self) } == ["5", "6", "7", "8", "9"])
    }

    @Test("records sent while the broker is down are delivered once it is back")
    func brokerOutage() async throws {
        let kafka = try TestKafka()
        let producer = try KafkaProducer(configuration: kafka.configuration(), logger: logger)
        _ = try await producer.send(KafkaRecord(topic: "surge.challenges.events", key: nil, value: Data("before".utf8)))
        kafka.cluster.setBrokersAvailable(false)
        let sending = Task {
            await producer.send((0..<20).map { KafkaRecord(topic: "surge.challenges.events", key: Data("\($0)".utf8), value: Data("during \($0)".utf8)) })
        }
        try await Task.sleep(for: .seconds(2))
        kafka.cluster.setBrokersAvailable(true)
        let results = await sending.value
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        let received = try await kafka.readAll(topic: "surge.challenges.events", expecting: 21)
        #expect(Set(received.map { String(decoding: $0.value!, as: UTF8.self) }).count == 21)
    }

    @Test("members of one group share the partitions")
    func groupSharesPartitions() async throws {
        let kafka = try TestKafka()
        let seen = ReceivedMessages()
        let members = try (0..<2).map { _ in
            try KafkaConsumer(configuration: kafka.configuration(), groupID: "shared", topics: ["surge.leaderboard.events"], logger: logger) { message in
                seen.append(message)
                return .handled
            }
        }
        let runs = members.map { member in Task { try await member.run() } }
        try await waitUntil("both members assigned", timeout: .seconds(30)) {
            members.allSatisfy { $0.assignedPartitionCount > 0 }
        }
        #expect(members.map(\.assignedPartitionCount).reduce(0, +) == 4)
        let producer = try KafkaProducer(configuration: kafka.configuration(), logger: logger)
        _ = await producer.send((0..<40).map { KafkaRecord(topic: "surge.leaderboard.events", key: Data("user-\($0)".utf8), value: Data("\($0)".utf8)) })
        try await waitUntil("40 records consumed") { seen.count >= 40 }
        #expect(Set(seen.all.map(\.offset).enumerated().map { "\(seen.all[$0.offset].partition)/\($0.element)" }).count == 40)
        for run in runs { run.cancel() }
        for run in runs { try await run.value }
    }

    @Test("after a fatal idempotence error the producer reports not ready and run() throws, so the process restarts")
    func fatalError() async throws {
        let kafka = try TestKafka()
        let producer = try KafkaProducer(configuration: kafka.configuration(), logger: logger)
        let record = KafkaRecord(topic: "surge.identity.events", key: Data("k".utf8), value: Data("v".utf8))
        _ = try await producer.send(record)
        // The broker answering a produce with OUT_OF_ORDER_SEQUENCE_NUMBER (45) is fatal for an idempotent producer.
        kafka.cluster.failRequests(apiKey: 0, with: [45])
        await #expect(throws: KafkaError.self) { try await producer.send(record) }
        await #expect(throws: KafkaError.self) { try await producer.send(record) }
        let notReady = await #expect(throws: KafkaError.self) { try await producer.checkConnectivity() }
        #expect(notReady.map(Self.isFatal) == true)
        let stopped = await #expect(throws: KafkaError.self) { try await producer.run() }
        #expect(stopped.map(Self.isFatal) == true)
    }

    static func isFatal(_ error: KafkaError) -> Bool {
        if case .fatal(let message) = error { return message.contains("sequence") }
        return false
    }

    @Test("overrides that would break the delivery guarantees are refused; others apply")
    func guardedProperties() throws {
        let kafka = try TestKafka()
        func configuration(properties: [String: String] = [:], producer: [String: String] = [:], consumer: [String: String] = [:]) -> KafkaConfiguration {
            KafkaConfiguration(
                bootstrapServers: kafka.bootstrapServers, clientID: "guarded", properties: properties, producerProperties: producer,
                consumerProperties: consumer)
        }
        func consumer(_ configuration: KafkaConfiguration) throws -> KafkaConsumer {
            try KafkaConsumer(configuration: configuration, groupID: "g", topics: ["surge.identity.events"], logger: logger) { _ in .handled }
        }
        #expect(throws: KafkaError.self) { try KafkaProducer(configuration: configuration(producer: ["enable.idempotence": "false"]), logger: logger) }
        #expect(throws: KafkaError.self) { try KafkaProducer(configuration: configuration(properties: ["enable.idempotence": "0"]), logger: logger) }
        #expect(throws: KafkaError.self) { try KafkaProducer(configuration: configuration(producer: ["acks": "1"]), logger: logger) }
        #expect(throws: KafkaError.self) { try consumer(configuration(consumer: ["enable.auto.offset.store": "true"])) }
        _ = try KafkaProducer(configuration: configuration(producer: ["enable.idempotence": "TRUE", "linger.ms": "20"]), logger: logger)
        _ = try consumer(configuration(consumer: ["enable.auto.offset.store": "false", "enable.auto.commit": "false"]))
    }

    @Test("connectivity check fails fast when no broker answers")
    func connectivity() async throws {
        let kafka = try TestKafka()
        let producer = try KafkaProducer(configuration: kafka.configuration(), logger: logger)
        try await producer.checkConnectivity()
        let nowhere = try KafkaProducer(
            configuration: KafkaConfiguration(bootstrapServers: "127.0.0.1:1", clientID: "nowhere"), logger: logger)
        await #expect(throws: KafkaError.self) { try await nowhere.checkConnectivity(timeout: .milliseconds(500)) }
    }
}
