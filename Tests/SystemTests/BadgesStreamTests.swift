import Foundation
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgeTestSupport
import Testing

/// Awards as a pure function of the stream: the same recorded events, users interleaved differently and everything
/// delivered twice, award exactly the same badges once each; a badge added to the catalogue later is backfilled once,
/// to as many users as the dry run said.
@Suite("Badges: awards from a recorded stream", .tags(.system), .kind(.system), .serialized)
struct BadgesStreamTests {
    typealias Recorded = LeaderboardStreamTests.Recorded

    /// Eight users in a household: chores completed, check-ins, streaks rising and breaking, weekly challenges and
    /// other challenges completed, and closed weekly boards with winners, from a seeded generator.
    static func recording(seed: UInt64) throws -> (directory: [Recorded], activity: [Recorded]) {
        var random = SeededRandom(seed: seed)
        let users = (0..<8).map { _ in UUID() }
        let groupID = UUID(), habitID = UUID(), weeklyID = UUID()
        let now = Date()
        func recorded<P: EventPayload>(_ payload: P, user: UUID?) throws -> Recorded {
            let event = CloudEvent(source: "/surge/test", time: now, data: payload)
            return Recorded(record: try EventRecord(event), topic: P.descriptor.topic.name, key: Data(payload.partitionKey.utf8), user: user)
        }
        var directory: [Recorded] = []
        for (index, user) in users.enumerated() {
            directory.append(try recorded(
                UserRegistered(userID: user, displayName: "Member \(index)", timeZone: "Europe/Rome", locale: nil, kind: .guest, registeredAt: now),
                user: nil))
            directory.append(try recorded(
                GroupMembershipChanged(groupID: groupID, userID: user, displayName: "Member \(index)", role: .member, change: .joined, changedAt: now),
                user: nil))
        }
        var activity: [Recorded] = []
        var streaks = Array(repeating: 0, count: users.count)
        let firstDay = LocalDate("2026-10-05")!
        for step in 0..<400 {
            let index = Int(random.next() % UInt64(users.count))
            let user = users[index]
            let day = firstDay.adding(days: step / 10)
            let at = LocalCalendar(zoneNamed: "Europe/Rome")!.start(of: day).addingTimeInterval(Double(36_000 + step))
            switch random.next() % 6 {
            case 0, 1:
                // Chores are keyed by the household: only the completer's events must stay in order, and counts commute.
                activity.append(try recorded(
                    ChoreOccurrenceChanged(
                        occurrenceID: UUID(), choreID: UUID(), groupID: groupID, title: "Dishes", change: .completed, assigneeID: nil,
                        completedBy: user, points: 3, dueOn: day, dueAt: at, nextDueOn: nil, changedAt: at),
                    user: user))
            case 2:
                activity.append(try recorded(
                    CheckInRecorded(
                        checkInID: UUID(), userID: user, attemptID: UUID(), challengeID: habitID, challengeVersion: 1, kind: .habit, groupID: nil,
                        taskID: "t", taskKind: .checkbox, action: .done, localDate: day, dayNumber: 1, quantity: nil, unit: nil, photoID: nil,
                        happenedAt: at, recordedAt: at, taskComplete: true, dayComplete: true),
                    user: user))
            case 3:
                let broken = random.next() % 5 == 0
                let previous = streaks[index]
                streaks[index] = broken ? 0 : previous + 3
                activity.append(try recorded(
                    StreakChanged(
                        userID: user, attemptID: UUID(), challengeID: habitID, kind: .habit, groupID: nil, period: .day,
                        change: broken ? .broken : .extended, previous: previous, current: streaks[index], best: streaks[index], freezesLeft: 1,
                        localDate: day, changedAt: at),
                    user: user))
            case 4:
                let weekly = random.next() % 2 == 0
                activity.append(try recorded(
                    AttemptEnded(
                        attemptID: UUID(), userID: user, challengeID: weekly ? weeklyID : UUID(), kind: weekly ? .weekly : .curated, groupID: nil,
                        attemptNumber: 1, end: .completed, endedOn: day, dayNumber: 7, reason: nil, missedTaskIDs: [], daysCompleted: 7,
                        bestStreak: 7, points: 70, endedAt: at),
                    user: user))
            default:
                let week = WindowKeyText.week(day)
                activity.append(try recorded(
                    WindowClosed(
                        board: "group:\(groupID.key)", scope: .group, subjectID: groupID, window: week, startsAt: at, endsAt: at, revision: 1,
                        participants: users.count, winners: [user], standings: [], closedAt: at),
                    user: user))
            }
        }
        return (directory, activity)
    }

    /// Every award, as text, in a fixed order.
    static func awards(_ stack: TestStack) async throws -> [String] {
        try await stack.database.withAdmin { client in
            try await client.query(
                "SELECT user_id::text || ' ' || badge_id || ' ' || level::text || ' ' || period FROM badges.awards ORDER BY 1", logger: .test("awards")
            ).collect().map { try $0.decode(String.self) }
        }
    }

    static func published(_ stack: TestStack, badge: String? = nil) async throws -> Int {
        try await stack.database.count(
            badge.map { "SELECT count(*) FROM badges.outbox WHERE type = 'surge.badges.badge.awarded.v1' AND payload->>'badgeID' = \($0)" }
                ?? "SELECT count(*) FROM badges.outbox WHERE type = 'surge.badges.badge.awarded.v1'")
    }

    @Test("the same stream interleaved differently and delivered twice awards the same badges once; a new badge is backfilled once, as the dry run said")
    func deterministic() async throws {
        let (directory, activity) = try Self.recording(seed: 20_261_125)
        let total = directory.count + activity.count

        let reference = try await withTestStack("badges-stream-a") { stack in
            try await stack.start("badges")
            try await LeaderboardStreamTests.deliver(directory + activity, to: stack, expecting: total, service: "badges")
            return try await Self.awards(stack)
        }
        #expect(reference.count > 30, "the recording awards enough to compare: \(reference.count)")
        #expect(reference.contains { $0.contains(" weekly-challenge 1 2026-") }, "weekly challenges earn their week's badge")
        #expect(reference.contains { $0.contains(" household-champion 1 2026-W") }, "first place earns the week's champion badge")

        try await withTestStack("badges-stream-b") { stack in
            try await stack.start("badges")
            try await LeaderboardStreamTests.deliver(directory, to: stack, expecting: directory.count, service: "badges")
            let reordered = LeaderboardStreamTests.interleaved(activity)
            try await LeaderboardStreamTests.deliver(reordered, to: stack, expecting: total, service: "badges")
            try await LeaderboardStreamTests.deliver(reordered + directory, to: stack, expecting: total, service: "badges")
            // A marker after the duplicates on each user's partition: once it is processed, so are they.
            let markers = try Set(activity.compactMap(\.user)).map { user in
                let marker = UserRegistered(userID: UUID(), displayName: "Marker", timeZone: "UTC", locale: nil, kind: .guest, registeredAt: Date())
                return Recorded(
                    record: try EventRecord(CloudEvent(source: "/surge/test", time: Date(), data: marker)), topic: Topic.identity.name,
                    key: Data(user.key.utf8), user: user)
            }
            try await LeaderboardStreamTests.deliver(markers, to: stack, expecting: total + markers.count, service: "badges")
            #expect(try await Self.awards(stack) == reference)
            #expect(try await Self.published(stack) == reference.count, "each award published once")

            // A badge added to the catalogue: the dry run counts who already qualifies, the start backfills exactly them.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("catalogue-\(UUID().uuidString).json")
            // The chores badge as built in (unchanged: not backfilled again) and a new one.
            try Data(
                """
                {"version": 2, "badges": [
                  {"id": "chores", "title": "Chore champion", "levels": [{"title": "First Chore Done", "threshold": 1},
                   {"title": "10 Tasks Completed", "threshold": 10}, {"title": "50 Tasks Completed", "threshold": 50}], "rule": {"kind": "count", "of": "chores"}},
                  {"id": "chores-5", "title": "Five chores", "levels": [{"title": "Five chores", "threshold": 5}], "rule": {"kind": "count", "of": "chores"}}
                ]}
                """.utf8
            ).write(to: file)
            let qualified = try await stack.database.count("SELECT count(*) FROM badges.facts WHERE name = 'chores' AND scope = '' AND value >= 5")
            #expect(qualified > 0)
            let dryRun = try await stack.runCommand("badges", ["dry-run", file.path])
            #expect(dryRun.status == 0 && dryRun.output.contains("chores-5: level 1 → \(qualified) users"), "\(dryRun.output)")
            #expect(try await Self.published(stack, badge: "chores-5") == 0, "a dry run awards nothing")

            let badgesProcess = try stack.process("badges")
            await badgesProcess.stop()
            try await stack.start("badges", environment: ["BADGE_CATALOGUE_FILE": file.path])
            try await waitUntil("the new badge is backfilled") { try await Self.published(stack, badge: "chores-5") == qualified }
            await (try stack.process("badges")).stop()
            try await stack.start("badges", environment: ["BADGE_CATALOGUE_FILE": file.path])
            #expect(try await stack.database.count("SELECT count(*) FROM badges.awards WHERE badge_id = 'chores-5' AND backfilled") == qualified)
            #expect(try await Self.published(stack, badge: "chores-5") == qualified, "backfilled once, not at every start")
            let again = try await stack.runCommand("badges", ["dry-run", file.path])
            #expect(again.output.contains("no new or changed badge to backfill"), "\(again.output)")

            // A broken catalogue stops the service at start with one line naming the badge.
            let broken = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).json")
            try Data(#"{"version": 3, "badges": [{"id": "x", "title": "X", "levels": [{"title": "a", "threshold": 2}, {"title": "b", "threshold": 1}], "rule": {"kind": "count", "of": "chores"}}]}"#.utf8).write(to: broken)
            let refused = try await stack.runCommand("badges", ["dry-run", broken.path])
            #expect(refused.status == 78 && refused.output.contains("badge x has level 2 out of order"), "\(refused.output)")
        }
    }
    /// Every fact, as text, in a fixed order.
    static func facts(_ stack: TestStack, except excluded: UUID? = nil) async throws -> [String] {
        try await stack.database.withAdmin { client in
            try await client.query(
                """
                SELECT user_id::text || ' ' || name || ' ' || scope || ' ' || value::text FROM badges.facts
                WHERE user_id IS DISTINCT FROM \(excluded) ORDER BY 1
                """, logger: .test("facts")
            ).collect().map { try $0.decode(String.self) }
        }
    }

    /// Who joined which challenge, as text, in a fixed order.
    static func participants(_ stack: TestStack) async throws -> [String] {
        try await stack.database.withAdmin { client in
            try await client.query("SELECT challenge_id::text || ' ' || user_id::text FROM badges.participants ORDER BY 1", logger: .test("participants"))
                .collect().map { try $0.decode(String.self) }
        }
    }

    @Test("migration 3 on a running deployment's data: whoever has a fact or an award in a challenge joined it")
    func participantsMigration() async throws {
        let checkedIn = UUID(), winner = UUID(), elsewhere = UUID(), habitID = UUID(), competitionID = UUID()
        try await withTestStack("badges-migration-3") { stack in
            let badges = try await stack.start("badges")
            await badges.stop()
            // The schema as migration 2 left it, holding what the service kept before it.
            try await stack.database.withAdmin { client in
                for statement: PostgresQuery in [
                    "DROP TABLE badges.participants",
                    "ALTER TABLE badges.challenges DROP COLUMN visibility, DROP COLUMN owner_id, DROP COLUMN group_id, DROP COLUMN deleted",
                    "DELETE FROM badges.schema_migrations WHERE component = 'badges' AND version = 3",
                    """
                    INSERT INTO badges.facts (user_id, name, scope, value) VALUES
                        (\(checkedIn), 'check-ins', '', 4), (\(checkedIn), 'check-ins', \("challenge:\(habitID.key)"), 4),
                        (\(elsewhere), 'check-ins', '', 2), (\(elsewhere), 'streak', 'kind:habit', 2)
                    """,
                    """
                    INSERT INTO badges.awards (user_id, badge_id, level, period, title, awarded_at)
                    VALUES (\(winner), \("challenge:\(competitionID.key):winner"), 1, '2026-W47', 'Water Cup winner 2026-W47', now())
                    """,
                ] {
                    try await client.query(statement, logger: .test("migration"))
                }
            }
            try await badges.start()
            #expect(try await Self.participants(stack) == ["\(competitionID.key) \(winner.key)", "\(habitID.key) \(checkedIn.key)"].sorted())
        }
    }

    @Test("rebuilt from the earliest offsets, facts, participants and awards equal the incremental ones, and nothing is published twice")
    func rebuild() async throws {
        let (directory, activity) = try Self.recording(seed: 20_261_126)
        let total = directory.count + activity.count
        try await withTestStack("badges-rebuild") { stack in
            try await stack.start("badges")
            try await LeaderboardStreamTests.deliver(directory, to: stack, expecting: directory.count, service: "badges")
            try await LeaderboardStreamTests.deliver(activity, to: stack, expecting: total, service: "badges")
            let awards = try await Self.awards(stack)
            let facts = try await Self.facts(stack)
            let participants = try await Self.participants(stack)
            #expect(!participants.isEmpty, "whoever completed a chore joined it")
            let published = try await Self.published(stack)
            #expect(awards.count > 30 && published == awards.count, "\(awards.count) awards, \(published) published")

            let refused = try await stack.runCommand("badges", ["rebuild"])
            #expect(refused.status == 1 && refused.output.contains("replicas of the badge service are running"), "\(refused.output)")
            let badges = try stack.process("badges")
            await badges.stop()

            // Lost facts and participants, and some chores delivered twice while the service is down (all chores share the
            // household's partition): the rebuild derives everything again from the topics, each event once.
            try await stack.database.withAdmin { client in _ = try await client.query("TRUNCATE badges.facts, badges.participants", logger: .test("spoil")) }
            let chores = activity.filter { $0.record.type == ChoreOccurrenceChanged.eventType }
            let duplicates = Array(chores.prefix(20))
            try await LeaderboardStreamTests.deliver(duplicates, to: stack, expecting: 0, service: "badges")
            let rebuild = try await stack.runCommand("badges", ["rebuild"])
            #expect(rebuild.status == 0, "\(rebuild.output)")
            #expect(
                rebuild.output.contains(
                    "rebuilt \(awards.count) awards from \(total + duplicates.count) events (\(total) applied, \(duplicates.count) duplicates, 0 skipped): "
                        + "0 new awards published, 0 kept without events behind them"),
                "\(rebuild.output)")
            #expect(try await Self.awards(stack) == awards, "the rebuild equals the incremental path")
            #expect(try await Self.facts(stack) == facts)
            #expect(try await Self.participants(stack) == participants)
            #expect(try await Self.published(stack) == published, "a rebuild publishes nothing already published")
            let rebuiltInbox = try await stack.database.count("SELECT count(*) FROM badges.processed_events")
            #expect(rebuiltInbox > 0 && rebuiltInbox < total, "the events that had an effect are recorded, not those passed over")

            // Started again, the replica passes over what the rebuild read (the duplicates too) and goes on from there.
            try await badges.start()
            let newcomer = UUID()
            let chore = try EventRecord(CloudEvent(source: "/surge/test", time: Date(), data: ChoreOccurrenceChanged(
                occurrenceID: UUID(), choreID: UUID(), groupID: try chores[0].record.decode(as: ChoreOccurrenceChanged.self).data.groupID, title: "Dishes", change: .completed,
                assigneeID: nil, completedBy: newcomer, points: 3, dueOn: LocalDate("2026-11-20")!, dueAt: Date(), nextDueOn: nil, changedAt: Date())))
            let after = Recorded(record: chore, topic: ChoreOccurrenceChanged.descriptor.topic.name, key: chores[0].key, user: newcomer)
            try await LeaderboardStreamTests.deliver([after], to: stack, expecting: rebuiltInbox + 1, service: "badges")
            #expect(try await Self.facts(stack, except: newcomer) == facts, "nothing the rebuild read is counted again")
            try await waitUntil("the newcomer's first chore badge is published") { try await Self.published(stack) == published + 1 }
        }
    }
    @Test("a competition's own badges: a streak on it (also one reached before the definition arrived), finishing it, and first place on its board, not on its points board")
    func challengeBadges() async throws {
        let ana = UUID(), bruno = UUID(), competitionID = UUID(), otherID = UUID()
        let now = Date()
        let day = LocalDate("2026-11-18")!
        func recorded<P: EventPayload>(_ payload: P) throws -> Recorded {
            Recorded(
                record: try EventRecord(CloudEvent(source: "/surge/test", time: now, data: payload)), topic: P.descriptor.topic.name,
                key: Data(payload.partitionKey.utf8), user: nil)
        }
        func streak(_ user: UUID, _ current: Int, on challengeID: UUID) throws -> Recorded {
            try recorded(StreakChanged(
                userID: user, attemptID: UUID(), challengeID: challengeID, kind: .competition, groupID: nil, period: .day, change: .extended,
                previous: current - 1, current: current, best: current, freezesLeft: 0, localDate: day, changedAt: now))
        }
        func closed(_ challengeID: UUID, board: String = "competition", winners: [UUID]) throws -> Recorded {
            try recorded(WindowClosed(
                board: "\(board):\(challengeID.key)", scope: .challenge, subjectID: challengeID, window: "2026-W47", startsAt: now, endsAt: now,
                revision: 1, participants: 2, winners: winners, standings: [], closedAt: now))
        }
        let definition = ChallengeDefinition(
            challengeID: competitionID, version: 1, effectiveFrom: nil, kind: .competition, name: "Water Cup", description: "", category: "competition",
            difficulty: .moderate, visibility: .private, ownerID: ana, groupID: nil, durationDays: 7, estimatedDailyMinutes: nil,
            tasks: [ChallengeTask(taskID: "total", title: "Water Cup", kind: .quantity, unit: "litres")], rules: ChallengeRules(failure: FailureRule(mode: .none)),
            competition: CompetitionDetails(startsAt: now, endsAt: now.addingTimeInterval(7 * 86_400), timeZone: "Europe/Rome", unit: "litres"),
            badges: [
                ChallengeBadge(id: "winner", title: "Water Cup winner", icon: "trophy", rule: .init(kind: .firstPlace)),
                ChallengeBadge(id: "three-days", title: "Three days of water", rule: .init(kind: .streak, threshold: 3)),
                ChallengeBadge(id: "finished", title: "Water Cup finished", rule: .init(kind: .challengeCompleted)),
            ])
        let directory = try [ana, bruno].map { user in
            try recorded(UserRegistered(userID: user, displayName: "U", timeZone: "Europe/Rome", locale: nil, kind: .guest, registeredAt: now))
        }
        try await withTestStack("badges-challenge-own") { stack in
            try await stack.start("badges")
            // Ana's streak on the competition reaches 3 before the badge service learns the definition.
            var expected = directory.count + 1
            try await LeaderboardStreamTests.deliver(directory + [try streak(ana, 3, on: competitionID)], to: stack, expecting: expected, service: "badges")
            expected += 1
            try await LeaderboardStreamTests.deliver([try recorded(ChallengePublished(definition: definition, publishedAt: now))], to: stack, expecting: expected, service: "badges")
            let later: [Recorded] = [
                try streak(bruno, 2, on: competitionID), try streak(bruno, 3, on: otherID),
                try recorded(AttemptEnded(
                    attemptID: UUID(), userID: bruno, challengeID: competitionID, kind: .competition, groupID: nil, attemptNumber: 1, end: .completed,
                    endedOn: day, dayNumber: 7, reason: nil, missedTaskIDs: [], daysCompleted: 7, bestStreak: 2, points: 0, endedAt: now)),
                try closed(competitionID, winners: [bruno]), try closed(otherID, winners: [ana]),
                // The competition's points board has another leader, who has not won the competition.
                try closed(competitionID, board: "challenge", winners: [ana]),
            ]
            expected += later.count
            try await LeaderboardStreamTests.deliver(later, to: stack, expecting: expected, service: "badges")

            let own = try await stack.database.withAdmin { client in
                try await client.query(
                    """
                    SELECT user_id::text || ' ' || badge_id || ' ' || period || ' ' || title || ' ' || backfilled::text FROM badges.awards
                    WHERE badge_id LIKE 'challenge:%' ORDER BY 1
                    """, logger: .test("own")
                ).collect().map { try $0.decode(String.self) }
            }
            let prefix = "challenge:\(competitionID.key)"
            #expect(own.sorted() == [
                "\(ana.key) \(prefix):three-days  Three days of water true",
                "\(bruno.key) \(prefix):finished  Water Cup finished false",
                "\(bruno.key) \(prefix):winner 2026-W47 Water Cup winner 2026-W47 false",
            ].sorted(), "\(own)")
            #expect(try await stack.database.count(
                "SELECT count(*) FROM badges.outbox WHERE payload->>'badgeID' = \(prefix + ":winner") AND payload->>'icon' = 'trophy'") == 1)
        }
    }
}
