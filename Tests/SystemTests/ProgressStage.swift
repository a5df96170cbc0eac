import Foundation
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgeTestSupport

/// Identity, progress (on a simulated clock, judging every 100 ms) and the gateway, with helpers to publish
/// definitions, create users and move time.
struct ProgressStage {
    let stack: TestStack
    let producer: KafkaProducer

    struct User {
        let id: UUID
        let http: TestHTTP
        let calendar: LocalCalendar
    }

    static func with(_ name: String, _ body: (ProgressStage) async throws -> Void) async throws {
        try await withTestStack(name) { stack in
            try await stack.start("identity")
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "100"])
            try await stack.start("gateway")
            let producer = try KafkaProducer(configuration: stack.kafka!.configuration(), logger: .test("stage"))
            try await body(ProgressStage(stack: stack, producer: producer))
        }
    }

    func publish<Payload: EventPayload>(_ payload: Payload) async throws {
        let event = CloudEvent(source: "/surge/test", time: Date(), data: payload)
        _ = try await producer.send(KafkaRecord(publishing: try EventRecord(event), to: Payload.descriptor.topic.name))
    }

    /// Publishes a definition and waits until progress has it.
    func publish(_ definition: ChallengeDefinition) async throws {
        try await publish(ChallengePublished(definition: definition, publishedAt: Date()))
        try await waitUntil("progress knows \(definition.name)") {
            try await stack.database.count(
                "SELECT count(*) FROM progress.definitions WHERE challenge_id = \(definition.challengeID) AND version = \(definition.version)") == 1
        }
    }

    /// A guest in `timeZone`, known to progress.
    func user(_ name: String, timeZone: String) async throws -> User {
        let response = try await stack.http().post("/v1/auth/guest", json: ["displayName": name, "timeZone": timeZone])
        guard response.status == 201,
            let token = (response.json["tokens"] as? [String: Any])?["accessToken"] as? String,
            let id = ((response.json["user"] as? [String: Any])?["id"] as? String).flatMap(UUID.init(uuidString:))
        else { throw StageError("guest sign-up failed: \(response.text)") }
        try await waitUntil("progress knows \(name)") {
            try await stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(id)") == 1
        }
        return User(id: id, http: try stack.http().authorized(token), calendar: LocalCalendar(zoneNamed: timeZone)!)
    }

    /// Moves progress's clock to a local wall-clock time of `user`.
    func setClock(_ date: LocalDate, _ time: String, for user: User) async throws {
        try await setClock(user.calendar.instant(of: LocalTime(time)!, on: date))
    }

    func setClock(_ instant: Date) async throws {
        let response = try await TestHTTP(baseURL: try stack.process("progress").baseURL)
            .put("/internal/clock", json: ["now": Timestamp.format(instant)])
        guard response.status == 200 else { throw StageError("clock refused: \(response.text)") }
    }

    /// The progress outbox's event types, in order.
    func eventTypes() async throws -> [String] {
        try await stack.database.withAdmin { client in
            try await client.query("SELECT type FROM progress.outbox ORDER BY position", logger: .test("stage")).collect().map { try $0.decode(String.self) }
        }
    }
}

struct StageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Definitions shaped like the apps' own.
enum Fixtures {
    /// 75 Hard's five daily requirements: strict, judged at local midnight.
    static func seventyFiveHard() -> ChallengeDefinition {
        ChallengeDefinition(
            challengeID: UUID(), version: 1, effectiveFrom: nil, kind: .curated, name: "75 Hard",
            description: "Five non-negotiable daily tasks for 75 days.", category: "fitness", difficulty: .extreme, visibility: .curated,
            ownerID: nil, groupID: nil, durationDays: 75, estimatedDailyMinutes: 150,
            tasks: [
                ChallengeTask(taskID: "workouts", title: "Two 45-minute workouts, one outdoors", kind: .checkbox),
                ChallengeTask(taskID: "diet", title: "Follow a diet, no cheat meals, no alcohol", kind: .checkbox),
                ChallengeTask(taskID: "water", title: "Drink 3.8 litres of water", kind: .quantity, target: 3.8, unit: "litres"),
                ChallengeTask(taskID: "reading", title: "Read 10 pages of non-fiction", kind: .checkbox),
                ChallengeTask(taskID: "photo", title: "Take a progress photo", kind: .photo),
            ],
            rules: ChallengeRules(failure: .init(mode: .strict), points: .init(kind: .perTask, pointsPerTask: 1, completionBonus: 200), checkInGraceMinutes: 0))
    }

    static func habit(graceMinutes: Int = 180) -> ChallengeDefinition {
        let owner = UUID()
        return ChallengeDefinition(
            challengeID: UUID(), version: 1, effectiveFrom: nil, kind: .habit, name: "Sketch", description: "Draw something",
            category: "hobby", difficulty: .beginner, visibility: .public, ownerID: owner, groupID: nil, durationDays: nil,
            estimatedDailyMinutes: 15, tasks: [ChallengeTask(taskID: "sketch", title: "Sketch", kind: .checkbox)],
            rules: ChallengeRules(failure: .init(mode: .none), points: .init(kind: .perTask, pointsPerTask: 5), checkInGraceMinutes: graceMinutes),
            habit: HabitDetails(colour: "#FF8800", notes: nil, priority: 2, reminderTime: nil))
    }

    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [UInt8](repeating: 7, count: 64))
}
