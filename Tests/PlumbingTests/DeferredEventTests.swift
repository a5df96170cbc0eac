import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgeTestSupport
import Testing

/// Records whose handler waits for an event of another partition (`AwaitingOtherEvent`): parked in `deferred_events`
/// while their partition moves on, applied once what they wait for arrives, dead-lettered if it never does.
@Suite("Parked records: events waiting for another partition", .tags(.integration), .kind(.integration))
struct DeferredEventTests {
    static let partitions = 4
    static let deadLetters = "surge.deadletter.surge-progress"

    /// Publishes a registration as identity does (keyed by its user).
    func publish(_ payload: UserRegistered, id: UUID = UUID(), via producer: KafkaProducer) async throws {
        let record = try EventRecord(CloudEvent(id: id, source: "/surge/identity", time: Date(), data: payload))
        _ = try await producer.send(KafkaRecord(publishing: record, to: Topic.identity.name))
    }

    func partition(of payload: UserRegistered) -> Int32 {
        KafkaPartitioner.murmur2(Data(payload.userID.key.utf8), partitions: Self.partitions)
    }

    /// A registration named `name` of a new user whose records land on a partition `accept` takes.
    func registration(_ name: String, _ harness: MessagingHarness, where accept: (Int32) -> Bool) -> UserRegistered {
        while true {
            let payload = harness.registration(name)
            if accept(partition(of: payload)) { return payload }
        }
    }

    func processed(_ id: UUID, _ harness: MessagingHarness) async throws -> Int {
        try await harness.database.count("SELECT count(*) FROM identity.processed_events WHERE event_id = \(id)")
    }

    @Test("a record whose prerequisite arrives seconds later on another partition is parked, then applied once; its partition and other keys move on meanwhile")
    func prerequisiteArrivesLater() async throws {
        try await MessagingHarness.with { harness in
            let log = CapturedLog()
            let consumer = try harness.deferringConsumer(logger: log.logger)
            let request = harness.registration("request<-late")
            let parkedPartition = partition(of: request)
            let requestID = UUID()
            try await publish(request, id: requestID, via: harness.producer)
            // Delivered twice (a producer's retry): parked once, applied once.
            try await publish(request, id: requestID, via: harness.producer)
            try await publish(registration("neighbour", harness) { $0 == parkedPartition }, via: harness.producer)
            try await publish(registration("elsewhere", harness) { $0 != parkedPartition }, via: harness.producer)

            try await running([consumer]) {
                try await waitUntil("the request's partition and another one applied while the request waits") {
                    let neighbour = try await harness.applied("neighbour")
                    let elsewhere = try await harness.applied("elsewhere")
                    return neighbour == 1 && elsewhere == 1
                }
                // Re-driven with a backoff (0.2, 0.4, 0.8, 1.6 s): still waiting seconds after the quick retries gave up.
                let parked = try await eventually("the request re-driven for seconds", timeout: .seconds(30)) {
                    try await harness.parked().first { $0.attempts >= 5 }
                }
                #expect(parked.eventID == requestID)
                #expect(parked.reason.contains("registration late"))
                #expect(try await harness.parked().count == 1, "the second copy is not parked again")
                #expect(try await harness.applied("request<-late") == 0)

                try await publish(registration("late", harness) { $0 != parkedPartition }, via: harness.producer)
                try await waitUntil("the parked request applied") { try await harness.applied("request<-late") == 1 }
                try await waitUntil("its row gone") { try await harness.parked().isEmpty }
            }
            #expect(try await harness.applied("request<-late") == 1)
            #expect(try await processed(requestID, harness) == 1)
            #expect(log.count { $0.contains("dead-lettered") } == 0, "nothing dead-lettered")
            #expect(log.count { $0.contains("Event parked") } == 1)
        }
    }

    @Test("a later record of the same key waits behind a parked one and is applied after it, not before")
    func sameKeyKeepsItsOrder() async throws {
        try await MessagingHarness.with { harness in
            let consumer = try harness.deferringConsumer()
            let first = harness.registration("first<-prerequisite")
            var second = harness.registration("second")
            second.userID = first.userID
            let parkedPartition = partition(of: first)
            try await publish(first, via: harness.producer)
            try await publish(second, via: harness.producer)
            try await publish(registration("other", harness) { $0 != parkedPartition }, via: harness.producer)

            try await running([consumer]) {
                try await waitUntil("both records of the key parked, another partition applied") {
                    let parked = try await harness.parked().count
                    let other = try await harness.applied("other")
                    return parked == 2 && other == 1
                }
                #expect(try await harness.applied("second") == 0, "it needs nothing, but may not overtake the first")
                #expect(try await harness.parked().last?.reason.contains("behind parked event") == true)

                try await publish(registration("prerequisite", harness) { $0 != parkedPartition }, via: harness.producer)
                try await waitUntil("the second applied") { try await harness.applied("second") == 1 }
                try await waitUntil("nothing parked") { try await harness.parked().isEmpty }
            }
            let order = try await harness.effectLog()
            #expect(try #require(order.firstIndex(of: "first<-prerequisite")) < #require(order.firstIndex(of: "second")))
            #expect(try await harness.applied("first<-prerequisite") == 1)
        }
    }

    @Test(
        "a parked record whose prerequisite never arrives is dead-lettered after the deferral limit, with the reason; its key moves on (also when its handler gathers its writes until the transaction's body ends)",
        arguments: [false, true])
    func neverArrives(gathered: Bool) async throws {
        try await MessagingHarness.with { harness in
            let consumer = try harness.deferringConsumer(deferralLimit: .seconds(2), gathered: gathered)
            let doomed = harness.registration("doomed<-never")
            var after = harness.registration("after")
            after.userID = doomed.userID
            let doomedID = UUID()
            try await publish(doomed, id: doomedID, via: harness.producer)
            try await publish(after, via: harness.producer)

            let dead = try await running([consumer]) {
                let dead = try await harness.kafka.readAll(topic: Self.deadLetters, expecting: 1, timeout: .seconds(30))
                try await waitUntil("the record behind it applied") { try await harness.applied("after") == 1 }
                try await waitUntil("nothing parked") { try await harness.parked().isEmpty }
                return dead
            }
            let letter = try #require(dead.first)
            #expect(dead.count == 1)
            #expect(letter.header(EventRecord.Header.id) == doomedID.key)
            #expect(letter.header("surge_deferred_reason") == "registration never not applied yet")
            #expect(letter.header("surge_error")?.contains("still waiting") == true)
            #expect(letter.header("surge_error")?.contains("registration never") == true)
            #expect(letter.header("surge_original_topic") == Topic.identity.name)
            #expect(letter.header("surge_original_partition") == String(partition(of: doomed)))
            #expect(letter.header("surge_original_offset") == "0", "the first record of its partition")
            #expect(Int(letter.header("surge_attempts") ?? "") ?? 0 >= 2)
            #expect(letter.header("surge_deferred_since") != nil)
            #expect(try await harness.applied("doomed<-never") == 0)
            #expect(try await processed(doomedID, harness) == 0)
        }
    }

    @Test("two replicas share the parked records: each is applied once")
    func replicasShareTheTable() async throws {
        try await MessagingHarness.with { harness in
            // Each application takes a moment, so the two re-drives work at the same time.
            let replicas = try (0..<2).map { _ in
                try harness.deferringConsumer { try await Task.sleep(for: .milliseconds(30)) }
            }
            let count = 16
            for index in 0..<count {
                try await publish(harness.registration("invitation \(index)<-host"), via: harness.producer)
            }
            try await running(replicas) {
                try await waitUntil("every invitation parked", timeout: .seconds(30)) { try await harness.parked().count == count }
                try await publish(harness.registration("host"), via: harness.producer)
                try await waitUntil("every invitation applied", timeout: .seconds(30)) { try await harness.parked().isEmpty }
            }
            for index in 0..<count {
                #expect(try await harness.applied("invitation \(index)<-host") == 1)
            }
            #expect(try await harness.effectLog().count == count + 1)
            #expect(try await harness.database.count("SELECT count(*) FROM identity.processed_events") == count + 1)
        }
    }
}
