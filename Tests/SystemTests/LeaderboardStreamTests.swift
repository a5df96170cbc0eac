import Foundation
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgeTestSupport
import Testing

/// The leaderboard as a pure function of its input stream: the same recorded events, delivered in another
/// interleaving of users, delivered twice, or across a kill -9, or rebuilt from the earliest offsets, leave exactly
/// the same boards.
@Suite("Leaderboard: boards from a recorded stream", .tags(.system), .kind(.system), .serialized)
struct LeaderboardStreamTests {
    /// One event of the recording, with the topic and key it travels on.
    struct Recorded {
        var record: EventRecord
        var topic: String
        var key: Data
        /// Whose events must stay in order (nil for the directory, which is delivered first).
        var user: UUID?
    }

    /// A household in Tokyo with six members in six zones, a public habit and a competition in litres, and three
    /// weeks of points (corrections included) and logged litres (some removed), from a seeded generator.
    static func recording(seed: UInt64) throws -> (directory: [Recorded], activity: [Recorded]) {
        var random = SeededRandom(seed: seed)
        let zones = ["Asia/Tokyo", "Europe/Rome", "America/New_York", "Australia/Sydney", "Pacific/Auckland", "America/Los_Angeles"]
        let users = zones.map { _ in UUID() }
        let groupID = UUID(), habitID = UUID(), competitionID = UUID()
        let now = Date()
        func recorded<P: EventPayload>(_ payload: P, user: UUID?) throws -> Recorded {
            let event = CloudEvent(source: "/surge/test", time: now, data: payload)
            return Recorded(record: try EventRecord(event), topic: P.descriptor.topic.name, key: Data(payload.partitionKey.utf8), user: user)
        }
        var directory: [Recorded] = []
        directory.append(try recorded(
            GroupChanged(groupID: groupID, name: "Home", kind: .household, timeZone: "Asia/Tokyo", ownerID: users[0], created: true, changedAt: now),
            user: nil))
        for (index, user) in users.enumerated() {
            directory.append(try recorded(
                UserRegistered(userID: user, displayName: "Member \(index)", timeZone: zones[index], locale: nil, kind: .guest, registeredAt: now),
                user: nil))
            directory.append(try recorded(
                GroupMembershipChanged(groupID: groupID, userID: user, displayName: "Member \(index)", role: .member, change: .joined, changedAt: now),
                user: nil))
        }
        for (id, kind) in [(habitID, ChallengeKind.habit), (competitionID, .competition)] {
            let definition = ChallengeDefinition(
                challengeID: id, version: 1, effectiveFrom: nil, kind: kind, name: "Board \(kind)", description: "", category: "test",
                difficulty: .beginner, visibility: .public, ownerID: users[0], groupID: nil, durationDays: nil, estimatedDailyMinutes: nil,
                tasks: [ChallengeTask(taskID: "t", title: "T", kind: .quantity, target: 1, unit: "litres")],
                rules: ChallengeRules(failure: .init(mode: .none), points: .init(kind: .perTask, pointsPerTask: 5)))
            directory.append(try recorded(ChallengePublished(definition: definition, publishedAt: now), user: nil))
        }
        var activity: [Recorded] = []
        let firstDay = LocalDate("2026-11-09")!
        for step in 0..<240 {
            let index = Int(random.next() % UInt64(users.count))
            let user = users[index]
            let day = firstDay.adding(days: Int(random.next() % 21))
            let calendar = LocalCalendar(zoneNamed: zones[index])!
            let awardedAt = calendar.start(of: day).addingTimeInterval(Double(random.next() % 86_000))
            switch step % 4 {
            case 0, 1:
                let points = Int(random.next() % 20) + 1
                activity.append(try recorded(
                    PointsAwarded(
                        entryID: UUID(), userID: user, groupID: step % 3 == 0 ? nil : groupID, challengeID: habitID, attemptID: nil,
                        points: step % 9 == 0 ? -points / 2 : points, reason: step % 9 == 0 ? .correction : .task, localDate: day,
                        excessQuantity: nil, totalPoints: 0, awardedAt: awardedAt),
                    user: user))
            default:
                let checkInID = UUID()
                let litres = Double(random.next() % 40) / 4 + 0.25
                activity.append(try recorded(
                    CheckInRecorded(
                        checkInID: checkInID, userID: user, attemptID: UUID(), challengeID: competitionID, challengeVersion: 1, kind: .competition,
                        groupID: nil, taskID: "t", taskKind: .quantity, action: .logged, localDate: day, dayNumber: 1, quantity: litres,
                        unit: "litres", photoID: nil, happenedAt: awardedAt, recordedAt: awardedAt, taskComplete: false, dayComplete: false),
                    user: user))
                if step % 7 == 0 {
                    activity.append(try recorded(
                        CheckInUndone(
                            checkInID: UUID(), undoesCheckInID: checkInID, userID: user, attemptID: UUID(), challengeID: competitionID,
                            kind: .competition, groupID: nil, taskID: "t", localDate: day, quantity: litres, happenedAt: awardedAt,
                            recordedAt: awardedAt, dayComplete: false),
                        user: user))
                }
            }
        }
        return (directory, activity)
    }

    /// The same events, each user's still in order, users interleaved round-robin instead of as recorded.
    static func interleaved(_ activity: [Recorded]) -> [Recorded] {
        var queues: [UUID: [Recorded]] = [:]
        var order: [UUID] = []
        for event in activity {
            guard let user = event.user else { continue }
            if queues[user] == nil { order.append(user) }
            queues[user, default: []].append(event)
        }
        var result: [Recorded] = []
        while result.count < activity.count {
            for user in order.reversed() where !(queues[user]?.isEmpty ?? true) { result.append(queues[user]!.removeFirst()) }
        }
        return result
    }

    /// Publishes events and waits until the service (the leaderboard unless named) has processed `expected` distinct
    /// events in all.
    static func deliver(_ events: [Recorded], to stack: TestStack, expecting expected: Int, service: String = "leaderboard") async throws {
        let producer = try KafkaProducer(
            configuration: KafkaConfiguration(bootstrapServers: stack.bootstrapServers, clientID: "recording"), logger: .test("recording"))
        for event in events {
            _ = try await producer.send(KafkaRecord(
                topic: event.topic, key: event.key, value: event.record.data,
                headers: event.record.kafkaHeaders.map { KafkaHeader(name: $0.name, value: $0.value) }))
        }
        let processed = LockedValue(0)
        do {
            try await waitUntil("\(service) processed \(expected) events", timeout: .seconds(90)) {
                let count = try await stack.database.count(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(service).processed_events"))
                processed.withLock { $0 = count }
                return count >= expected
            }
        } catch {
            Issue.record("\(service) processed \(processed.value) of \(expected) events")
            throw error
        }
    }

    /// Every score on every board window, as text, in a fixed order.
    static func boards(_ stack: TestStack) async throws -> [String] {
        try await stack.database.withAdmin { client in
            try await client.query(
                """
                SELECT board || ' ' || window_key || ' ' || user_id::text || ' ' || round(score::numeric, 4)::text
                FROM leaderboard.scores WHERE NOT removed AND score <> 0 ORDER BY board, window_key, user_id
                """, logger: .test("boards")
            ).collect().map { try $0.decode(String.self) }
        }
    }

    @Test("the same stream in another interleaving, delivered twice, across a kill -9, and rebuilt from offset zero leaves identical boards")
    func deterministic() async throws {
        let (directory, activity) = try Self.recording(seed: 20_261_124)
        let total = directory.count + activity.count

        let reference = try await withTestStack("leaderboard-stream-a", broker: .executable) { stack in
            try await stack.start("leaderboard")
            try await Self.deliver(directory, to: stack, expecting: directory.count)
            try await Self.deliver(activity, to: stack, expecting: total)
            let incremental = try await Self.boards(stack)

            // Not beside a running replica; with it stopped, `surge-leaderboard rebuild` replaces everything from the
            // earliest offsets.
            let refused = try await stack.runCommand("leaderboard", ["rebuild"])
            #expect(refused.status == 1 && refused.output.contains("replicas of the leaderboard are running"), "\(refused.output)")
            await (try stack.process("leaderboard")).stop()
            try await stack.database.withAdmin { client in
                _ = try await client.query("UPDATE leaderboard.scores SET score = score + 1000", logger: .test("spoil"))
            }
            let rebuild = try await stack.runCommand("leaderboard", ["rebuild"])
            #expect(rebuild.status == 0, "\(rebuild.output)")
            #expect(rebuild.output.contains("from \(total) events (\(total) applied, 0 duplicates, 0 skipped)"), "\(rebuild.output)")
            #expect(try await Self.boards(stack) == incremental, "the rebuild equals the incremental path")
            let rebuiltInbox = try await stack.database.count("SELECT count(*) FROM leaderboard.processed_events")

            // Started again, the replica resumes after what the rebuild read: nothing is counted twice.
            try await (try stack.process("leaderboard")).start()
            let marker = PointsAwarded(
                entryID: UUID(), userID: UUID(), groupID: nil, challengeID: nil, attemptID: nil, points: 0, reason: .task,
                localDate: LocalDate("2026-11-09")!, excessQuantity: nil, totalPoints: 0, awardedAt: Date())
            let resumed = Recorded(
                record: try EventRecord(CloudEvent(source: "/surge/test", time: Date(), data: marker)), topic: Topic.progress.name,
                key: Data(marker.partitionKey.utf8), user: marker.userID)
            try await Self.deliver([resumed], to: stack, expecting: rebuiltInbox + 1)
            #expect(try await stack.database.count("SELECT count(*) FROM leaderboard.processed_events") == rebuiltInbox + 1)
            #expect(try await Self.boards(stack) == incremental)
            return incremental
        }
        #expect(reference.count > 50, "the recording scores enough to compare: \(reference.count) rows")

        let replayed = try await withTestStack("leaderboard-stream-b", broker: .executable) { stack in
            try await stack.start("leaderboard")
            try await Self.deliver(directory, to: stack, expecting: directory.count)
            let reordered = Self.interleaved(activity)
            let half = reordered.count / 2
            try await Self.deliver(Array(reordered[..<half]), to: stack, expecting: directory.count + half)
            // kill -9 between two events, then the rest, and everything once more (a redelivery after a crash).
            let leaderboard = try stack.process("leaderboard")
            await leaderboard.crash()
            try await leaderboard.start()
            try await Self.deliver(Array(reordered[half...]), to: stack, expecting: total)
            // A zero-point marker after the duplicates, on each user's partition: once all are processed, so are they.
            let markers = try Set(activity.compactMap(\.user)).map { user in
                let marker = PointsAwarded(
                    entryID: UUID(), userID: user, groupID: nil, challengeID: nil, attemptID: nil, points: 0, reason: .task,
                    localDate: LocalDate("2026-11-09")!, excessQuantity: nil, totalPoints: 0, awardedAt: Date())
                return Recorded(
                    record: try EventRecord(CloudEvent(source: "/surge/test", time: Date(), data: marker)), topic: Topic.progress.name,
                    key: Data(marker.partitionKey.utf8), user: user)
            }
            try await Self.deliver(reordered + markers, to: stack, expecting: total + markers.count)
            return try await Self.boards(stack)
        }
        #expect(replayed == reference)
    }
}
