import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeKafka
@testable import SurgeMessaging
import SurgeTestSupport
import Testing

@Suite("Idempotent consumers, retries and dead letters", .tags(.integration), .kind(.integration))
struct EventConsumerTests {
    func publish(_ payload: UserRegistered, id: UUID = UUID(), via producer: KafkaProducer) async throws {
        let record = try EventRecord(CloudEvent(id: id, source: "/surge/identity", time: Date(), data: payload))
        _ = try await producer.send(KafkaRecord(publishing: record, to: Topic.identity.name))
    }

    @Test("the same event delivered twice has one effect")
    func duplicateDelivery() async throws {
        try await MessagingHarness.with { harness in
            let payload = harness.registration("twice")
            let id = UUID()
            try await publish(payload, id: id, via: harness.producer)
            try await publish(payload, id: id, via: harness.producer)
            // The same user, so the same partition: once it is applied, both copies before it were handled.
            var after = harness.registration("after")
            after.userID = payload.userID
            try await publish(after, via: harness.producer)
            try await running([harness.consumer()]) {
                try await waitUntil("later event applied") { try await harness.applied("after") == 1 }
            }
            #expect(try await harness.applied("twice") == 1)
        }
    }

    @Test("an undecodable record goes to the dead-letter topic with its error, and the next record is processed")
    func poisonMessage() async throws {
        try await MessagingHarness.with { harness in
            _ = try await harness.producer.send(KafkaRecord(topic: Topic.identity.name, key: Data("k".utf8), value: Data("not json".utf8)))
            var record = try EventRecord(CloudEvent(source: "/surge/identity", time: Date(), data: harness.registration("x")))
            record.data = Data("{\"userID\":\"not-a-uuid\"}".utf8)
            _ = try await harness.producer.send(KafkaRecord(publishing: record, to: Topic.identity.name))
            try await publish(harness.registration("good"), via: harness.producer)
            let dead = try await running([harness.consumer()]) {
                try await waitUntil("good event applied") { try await harness.applied("good") == 1 }
                return try await harness.kafka.readAll(topic: "surge.deadletter.surge-progress", expecting: 2)
            }
            #expect(dead.count == 2)
            let withoutHeaders = try #require(dead.first { $0.value == Data("not json".utf8) })
            #expect(withoutHeaders.header("surge_error")?.contains("ce_specversion") == true)
            #expect(withoutHeaders.header("surge_original_topic") == Topic.identity.name)
            #expect(withoutHeaders.header("surge_original_offset") != nil)
            let badData = try #require(dead.first { $0.header("ce_id") == record.id.key })
            #expect(badData.header("surge_error")?.isEmpty == false)
            #expect(badData.header("ce_type") == UserRegistered.eventType)
        }
    }

    @Test("a handler that keeps failing is retried a bounded number of times, then dead-lettered; the consumer moves on")
    func boundedRetries() async throws {
        try await MessagingHarness.with { harness in
            struct Broken: Error {}
            let attempts = LockedValue(0)
            // One transaction per record, so every try is one of the bounded retries (`failureInBatch` has a batch).
            let consumer = try harness.consumer(maxAttempts: 3, batchLimit: 1) { event in
                if event.data.displayName == "cursed" {
                    attempts.withLock { $0 += 1 }
                    throw Broken()
                }
            }
            // One user, so one partition: the good event waits behind the failing one.
            var cursed = harness.registration("cursed")
            var fine = harness.registration("fine")
            fine.userID = cursed.userID
            cursed.userID = fine.userID
            try await publish(cursed, via: harness.producer)
            try await publish(fine, via: harness.producer)
            try await running([consumer]) {
                try await waitUntil("next event applied") { try await harness.applied("fine") == 1 }
            }
            #expect(attempts.value == 3)
            #expect(try await harness.applied("cursed") == 0)
            let dead = try await harness.kafka.readAll(topic: "surge.deadletter.surge-progress", expecting: 1)
            #expect(dead.first?.header("surge_attempts") == "3")
            #expect(dead.first?.header("surge_error")?.contains("Broken") == true)
        }
    }

    @Test("a handler that fails then succeeds applies its effect exactly once")
    func transientFailure() async throws {
        try await MessagingHarness.with { harness in
            struct Flaky: Error {}
            let attempts = LockedValue(0)
            let consumer = try harness.consumer(maxAttempts: 5) { _ in
                let attempt = attempts.withLock { value -> Int in
                    value += 1
                    return value
                }
                if attempt < 3 { throw Flaky() }
            }
            try await publish(harness.registration("flaky"), via: harness.producer)
            try await running([consumer]) {
                try await waitUntil("applied") { try await harness.applied("flaky") == 1 }
            }
            #expect(attempts.value == 3)
            #expect(try await harness.applied("flaky") == 1)
        }
    }

    @Test("events of types the group does not handle are skipped")
    func unknownTypesSkipped() async throws {
        try await MessagingHarness.with { harness in
            var record = try EventRecord(CloudEvent(source: "/surge/identity", time: Date(), data: harness.registration("x")))
            record.type = "surge.identity.something.new.v1"
            _ = try await harness.producer.send(KafkaRecord(publishing: record, to: Topic.identity.name))
            try await publish(harness.registration("known"), via: harness.producer)
            try await running([harness.consumer()]) {
                try await waitUntil("known event applied") { try await harness.applied("known") == 1 }
            }
            #expect(try await harness.database.count("SELECT count(*) FROM identity.processed_events") == 1)
        }
    }

    @Test("an event its handler says can have no effect is passed over without a transaction, recorded as seen in a batch")
    func irrelevantEventsPassedOver() async throws {
        try await MessagingHarness.with { harness in
            var handlers = EventHandlers()
            handlers.on(UserRegistered.self, when: { !$0.data.displayName.hasPrefix("skip") }) { event, connection, logger in
                try await connection.query("INSERT INTO effects (key, applied) VALUES (\(event.data.displayName), 1)", logger: logger)
            }
            let consumer = try EventConsumer(
                configuration: .init(group: "surge-progress"), kafka: harness.kafka.configuration(), client: harness.client,
                producer: harness.producer, handlers: handlers, logger: harness.logger)
            var skipped = harness.registration("skip me")
            try await publish(skipped, via: harness.producer)
            var known = harness.registration("known")
            known.userID = skipped.userID
            try await publish(known, via: harness.producer)
            try await running([consumer]) {
                try await waitUntil("the relevant event applied") { try await harness.applied("known") == 1 }
                // Both are recorded as seen: the one passed over a moment later, in a batch of its own.
                try await waitUntil("the passed-over event recorded") {
                    try await harness.database.count("SELECT count(*) FROM identity.processed_events") == 2
                }
            }
            #expect(try await harness.applied("skip me") == 0)

            // A rebuild replaying both through the same handlers applies only the relevant one too.
            skipped.displayName = "skip again"
            let record = try EventRecord(CloudEvent(source: "/surge/identity", time: Date(), data: skipped))
            let applied = try await harness.client.withConnection { connection in
                try await handlers.apply(record, on: connection, logger: harness.logger)
            }
            #expect(applied, "a handled type")
            #expect(try await harness.applied("skip again") == 0, "with no effect")
        }
    }

    /// Registrations of one user (so one partition), published before the consumer starts, so that its polls find
    /// them together.
    func publishForOneUser(_ names: [String], harness: MessagingHarness) async throws {
        let userID = UUID()
        for name in names {
            var payload = harness.registration(name)
            payload.userID = userID
            try await publish(payload, via: harness.producer)
        }
    }

    @Test("records of a partition polled together are applied in fewer transactions than records, each once, in order")
    func batchedTransactions() async throws {
        try await MessagingHarness.with { harness in
            let names = (1...24).map { "batched \($0)" }
            try await publishForOneUser(names, harness: harness)
            try await running([harness.consumer(batchLimit: 8)]) {
                try await waitUntil("every record applied") { try await harness.effectLog().count == names.count }
            }
            #expect(try await harness.effectLog() == names)
            for name in names { #expect(try await harness.applied(name) == 1) }
            // At least three transactions (eight records each at most), fewer than one per record.
            let transactions = try await harness.effectTransactions()
            #expect((3..<names.count).contains(transactions), "\(transactions) transactions for \(names.count) records")
            #expect(try await harness.database.count("SELECT count(*) FROM identity.processed_events") == names.count)
        }
    }

    @Test("records of several partitions polled together share a transaction, each applied once, and a redelivered one is not applied again")
    func batchedAcrossPartitions() async throws {
        try await MessagingHarness.with { harness in
            // One user each, until their keys cover all four partitions of the topic.
            var payloads: [UserRegistered] = []
            var partitions: Set<Int32> = []
            while payloads.count < 12 || partitions.count < 4 {
                let payload = harness.registration("spread \(payloads.count + 1)")
                payloads.append(payload)
                partitions.insert(KafkaPartitioner.murmur2(Data(payload.partitionKey.utf8), partitions: 4))
            }
            let names = payloads.map(\.displayName)
            let repeated = UUID()
            try await publish(payloads[0], id: repeated, via: harness.producer)
            for payload in payloads.dropFirst() { try await publish(payload, via: harness.producer) }
            try await publish(payloads[0], id: repeated, via: harness.producer)
            try await running([harness.consumer(batchLimit: 32)]) {
                try await waitUntil("every record applied") { try await harness.effectLog().count == names.count }
            }
            for name in names { #expect(try await harness.applied(name) == 1, "\(name)") }
            let transactions = try await harness.effectTransactions()
            // One transaction for all four partitions, two should the first poll not bring them all.
            #expect(transactions <= 2, "\(transactions) transactions for records on \(partitions.count) partitions")
            #expect(try await harness.database.count("SELECT count(*) FROM identity.processed_events") == names.count)
        }
    }

    @Test("a record that fails in a batch rolls it back: the others are applied once, the failing one retried alone, then dead-lettered")
    func failureInBatch() async throws {
        try await MessagingHarness.with { harness in
            struct Broken: Error {}
            let attempts = LockedValue(0)
            let consumer = try harness.consumer(maxAttempts: 3) { event in
                if event.data.displayName == "cursed" {
                    attempts.withLock { $0 += 1 }
                    throw Broken()
                }
            }
            let names = ["first", "second", "cursed", "third", "fourth"]
            try await publishForOneUser(names, harness: harness)
            try await running([consumer]) {
                try await waitUntil("the record after it applied") { try await harness.applied("fourth") == 1 }
            }
            for name in names where name != "cursed" { #expect(try await harness.applied(name) == 1, "\(name)") }
            #expect(try await harness.applied("cursed") == 0)
            #expect(try await harness.effectLog() == ["first", "second", "third", "fourth"])
            // Three tries alone, after (when the poll brought them together) the one in the batch that rolled back.
            #expect((3...4).contains(attempts.value), "\(attempts.value) tries")
            let dead = try await harness.kafka.readAll(topic: "surge.deadletter.surge-progress", expecting: 1)
            #expect(dead.count == 1)
            #expect(dead.first?.header("surge_attempts") == "3")
            #expect(try await harness.database.count("SELECT count(*) FROM identity.processed_events") == 4)
        }
    }

    @Test("a record in a batch sees what the records before it in the same transaction wrote")
    func batchSeesItsOwnWrites() async throws {
        try await MessagingHarness.with { harness in
            // `needs<-needed` is applied only once `needed` has been: in the same batch, before any commit.
            try await publishForOneUser(["needed", "needs<-needed", "after"], harness: harness)
            try await running([harness.deferringConsumer()]) {
                try await waitUntil("every record applied") { try await harness.effectLog().count == 3 }
            }
            #expect(try await harness.effectLog() == ["needed", "needs<-needed", "after"])
            #expect(try await harness.parked().isEmpty)
            #expect(try await harness.effectTransactions() < 3)
        }
    }
}
