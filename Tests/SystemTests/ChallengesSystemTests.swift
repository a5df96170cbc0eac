import Foundation
import PostgresNIO
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgeTestSupport
import Testing

/// A JSON object for request bodies.
typealias JSONObject = [String: any Sendable]

/// The challenges service end to end, through the gateway, with real users, tokens, friendships and households from
/// identity: challenges learns them from identity's events.
@Suite("Challenges: end to end through the gateway", .tags(.system), .kind(.system), .serialized)
struct ChallengesSystemTests {
    static let seventyFiveHard = "c4a11e00-0075-4000-8000-000000000001"
    static let meditation = "c4a11e00-0021-4000-8000-000000000004"

    struct Person {
        let id: UUID
        let http: TestHTTP
    }

    static func register(_ http: TestHTTP, _ name: String, zone: String = "Europe/Rome") async throws -> Person {
        let response = try await http.post("/v1/auth/guest", json: ["displayName": name, "timeZone": zone])
        #expect(response.status == 201, "\(response.text)")
        let id = try #require(UUID(uuidString: (response.json["user"] as? [String: Any])?["id"] as? String ?? ""))
        let token = try #require((response.json["tokens"] as? [String: Any])?["accessToken"] as? String)
        return Person(id: id, http: http.authorized(token))
    }

    /// Publishes an event as its producing service would (progress is not part of these stacks).
    static func publish<Payload: EventPayload>(_ payload: Payload, with producer: KafkaProducer) async throws {
        let source = "/surge/\(Payload.descriptor.topic.producer)"
        let record = KafkaRecord(publishing: try EventRecord(CloudEvent(source: source, time: Date(), data: payload)), to: Payload.descriptor.topic.name)
        _ = try await producer.send(record)
    }

    /// A stack with identity, challenges and gateway. Through identity's API, Alice and Bob become friends and Alice
    /// and Dave share a household in New York; Carol knows no one.
    static func withPeople(
        _ name: String, _ body: (TestStack, [String: Person], UUID, KafkaProducer) async throws -> Void
    ) async throws {
        try await withTestStack(name) { stack in
            let kafka = try #require(stack.kafka)
            try await stack.start("identity")
            try await stack.start("challenges")
            try await stack.start("gateway")
            let http = try stack.http()
            var people: [String: Person] = [:]
            for name in ["alice", "bob", "carol", "dave"] { people[name] = try await register(http, name) }
            let (alice, bob, dave) = (people["alice"]!, people["bob"]!, people["dave"]!)

            let request = try await alice.http.post("/v1/friend-requests", json: ["userID": bob.id.uuidString])
            #expect(request.status == 201, "\(request.text)")
            let requestID = try #require(request.json["id"] as? String)
            let accepted = try await bob.http.post("/v1/friend-requests/\(requestID)/accept")
            #expect(accepted.status == 200, "\(accepted.text)")

            let group = try await alice.http.post("/v1/groups", json: ["name": "Flat 4B", "kind": "household", "timeZone": "America/New_York"])
            #expect(group.status == 201, "\(group.text)")
            let home = try #require((group.json["id"] as? String).flatMap(UUID.init(uuidString:)))
            let invite = try await alice.http.post("/v1/groups/\(home.key)/invites")
            #expect(invite.status == 201, "\(invite.text)")
            let code = try #require(invite.json["code"] as? String)
            let joined = try await dave.http.post("/v1/groups/join", json: ["code": code])
            #expect(joined.status == 200, "\(joined.text)")

            try await waitUntil("challenges learned the friendship, the household and the users") {
                let friendships = try await stack.database.count("SELECT count(*) FROM challenges.friendships")
                let members = try await stack.database.count("SELECT count(*) FROM challenges.group_members WHERE group_id = \(home)")
                let zone = try await stack.database.count(
                    "SELECT count(*) FROM challenges.groups WHERE group_id = \(home) AND time_zone = 'America/New_York'")
                let users = try await stack.database.count("SELECT count(*) FROM challenges.users")
                return friendships == 1 && members == 2 && zone == 1 && users == 4
            }
            let producer = try KafkaProducer(configuration: kafka.configuration(clientID: "progress-stand-in"), logger: .test("progress-stand-in"))
            try await body(stack, people, home, producer)
        }
    }

    static func object(_ value: Any?) -> [String: Any] { value as? [String: Any] ?? [:] }
    static func array(_ value: Any?) -> [[String: Any]] { value as? [[String: Any]] ?? [] }

    static func isoString(_ date: Date) -> String { Date.ISO8601FormatStyle().format(date) }

    /// Ids in JSON are upper-case (Foundation's encoding); compare them as ids.
    static func id(_ value: Any?) -> String? { (value as? String)?.lowercased() }

    /// Tomorrow's date in a zone, as `YYYY-MM-DD`.
    static func tomorrow(in zone: String) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        let date = calendar.date(byAdding: .day, value: 1, to: Date())!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    @Test("library, 75 Hard, a water competition with an invitation, a habit, a household chore, edits, likes, deletion, trending")
    func journey() async throws {
        try await Self.withPeople("challenges-journey") { stack, people, home, producer in
            let alice = people["alice"]!, bob = people["bob"]!, carol = people["carol"]!, dave = people["dave"]!

            // Browse the library: the curated challenges, searched, filtered.
            let library = try await alice.http.get("/v1/challenges?kind=curated&limit=10")
            #expect(library.status == 200, "\(library.text)")
            let names = Set(Self.array(library.json["items"]).compactMap { $0["name"] as? String })
            #expect(names.isSuperset(of: ["75 Hard", "75 Soft", "30-Day Fitness Challenge", "21-Day Meditation Challenge", "30-Day No Sugar Challenge"]))
            let search = try await alice.http.get("/v1/challenges?q=fitness")
            #expect(Self.array(search.json["items"]).first?["name"] as? String == "30-Day Fitness Challenge")
            let extreme = try await alice.http.get("/v1/challenges?difficulty=extreme")
            #expect(Self.array(extreme.json["items"]).map { $0["name"] as? String } == ["75 Hard"])
            let firstPage = try await alice.http.get("/v1/challenges?limit=3")
            let cursor = try #require(firstPage.json["nextCursor"] as? String)
            let secondPage = try await alice.http.get("/v1/challenges?limit=3&cursor=\(cursor)")
            #expect(secondPage.status == 200)
            #expect(Set(Self.array(firstPage.json["items"]).map { $0["challengeID"] as? String }).isDisjoint(with: Self.array(secondPage.json["items"]).map { $0["challengeID"] as? String }))

            // Open 75 Hard: five daily requirements, restart at day 1.
            let hard = try await alice.http.get("/v1/challenges/\(Self.seventyFiveHard)")
            #expect(hard.status == 200, "\(hard.text)")
            let hardDefinition = Self.object(hard.json["definition"])
            let tasks = Self.array(hardDefinition["tasks"])
            #expect(tasks.count == 5)
            #expect(tasks.allSatisfy { Self.object($0["cadence"])["kind"] as? String == "daily" })
            #expect(Set(tasks.compactMap { $0["title"] as? String }) == [
                "Two 45-minute workouts", "Follow your diet", "Drink a gallon of water", "Read 10 pages", "Take a progress photo",
            ])
            #expect(Self.object(Self.object(hardDefinition["rules"])["failure"])["mode"] as? String == "strict")
            #expect((hard.json["ruleSummary"] as? String)?.hasPrefix("Miss any task and the challenge restarts at day 1.") == true)
            #expect((hard.json["failureConditions"] as? [String])?.count == 6)
            #expect(hard.json["estimatedDailyMinutes"] as? Int == 120)

            // A "most water this week" competition in litres; Bob (a friend) is invited and sees it, Carol does not.
            let start = Date()
            let competition = try await alice.http.post("/v1/challenges", json: [
                "kind": "competition", "name": "Most water this week", "description": "Who drinks the most water by Sunday?",
                "competition": [
                    "startsAt": Self.isoString(start), "endsAt": Self.isoString(start.addingTimeInterval(7 * 86_400)), "timeZone": "Europe/Rome",
                    "unit": "litres",
                ] as JSONObject,
            ])
            #expect(competition.status == 201, "\(competition.text)")
            let competitionID = try #require(Self.object(competition.json["definition"])["challengeID"] as? String)
            #expect(competition.header("Location") == "/v1/challenges/\(competitionID.lowercased())")
            #expect(Self.object(competition.json["definition"])["visibility"] as? String == "private")
            #expect(Self.object(Self.object(competition.json["definition"])["competition"])["unit"] as? String == "litres")
            #expect(try await bob.http.get("/v1/challenges/\(competitionID)").status == 404)
            let notFriend = try await alice.http.post("/v1/challenges/\(competitionID)/invitations", json: ["userIDs": [carol.id.uuidString]])
            #expect(notFriend.status == 422)
            #expect(Self.array(notFriend.json["errors"]).first?["field"] as? String == "userIDs[0]")
            let invited = try await alice.http.post("/v1/challenges/\(competitionID)/invitations", json: ["userIDs": [bob.id.uuidString]])
            #expect(invited.status == 201, "\(invited.text)")
            #expect(Self.id(Self.array(invited.json["invitations"]).first?["inviteeID"]) == bob.id.key)
            let bobSees = try await bob.http.get("/v1/challenges/\(competitionID)")
            #expect(bobSees.status == 200)
            #expect(bobSees.json["invited"] as? Bool == true)
            #expect(Self.array(try await bob.http.get("/v1/me/challenges").json["items"]).map { $0["challengeID"] as? String } == [competitionID])
            let carolGets = try await carol.http.get("/v1/challenges/\(competitionID)")
            #expect(carolGets.status == 404)
            #expect(carolGets.header("content-type") == "application/problem+json")

            // A habit, found among my habits.
            let habit = try await alice.http.post("/v1/challenges", json: [
                "kind": "habit", "name": "Read before bed", "description": "Fiction counts",
                "habit": ["colour": "#3366FF", "priority": 2, "notes": "Phone away", "reminderTime": "22:00"] as JSONObject,
                "tasks": [["taskID": "read", "title": "Read 10 pages", "kind": "quantity", "target": 10, "unit": "pages"] as JSONObject],
            ])
            #expect(habit.status == 201, "\(habit.text)")
            let habitID = try #require(Self.object(habit.json["definition"])["challengeID"] as? String)
            let myHabits = try await alice.http.get("/v1/me/challenges?kind=habit")
            #expect(Self.array(myHabits.json["items"]).map { $0["challengeID"] as? String } == [habitID])

            // A weekly chore assigned to a housemate: the household sees it, an outsider does not.
            let chore = try await alice.http.post("/v1/challenges", json: [
                "kind": "chore", "name": "Take out the bins", "groupID": home.uuidString,
                "chore": [
                    "assigneeID": dave.id.uuidString, "firstDueOn": "2026-06-01", "dueTime": "20:00",
                    "recurrence": ["kind": "weekly", "weekdays": ["monday", "thursday"]] as JSONObject, "points": 2,
                ] as JSONObject,
            ])
            #expect(chore.status == 201, "\(chore.text)")
            let choreID = try #require(Self.object(chore.json["definition"])["challengeID"] as? String)
            let daveChores = try await dave.http.get("/v1/groups/\(home.key)/chores")
            #expect(daveChores.status == 200)
            let listed = try #require(Self.array(daveChores.json["items"]).first)
            #expect(listed["challengeID"] as? String == choreID)
            #expect(Self.id(Self.object(listed["chore"])["assigneeID"]) == dave.id.key)
            #expect(try await carol.http.get("/v1/groups/\(home.key)/chores").status == 404)
            #expect(try await carol.http.get("/v1/challenges/\(choreID)").status == 404)
            // Any household member may reassign it; the change applies from tomorrow in the household's zone.
            let reassigned = try await dave.http.patch("/v1/challenges/\(choreID)", json: [
                "chore": ["assigneeID": alice.id.uuidString, "firstDueOn": "2026-06-01", "recurrence": ["kind": "weekly", "weekdays": ["monday"]] as JSONObject] as JSONObject
            ])
            #expect(reassigned.status == 200, "\(reassigned.text)")
            #expect(Self.object(reassigned.json["definition"])["effectiveFrom"] as? String == Self.tomorrow(in: "America/New_York"))

            // Editing the habit makes version 2 from tomorrow; today is still judged by version 1, which stays readable.
            let edit = try await alice.http.patch("/v1/challenges/\(habitID)", json: [
                "name": "Read 20 pages before bed",
                "tasks": [["taskID": "read", "title": "Read 20 pages", "kind": "quantity", "target": 20, "unit": "pages"] as JSONObject],
            ])
            #expect(edit.status == 200, "\(edit.text)")
            #expect(Self.object(edit.json["definition"])["version"] as? Int == 2)
            #expect(Self.object(edit.json["definition"])["effectiveFrom"] as? String == Self.tomorrow(in: "Europe/Rome"))
            let current = try await alice.http.get("/v1/challenges/\(habitID)")
            #expect(Self.object(current.json["definition"])["version"] as? Int == 1)
            #expect(Self.array(current.json["versions"]).map { $0["version"] as? Int } == [1, 2])
            let versionTwo = try await alice.http.get("/v1/challenges/\(habitID)/versions/2")
            #expect(Self.array(Self.object(versionTwo.json["definition"])["tasks"]).first?["target"] as? Double == 20)
            let versionOne = try await alice.http.get("/v1/challenges/\(habitID)/versions/1")
            #expect(Self.object(versionOne.json["definition"])["name"] as? String == "Read before bed")
            #expect(try await bob.http.patch("/v1/challenges/\(competitionID)", json: ["name": "Mine"]).status == 403)

            // Likes: idempotent, and taken back.
            let like = try await bob.http.put("/v1/challenges/\(Self.seventyFiveHard)/like", json: [:])
            #expect(like.status == 200)
            #expect(like.json["likes"] as? Int == 1 && like.json["likedByMe"] as? Bool == true)
            #expect(try await bob.http.put("/v1/challenges/\(Self.seventyFiveHard)/like", json: [:]).json["likes"] as? Int == 1)
            #expect(Self.array(try await carol.http.get("/v1/challenges?sort=liked").json["items"]).first?["name"] as? String == "75 Hard")
            let unlike = try await bob.http.delete("/v1/challenges/\(Self.seventyFiveHard)/like")
            #expect(unlike.json["likes"] as? Int == 0 && unlike.json["likedByMe"] as? Bool == false)

            // Deleting needs explicit confirmation.
            let unconfirmed = try await alice.http.delete("/v1/challenges/\(habitID)")
            #expect(unconfirmed.status == 422)
            #expect(unconfirmed.json["type"] as? String == "https://surge.example/problems/confirmation-required")
            #expect(try await alice.http.get("/v1/challenges/\(habitID)").status == 200)
            #expect(try await carol.http.delete("/v1/challenges/\(habitID)?confirm=true").status == 404)
            #expect(try await alice.http.delete("/v1/challenges/\(habitID)?confirm=true").status == 204)
            #expect(try await alice.http.get("/v1/challenges/\(habitID)").status == 404)

            // Joins reported by progress make a challenge trend.
            try await Self.publish(
                AttemptStarted(
                    attemptID: UUID(), userID: carol.id, challengeID: UUID(uuidString: Self.meditation)!, challengeVersion: 1, kind: .curated,
                    attemptNumber: 1, startedOn: LocalDate("2026-03-10")!, timeZone: "Europe/Rome", groupID: nil, startedAt: Date()),
                with: producer)
            try await waitUntil("the join counted for trending") {
                let trending = try await carol.http.get("/v1/challenges?sort=trending&limit=1")
                return Self.id(Self.array(trending.json["items"]).first?["challengeID"]) == Self.meditation
            }

            // What the service published reached the broker.
            let outboxed = try await stack.database.count("SELECT count(*) FROM challenges.outbox")
            let records = try await stack.kafka!.readAll(topic: Topic.challenges.name, expecting: outboxed)
            let types = records.compactMap { $0.header("ce_type") }
            for type in [ChallengePublished.eventType, ChallengeChanged.eventType, ChallengeDeleted.eventType, ChallengeInvitationSent.eventType, ChallengeLiked.eventType] {
                #expect(types.contains(type), "\(type) missing")
            }
            #expect(types.filter { $0 == ChallengeInvitationSent.eventType }.count == 1)

            // Carol deletes her account: her private definitions go, with their history.
            let carolsHabit = try await carol.http.post("/v1/challenges", json: ["kind": "habit", "name": "Journal"])
            #expect(carolsHabit.status == 201)
            let goodbye = try await carol.http.send(.DELETE, "/v1/me", body: Data(#"{"confirm": true}"#.utf8))
            #expect(goodbye.status == 204, "\(goodbye.text)")
            try await waitUntil("challenges erased Carol") {
                let owned = try await stack.database.count("SELECT count(*) FROM challenges.challenges WHERE owner_id = \(carol.id)")
                let known = try await stack.database.count("SELECT count(*) FROM challenges.users WHERE user_id = \(carol.id)")
                return owned == 0 && known == 0
            }

            // A restart seeds nothing twice.
            let published = "SELECT count(*) FROM challenges.outbox WHERE type = '\(ChallengePublished.eventType)'"
            let publishedBefore = try await stack.database.count(PostgresQuery(unsafeSQL: published))
            let challenges = try stack.process("challenges")
            await challenges.stop()
            try await challenges.start()
            #expect(try await stack.database.count("SELECT count(*) FROM challenges.challenges WHERE content_version IS NOT NULL") == 7)
            #expect(try await stack.database.count("SELECT count(*) FROM challenges.challenge_versions WHERE created_by IS NULL") == 7)
            #expect(try await stack.database.count(PostgresQuery(unsafeSQL: published)) == publishedBefore)
        }
    }

    @Test("bad input: every invalid definition gets problem+json naming the field; malformed bodies and parameters are 4xx, never 5xx")
    func badInput() async throws {
        try await Self.withPeople("challenges-bad-input") { stack, people, home, _ in
            let alice = people["alice"]!, carol = people["carol"]!
            let start = Date().addingTimeInterval(86_400)
            func competition(_ overrides: [String: any Sendable]) -> [String: any Sendable] {
                var details: [String: any Sendable] = [
                    "startsAt": Self.isoString(start), "endsAt": Self.isoString(start.addingTimeInterval(7 * 86_400)), "timeZone": "Europe/Rome",
                    "unit": "litres",
                ]
                details.merge(overrides) { _, new in new }
                return ["kind": "competition", "name": "Water", "competition": details]
            }
            func habit(_ extra: [String: any Sendable]) -> [String: any Sendable] {
                var body: [String: any Sendable] = ["kind": "habit", "name": "Stretch"]
                body.merge(extra) { _, new in new }
                return body
            }
            func chore(_ details: [String: any Sendable], groupID: String? = nil) -> [String: any Sendable] {
                var chore: [String: any Sendable] = ["firstDueOn": "2026-06-01", "recurrence": ["kind": "daily"] as JSONObject]
                chore.merge(details) { _, new in new }
                var body: [String: any Sendable] = ["kind": "chore", "name": "Dishes", "chore": chore]
                if let groupID { body["groupID"] = groupID }
                return body
            }
            let quantity: [String: any Sendable] = ["taskID": "reps", "title": "Reps", "kind": "quantity", "target": 20, "unit": "push-ups"]
            let badSeries: [String: any Sendable] = [
                "basePoints": 0, "repMultiplier": 0.3, "seriesMultiplier": 0.8,
                "streakMultipliers": [["fromStreak": 0, "multiplier": 1.0] as [String: any Sendable]],
                "capBands": [["fromLevel": 1, "multiplierOfDailyGoal": 1.5] as [String: any Sendable]], "levelThresholds": [100, 200],
            ]
            let cases: [(String, [String: any Sendable])] = [
                ("name", habit(["name": ""] as JSONObject)),
                ("kind", ["kind": "curated", "name": "My library entry", "durationDays": 10, "tasks": [["taskID": "a", "title": "A", "kind": "checkbox"] as JSONObject]] as JSONObject),
                ("competition", ["kind": "competition", "name": "Water"] as JSONObject),
                ("competition.endsAt", competition(["endsAt": Self.isoString(start.addingTimeInterval(-3600))] as JSONObject)),
                ("competition.endsAt", competition(["endsAt": Self.isoString(start.addingTimeInterval(400 * 86_400))] as JSONObject)),
                ("competition.timeZone", competition(["timeZone": "Moon/Base"] as JSONObject)),
                ("competition.unit", competition(["unit": ""] as JSONObject)),
                ("durationDays", competition([:]).merging(["durationDays": 30] as JSONObject) { _, new in new }),
                ("tasks[0].unit", competition([:]).merging(["tasks": [["taskID": "w", "title": "W", "kind": "quantity", "unit": "miles"] as JSONObject]] as JSONObject) { _, new in new }),
                ("habit.colour", habit(["habit": ["colour": "blue"] as JSONObject] as JSONObject)),
                ("habit.priority", habit(["habit": ["priority": 9] as JSONObject] as JSONObject)),
                ("tasks[0].taskID", habit(["tasks": [["taskID": "Bad ID", "title": "A", "kind": "checkbox"] as JSONObject]] as JSONObject)),
                ("tasks[0].target", habit(["tasks": [["taskID": "a", "title": "A", "kind": "quantity", "unit": "pages"] as JSONObject]] as JSONObject)),
                ("tasks[0].target", habit(["tasks": [["taskID": "a", "title": "A", "kind": "quantity", "unit": "litres", "target": -3.8] as JSONObject]] as JSONObject)),
                ("tasks[0].unit", habit(["tasks": [["taskID": "a", "title": "A", "kind": "checkbox", "unit": "pages"] as JSONObject]] as JSONObject)),
                ("tasks[1].taskID", habit(["tasks": [["taskID": "a", "title": "A", "kind": "checkbox"] as JSONObject, ["taskID": "a", "title": "B", "kind": "checkbox"] as JSONObject]] as JSONObject)),
                ("tasks[0].cadence.weekdays", habit(["tasks": [["taskID": "a", "title": "A", "kind": "checkbox", "cadence": ["kind": "weekdays", "weekdays": [String]()] as JSONObject] as JSONObject]] as JSONObject)),
                ("tasks[0].cadence.timesPerWeek", habit(["tasks": [["taskID": "a", "title": "A", "kind": "checkbox", "cadence": ["kind": "timesPerWeek", "timesPerWeek": 9] as JSONObject] as JSONObject]] as JSONObject)),
                ("tasks", habit(["tasks": [JSONObject]()] as JSONObject)),
                ("rules.failure.mode", habit(["rules": ["failure": ["mode": "strict"] as JSONObject] as JSONObject] as JSONObject)),
                ("rules.streak.freezesPerMonth", habit(["rules": ["streak": ["period": "day", "freezesPerMonth": 7, "activityKeepsWeeklyStreak": false] as JSONObject] as JSONObject] as JSONObject)),
                ("rules.checkInGraceMinutes", habit(["rules": ["checkInGraceMinutes": 5000] as JSONObject] as JSONObject)),
                ("rules.points.series.basePoints", habit(["tasks": [quantity], "rules": ["points": ["kind": "series", "series": badSeries] as JSONObject] as JSONObject] as JSONObject)),
                ("rules.points.pointsPerTask", habit(["rules": ["points": ["kind": "perTask", "pointsPerTask": 0] as JSONObject] as JSONObject] as JSONObject)),
                ("groupID", chore([:])),
                ("chore.assigneeID", chore(["assigneeID": carol.id.uuidString] as JSONObject, groupID: home.uuidString)),
                ("chore.points", chore(["points": 0] as JSONObject, groupID: home.uuidString)),
                ("chore.recurrence.weekdays", chore(["recurrence": ["kind": "weekly"] as JSONObject] as JSONObject, groupID: home.uuidString)),
                ("chore.recurrence.dayOfMonth", chore(["recurrence": ["kind": "monthly", "dayOfMonth": 40] as JSONObject] as JSONObject, groupID: home.uuidString)),
                ("tasks", ["kind": "weekly", "name": "Weekly squats"] as JSONObject),
                ("visibility", habit(["visibility": "public"] as JSONObject)),
                // Decoding: wrong types, bad enums and dates, missing and unknown fields.
                ("durationDays", habit(["durationDays": "ten"] as JSONObject)),
                ("difficulty", habit(["difficulty": "impossible"] as JSONObject)),
                ("kind", ["name": "No kind"] as JSONObject),
                ("chore.firstDueOn", chore(["firstDueOn": "next week"] as JSONObject, groupID: home.uuidString)),
                ("colour", habit(["colour": "red"] as JSONObject)),
                ("tasks[0].colour", habit(["tasks": [["taskID": "a", "title": "A", "kind": "checkbox", "colour": "red"] as JSONObject]] as JSONObject)),
            ]
            for (field, body) in cases {
                let response = try await alice.http.post("/v1/challenges", json: body)
                #expect(response.status == 422, "\(field): \(response.status) \(response.text)")
                #expect(response.header("content-type") == "application/problem+json", "\(field)")
                let fields = Self.array(response.json["errors"]).compactMap { $0["field"] as? String }
                #expect(fields.contains(field), "expected \(field), got \(fields)")
            }
            // Carol may not put a chore in a household she is not in: for her it does not exist, like a group that does not.
            let intruder = try await carol.http.post("/v1/challenges", json: chore([:], groupID: home.uuidString))
            #expect(intruder.status == 404, "\(intruder.text)")
            let unknown = try await alice.http.post(
                "/v1/challenges", json: ["kind": "habit", "name": "Shared", "visibility": "group", "groupID": UUID().uuidString] as JSONObject)
            #expect(unknown.status == 404, "\(unknown.text)")

            // Several broken rules are reported together.
            let many = try await alice.http.post("/v1/challenges", json: habit(["name": "", "habit": ["colour": "x", "priority": 0] as JSONObject]))
            #expect(Set(Self.array(many.json["errors"]).compactMap { $0["field"] as? String }) == ["name", "habit.colour", "habit.priority"])

            // Malformed bodies and the wrong media type.
            for (body, contentType, status) in [("{oops", "application/json", 400), ("", "application/json", 400), ("[1, 2]", "application/json", 422), ("name=x", "text/plain", 415)] {
                let response = try await alice.http.send(.POST, "/v1/challenges", body: Data(body.utf8), contentType: contentType)
                #expect(response.status == status, "\(body): \(response.status) \(response.text)")
                #expect(response.header("content-type") == "application/problem+json")
            }

            // Edits, invitations and parameters.
            let created = try await alice.http.post("/v1/challenges", json: habit([:]))
            let id = try #require(Self.object(created.json["definition"])["challengeID"] as? String)
            let edits: [(String, [String: any Sendable])] = [
                ("habit.colour", ["habit": ["colour": "nope"] as JSONObject] as JSONObject), ("kind", ["kind": "chore"] as JSONObject), ("body", [:]),
                ("tasks[0].target", ["tasks": [["taskID": "a", "title": "A", "kind": "quantity", "unit": "pages", "target": 0] as JSONObject]] as JSONObject),
            ]
            for (field, body) in edits {
                let response = try await alice.http.patch("/v1/challenges/\(id)", json: body)
                #expect(response.status == 422, "\(field): \(response.text)")
                #expect(Self.array(response.json["errors"]).compactMap { $0["field"] as? String }.contains(field), "\(field): \(response.text)")
            }
            let competitionResponse = try await alice.http.post("/v1/challenges", json: competition([:]))
            let competitionID = try #require(Self.object(competitionResponse.json["definition"])["challengeID"] as? String)
            let nobody = try await alice.http.post("/v1/challenges/\(competitionID)/invitations", json: [:])
            #expect(nobody.status == 201 && Self.array(nobody.json["invitations"]).isEmpty, "inviting nobody sends nothing: \(nobody.text)")
            for (field, body) in [("userIDs[0]", ["userIDs": ["not-a-uuid"]] as [String: any Sendable])] {
                let response = try await alice.http.post("/v1/challenges/\(competitionID)/invitations", json: body)
                #expect(response.status == 422, "\(field): \(response.text)")
                #expect(Self.array(response.json["errors"]).compactMap { $0["field"] as? String }.contains(field), "\(field): \(response.text)")
            }
            #expect(try await alice.http.post("/v1/challenges/\(id)/invitations", json: ["userIDs": [people["bob"]!.id.uuidString]]).status == 409)
            let queries: [(String, String)] = [
                ("/v1/challenges?difficulty=easy", "difficulty"), ("/v1/challenges?kind=party", "kind"), ("/v1/challenges?minDays=0", "minDays"),
                ("/v1/challenges?sort=random", "sort"),
                ("/v1/challenges?limit=1000", "limit"), ("/v1/me/challenges?kind=party", "kind"),
                ("/v1/groups/\(home.key)/chores?limit=0", "limit"),
            ]
            for (path, field) in queries {
                let response = try await alice.http.get(path)
                #expect(response.status == 422, "\(path): \(response.text)")
                #expect(Self.array(response.json["errors"]).compactMap { $0["field"] as? String } == [field], "\(path): \(response.text)")
            }
            // Relevance without a search is the default order.
            #expect(try await alice.http.get("/v1/challenges?sort=relevance").status == 200)
            // A range nothing matches is an empty list; a cursor this API never issued is 400 unknown-cursor.
            let inverted = try await alice.http.get("/v1/challenges?minDays=30&maxDays=7")
            #expect(inverted.status == 200, "\(inverted.text)")
            #expect(Self.array(inverted.json["items"]).isEmpty && inverted.json["nextCursor"] == nil, "\(inverted.text)")
            let garbage = try await alice.http.get("/v1/challenges?cursor=garbage")
            #expect(garbage.status == 400 && garbage.json["type"] as? String == "https://surge.example/problems/unknown-cursor", "\(garbage.text)")
            // Forged cursors: a key no integer sort could have issued is an unknown cursor, and the service keeps answering.
            for (sort, key) in [("newest", "1e300"), ("liked", "-1e300"), ("trending", "2.5"), ("newest", "1e400")] {
                let json = #"{"id":"\#(UUID().uuidString)","key":\#(key),"sort":"\#(sort)"}"#
                let cursor = Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                let response = try await alice.http.get("/v1/challenges?sort=\(sort)&cursor=\(cursor)")
                #expect(response.status == 400, "\(json): \(response.text)")
                #expect(response.json["type"] as? String == "https://surge.example/problems/unknown-cursor", "\(json): \(response.text)")
            }
            #expect(try await alice.http.get("/v1/challenges").status == 200)
            #expect(try await alice.http.delete("/v1/challenges/\(id)?confirm=maybe").status == 422)
            for path in ["/v1/challenges/not-a-uuid", "/v1/challenges/\(id)/versions/two", "/v1/challenges/\(id)/versions/0", "/v1/groups/nope/chores"] {
                #expect(try await alice.http.get(path).status == 404, "\(path)")
            }
            #expect(try await TestHTTP(baseURL: try stack.process("gateway").baseURL).get("/v1/challenges").status == 401)
            // Nothing above was a server error.
            let log = (try? String(contentsOf: try stack.process("challenges").logFile, encoding: .utf8)) ?? ""
            #expect(!log.contains("Unhandled error"), "the challenges service logged an unhandled error")
        }
    }

    /// A request that needs what identity has only just told challenges (a housemate who joined a moment ago) is
    /// answered as if it knew: 2xx, or 503 `catching-up` with `Retry-After`; never a 4xx that blames the caller.
    static func expectCaughtUp(_ response: TestResponse, _ success: Int, _ what: String) {
        if response.status == 503 {
            #expect(response.json["type"] as? String == "https://surge.example/problems/catching-up", "\(what): \(response.text)")
            #expect(response.header("Retry-After") != nil, "\(what): no Retry-After")
        } else {
            #expect(response.status == success, "\(what): \(response.status) \(response.text)")
        }
    }

    @Test("a housemate who joined a moment ago: a chore assigned to them at once is created and they see the household's chores, never 422 or 404")
    func housemateJustJoined() async throws {
        try await Self.withPeople("challenges-just-joined") { stack, people, flat, _ in
            let alice = people["alice"]!
            for attempt in 0..<3 {
                let newcomer = try await Self.register(try stack.http(), "newcomer\(attempt)")
                let group = try await alice.http.post("/v1/groups", json: ["name": "House \(attempt)", "kind": "household", "timeZone": "Europe/Rome"])
                let home = try #require(group.json["id"] as? String, "\(group.text)")
                let dishes = try await alice.http.post("/v1/challenges", json: [
                    "kind": "chore", "name": "Dishes", "groupID": home,
                    "chore": ["firstDueOn": "2026-06-01", "recurrence": ["kind": "daily"] as JSONObject] as JSONObject,
                ])
                #expect(dishes.status == 201, "\(dishes.text)")
                let dishesID = try #require(Self.object(dishes.json["definition"])["challengeID"] as? String)
                let code = try #require(try await alice.http.post("/v1/groups/\(home)/invites").json["code"] as? String)
                #expect(try await newcomer.http.post("/v1/groups/join", json: ["code": code]).status == 200)
                // No wait: identity answered the join, and the app acts on it straight away.
                let bins = try await alice.http.post("/v1/challenges", json: [
                    "kind": "chore", "name": "Bins", "groupID": home,
                    "chore": ["assigneeID": newcomer.id.uuidString, "firstDueOn": "2026-06-01", "recurrence": ["kind": "daily"] as JSONObject] as JSONObject,
                ])
                Self.expectCaughtUp(bins, 201, "chore assigned to the newcomer (try \(attempt))")
                Self.expectCaughtUp(try await newcomer.http.get("/v1/challenges/\(dishesID)"), 200, "the household's chore read by the newcomer")
                let reassigned = try await alice.http.patch("/v1/challenges/\(dishesID)", json: [
                    "chore": ["assigneeID": newcomer.id.uuidString, "firstDueOn": "2026-06-01", "recurrence": ["kind": "daily"] as JSONObject] as JSONObject
                ])
                Self.expectCaughtUp(reassigned, 200, "a chore reassigned to the newcomer")
            }
            // Someone who is not a member is still refused, after the wait.
            let carol = people["carol"]!
            let refused = try await alice.http.post("/v1/challenges", json: [
                "kind": "chore", "name": "Bins", "groupID": flat.uuidString,
                "chore": ["assigneeID": carol.id.uuidString, "firstDueOn": "2026-06-01", "recurrence": ["kind": "daily"] as JSONObject] as JSONObject,
            ])
            #expect(refused.status == 422, "\(refused.text)")
        }
    }
}
