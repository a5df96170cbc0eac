import Foundation
import SurgeContracts
import SurgeKafka
import SurgeTestSupport
import Testing

/// The template as a process: it consumes check-ins from the progress topic (once each, whatever the redelivery),
/// produces its milestone event through the outbox, forgets a deleted user, and answers only signed calls.
@Suite("Template service", .tags(.system), .kind(.system), .serialized)
struct TemplateSystemTests {
    func checkIn(_ user: UUID, on date: LocalDate) -> CloudEvent<CheckInRecorded> {
        CloudEvent(
            source: "/surge/progress", time: Date(),
            data: CheckInRecorded(
                checkInID: UUID(), userID: user, attemptID: UUID(), challengeID: UUID(), challengeVersion: 1, kind: .habit, groupID: nil,
                taskID: "read", taskKind: .checkbox, action: .done, localDate: date, dayNumber: 1, quantity: nil, unit: nil, photoID: nil,
                happenedAt: Date(), recordedAt: Date(), taskComplete: true, dayComplete: true))
    }

    func record(_ event: EventRecord, topic: String) -> KafkaRecord {
        KafkaRecord(topic: topic, key: Data(event.partitionKey.utf8), value: event.data, headers: event.kafkaHeaders.map { KafkaHeader(name: $0.name, value: $0.value) })
    }

    @Test("check-ins are counted once each, a milestone is published, a deleted user is forgotten")
    func consumesAndProduces() async throws {
        try await withTestStack("template") { stack in
            let kafka = try #require(stack.kafka)
            try await stack.start("template", environment: ["TALLY_MILESTONE_EVERY": "3"])
            let user = UUID()
            let today = LocalDate("2026-11-24")!
            let producer = try KafkaProducer(configuration: kafka.configuration(clientID: "template-test"), logger: .test("template"))
            let events = (0..<4).map { _ in checkIn(user, on: today) }
            for event in events { _ = try await producer.send(record(try EventRecord(event), topic: Topic.progress.name)) }
            // A redelivery of the first check-in has no second effect.
            _ = try await producer.send(record(try EventRecord(events[0]), topic: Topic.progress.name))

            let asUser = try stack.signedHTTP("template", caller: user.key)
            try await waitUntil("four check-ins counted") {
                try await asUser.get("/v1/tallies/2026-11-24").json["checkIns"] as? Int == 4
            }
            #expect(try await stack.database.count("SELECT count(*) FROM template.processed_events") == 4)
            #expect(try await stack.database.count("SELECT count(*) FROM template.outbox WHERE type = 'surge.template.tally.milestone.v1'") == 1)

            let deleted = CloudEvent(source: "/surge/identity", time: Date(), data: UserDeleted(userID: user, deletedAt: Date()))
            _ = try await producer.send(record(try EventRecord(deleted), topic: Topic.identity.name))
            try await waitUntil("the deleted user's tallies erased") {
                try await stack.database.count("SELECT count(*) FROM template.daily_tallies WHERE user_id = \(user)") == 0
            }
            let export = try await asUser.get("/internal/export")
            #expect(export.status == 200)
            #expect((export.json["tallies"] as? [Any])?.isEmpty == true)
            #expect(try await stack.http("template").get("/v1/tallies/2026-11-24", headers: [("X-Surge-Caller", user.key)]).status == 401)
        }
    }
}
