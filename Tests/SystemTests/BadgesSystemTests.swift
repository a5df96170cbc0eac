import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// Badges as a user meets them: through the gateway, with identity, challenges, progress and badges as processes.
@Suite("Badges: achievements through the gateway", .tags(.system), .kind(.system), .serialized)
struct BadgesSystemTests {
    typealias User = ProgressStage.User

    /// The stack, with the leaderboard (closing windows every 100 ms) when a test needs its boards.
    static func withStage(_ name: String, withLeaderboard: Bool = false, _ body: (ProgressStage) async throws -> Void) async throws {
        try await withTestStack(name) { stack in
            try await stack.start("identity")
            try await stack.start("challenges", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "100"])
            if withLeaderboard {
                try await stack.start("leaderboard", environment: ["SIMULATED_CLOCK": "true", "WINDOW_CLOSE_INTERVAL_MS": "100"])
            }
            try await stack.start("badges")
            try await stack.start("gateway")
            try await body(ProgressStage(stack: stack))
        }
    }

    static func earned(_ response: TestResponse) -> [[String: Any]] { response.json["earned"] as? [[String: Any]] ?? [] }
    static func locked(_ response: TestResponse) -> [[String: Any]] { response.json["locked"] as? [[String: Any]] ?? [] }

    /// Waits until the user's badges satisfy `condition`.
    static func badges(of user: User, _ what: String, until condition: @escaping (TestResponse) -> Bool) async throws -> TestResponse {
        try await eventually("\(what)") { () -> TestResponse? in
            let response = try await user.http.get("/v1/me/badges")
            return condition(response) ? response : nil
        }
    }

    /// A locked badge's progress, "7 of 10"; nil when it is not locked.
    static func progress(of badgeID: String, _ response: TestResponse) -> String? {
        locked(response).first { $0["badgeID"] as? String == badgeID }.map { "\($0["current"] as? Int ?? -1) of \($0["target"] as? Int ?? -1)" }
    }

    static func choreLevels(_ response: TestResponse) -> [Int] {
        earned(response).filter { $0["badgeID"] as? String == "chores" }.compactMap { $0["level"] as? Int }.sorted()
    }

    static func choreProgress(_ response: TestResponse) -> String? { progress(of: "chores", response) }

    @Test("a housemate's 1st, 10th and 50th chore each earn their badge once; a locked badge shows its progress; housemates see it, strangers get 404")
    func choreBadges() async throws {
        try await Self.withStage("badges-chores") { stage in
            let tokyo = LocalCalendar(zoneNamed: "Asia/Tokyo")!
            let today = LocalDate("2026-11-18")!
            try await stage.setClock(tokyo.instant(of: LocalTime("09:00")!, on: today))
            let aiko = try await stage.user("Aiko", timeZone: "Asia/Tokyo")
            let bruno = try await stage.user("Bruno", timeZone: "Europe/Rome")
            let outsider = try await stage.user("Olaf", timeZone: "Europe/Oslo")
            let household = try await stage.household(owner: aiko, members: [bruno], timeZone: "Asia/Tokyo")

            let fresh = try await bruno.http.get("/v1/me/badges")
            #expect(Self.earned(fresh).isEmpty)
            #expect(Self.choreProgress(fresh) == "0 of 1", "\(fresh.text)")
            #expect(!Self.locked(fresh).contains { $0["badgeID"] as? String == "all-rounder" }, "a secret badge is not listed before it is earned")

            for index in 1...50 {
                let chore = try await aiko.http.post("/v1/challenges", json: [
                    "kind": "chore", "name": "Chore \(index)", "groupID": household,
                    "chore": ["firstDueOn": today.description, "recurrence": ["kind": "daily"] as JSONObject, "points": 1] as JSONObject,
                ])
                #expect(chore.status == 201, "\(chore.text)")
            }
            let occurrences = try await eventually("fifty chores are due") { () -> [String]? in
                let list = try await aiko.http.get("/v1/groups/\(household)/chore-occurrences?limit=100").json["items"] as? [[String: Any]] ?? []
                return list.count == 50 ? list.compactMap { $0["occurrenceID"] as? String } : nil
            }
            func complete(_ range: ClosedRange<Int>) async throws {
                for index in range {
                    let done = try await bruno.http.post("/v1/chore-occurrences/\(occurrences[index - 1])/complete")
                    #expect(done.status == 200, "\(done.text)")
                }
            }

            try await complete(1...1)
            let first = try await Self.badges(of: bruno, "the first chore's badge") { Self.choreLevels($0) == [1] }
            #expect(Self.earned(first).first { $0["badgeID"] as? String == "chores" }?["title"] as? String == "First Chore Done")
            #expect(Self.choreProgress(first) == "1 of 10")

            try await complete(2...9)
            _ = try await Self.badges(of: bruno, "7 of 10 and then 9 of 10") { Self.choreProgress($0) == "9 of 10" }
            let tenth = ContinuousClock.now
            try await complete(10...10)
            let ten = try await Self.badges(of: bruno, "the 10th chore's badge") { Self.choreLevels($0) == [1, 2] }
            print("badges: the 10th chore's badge was readable \(ContinuousClock.now - tenth) after the chore's 2xx")
            #expect(Self.choreProgress(ten) == "10 of 50")

            try await complete(11...50)
            let fifty = try await Self.badges(of: bruno, "the 50th chore's badge") { Self.choreLevels($0) == [1, 2, 3] }
            #expect(Self.choreProgress(fifty) == nil, "every level held")
            try await waitUntil("each level published once") {
                try await stage.stack.database.count(
                    "SELECT count(*) FROM badges.outbox WHERE type = 'surge.badges.badge.awarded.v1' AND payload->>'badgeID' = 'chores'") == 3
            }
            #expect(try await stage.stack.database.count("SELECT count(*) FROM badges.awards WHERE badge_id = 'chores'") == 3)

            // A housemate sees Bruno's badges; a stranger does not learn he exists.
            let seen = try await aiko.http.get("/v1/users/\(bruno.id.uuidString)/badges")
            #expect(seen.status == 200)
            #expect(Self.earned(seen).filter { $0["badgeID"] as? String == "chores" }.count == 3)
            #expect(try await outsider.http.get("/v1/users/\(bruno.id.uuidString)/badges").status == 404)
            #expect(try await outsider.http.get("/v1/users/\(UUID().uuidString)/badges").status == 404)

            // The catalogue: rarity among the users known, the secret badge hidden.
            let catalogue = try await outsider.http.get("/v1/badges")
            let items = catalogue.json["items"] as? [[String: Any]] ?? []
            let chores = try #require(items.first { $0["badgeID"] as? String == "chores" })
            let levels = chores["levels"] as? [[String: Any]] ?? []
            #expect(levels.map { $0["holders"] as? Int } == [1, 1, 1])
            #expect(levels.first?["rarityPercent"] as? Double == 33.3, "one of three users")
            let secret = try #require(items.first { $0["badgeID"] as? String == "all-rounder" })
            #expect(secret["title"] as? String == "Secret badge")
            #expect((secret["levels"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("a 7-day habit streak earns the 7-day badge, once, and the habit's own 3-day badge; a broken badge of its own is refused with 422")
    func streakBadge() async throws {
        try await Self.withStage("badges-streak") { stage in
            let user = try await stage.user("Ana", timeZone: "Europe/Rome")
            let refused = try await user.http.post("/v1/challenges", json: [
                "kind": "habit", "name": "Sketch",
                "badges": [["id": "three-days", "title": "Three days", "rule": ["kind": "streak"] as JSONObject] as JSONObject],
            ])
            #expect(refused.status == 422 && refused.header("Content-Type")?.hasPrefix("application/problem+json") == true, "\(refused.text)")
            let invalid = refused.json["errors"] as? [[String: Any]] ?? []
            #expect(invalid.map { $0["field"] as? String } == ["badges[0].rule.threshold"], "\(refused.text)")
            let unknownKind = try await user.http.post("/v1/challenges", json: [
                "kind": "habit", "name": "Sketch",
                "badges": [["id": "three-days", "title": "Three days", "rule": ["kind": "sometimes"] as JSONObject] as JSONObject],
            ])
            #expect(unknownKind.status == 422, "\(unknownKind.text)")

            let habit = try await stage.habit(for: user, graceMinutes: 60, badges: [
                ["id": "three-days", "title": "Three days of sketching", "icon": "pencil", "rule": ["kind": "streak", "threshold": 3] as JSONObject]
            ])
            try await waitUntil("the badge service knows the habit's own badges") {
                try await stage.stack.database.count("SELECT count(*) FROM badges.challenges WHERE challenge_id = \(UUID(uuidString: habit)!)") == 1
            }
            let first = LocalDate("2026-11-02")!
            try await stage.setClock(first, "09:00", for: user)
            let started = try await user.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require((started.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(started.text)")
            for day in 0..<7 {
                try await stage.setClock(first.adding(days: day), "09:00", for: user)
                #expect(try await user.http.put("/v1/attempts/\(attemptID)/tasks/sketch", json: ["done": true]).status == 200)
            }
            // The seventh day is judged after its window closes: the streak reaches 7.
            try await stage.setClock(first.adding(days: 7), "09:00", for: user)
            let earned = try await Self.badges(of: user, "the 7-day streak badge") { response in
                Self.earned(response).contains { $0["badgeID"] as? String == "streak" && $0["level"] as? Int == 1 }
            }
            #expect(Self.earned(earned).first { $0["badgeID"] as? String == "streak" }?["title"] as? String == "7-day streak")
            #expect(Self.progress(of: "streak", earned) == "7 of 14")
            #expect(Self.earned(earned).contains { $0["badgeID"] as? String == "check-ins" && $0["level"] as? Int == 1 })
            let own = Self.earned(earned).filter { $0["badgeID"] as? String == "challenge:\(habit.lowercased()):three-days" }
            #expect(own.count == 1, "\(earned.text)")
            #expect(own.first?["title"] as? String == "Three days of sketching" && own.first?["icon"] as? String == "pencil")
        }
    }
    @Test("a weekly push-up challenge completed earns \"Weekly Challenge <Monday's date>\" and its 200 points in the ledger, each once")
    func weeklyChallengeBadge() async throws {
        try await Self.withStage("badges-weekly") { stage in
            try await stage.waitForDefinition(Fixtures.weeklyPushUps)
            let athlete = try await stage.user("Luca", timeZone: "Europe/Rome")
            let plan = try await athlete.http.put("/v1/me/training-plan", json: [
                "activityLevel": "intermediate", "maxPushUpsInOneSet": 20, "daysPerWeek": 5, "dailyGoal": 20,
            ])
            #expect(plan.status == 200, "\(plan.text)")
            try await waitUntil("progress knows the daily goal") {
                try await stage.stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(athlete.id) AND daily_goal = 20") == 1
            }
            // Wednesday of the week that begins on Monday 2026-11-16: the badge is named after the Monday.
            try await stage.setClock(LocalDate("2026-11-18")!, "07:00", for: athlete)
            let started = try await athlete.http.post("/v1/attempts", json: ["challengeID": Fixtures.weeklyPushUps])
            let attemptID = try #require((started.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(started.text)")
            // 7 x 20 = 140 push-ups complete the week's challenge; the third log comes after it is complete.
            for amount in [100, 40, 10] {
                _ = try await athlete.http.post("/v1/attempts/\(attemptID)/tasks/push-ups/logs", json: ["quantity": amount])
            }

            let earned = try await Self.badges(of: athlete, "the week's challenge badge") { response in
                Self.earned(response).contains { $0["badgeID"] as? String == "weekly-challenge" }
            }
            let weekly = Self.earned(earned).filter { $0["badgeID"] as? String == "weekly-challenge" }
            #expect(weekly.count == 1, "\(earned.text)")
            #expect(weekly.first?["title"] as? String == "Weekly Challenge 2026-11-16")
            #expect(weekly.first?["period"] as? String == "2026-11-16")
            #expect(weekly.first?["bonusPoints"] as? Int == 200)

            // The award is published once, and by the time it is, the ledger holds the 200 points once: progress books
            // them with the completion, and nothing consuming the award books them again.
            try await waitUntil("the award is published") {
                try await stage.stack.database.count(
                    "SELECT count(*) FROM badges.outbox WHERE type = 'surge.badges.badge.awarded.v1' AND payload->>'badgeID' = 'weekly-challenge' AND position NOT IN (SELECT position FROM badges.outbox_pending)"
                ) == 1
            }
            let ledger = try await athlete.http.get("/v1/me/points/ledger?limit=100").json["items"] as? [[String: Any]] ?? []
            #expect(ledger.filter { $0["reason"] as? String == "challengeBonus" }.compactMap { $0["points"] as? Int } == [200], "\(ledger)")
            let total = try await athlete.http.get("/v1/me/points").json["total"] as? Int ?? 0
            #expect(total == ledger.compactMap { $0["points"] as? Int }.reduce(0, +))
            #expect(try await stage.stack.database.count("SELECT count(*) FROM badges.awards WHERE badge_id = 'weekly-challenge'") == 1)
        }
    }

    @Test("a competition's winner earns its own first-place badge once when the real leaderboard closes the week, not the runner-up who leads its points board; those who joined see its badges locked, with progress, and listed with rarity; others get 404; deleted, it leaves the lists")
    func competitionWinner() async throws {
        try await Self.withStage("badges-competition", withLeaderboard: true) { stage in
            // Monday of ISO week 2026-W48.
            let start = Timestamp.parse("2026-11-23T08:00:00Z")!
            try await stage.setClock(start.addingTimeInterval(-3600))
            let aiko = try await stage.user("Aiko", timeZone: "Asia/Tokyo")
            let bruno = try await stage.user("Bruno", timeZone: "Europe/Rome")
            let outsider = try await stage.user("Olaf", timeZone: "Europe/Oslo")
            try await stage.befriend(bruno, aiko)
            // Litres rank the competition; its rules also give points, so it has a points board, which the stretches lead.
            let (competition, water) = try await stage.waterCompetition(owner: bruno, from: start, inviting: [aiko], fields: [
                "tasks": [
                    ["taskID": "water", "title": "Water", "kind": "quantity", "unit": "litres"] as JSONObject,
                    ["taskID": "stretch", "title": "Stretch", "kind": "checkbox", "points": 10] as JSONObject,
                ],
                "rules": ["points": ["kind": "perTask", "pointsPerTask": 1] as JSONObject] as JSONObject,
                "badges": [
                    [
                        "id": "winner", "title": "Water Cup winner", "icon": "trophy", "rule": ["kind": "firstPlace", "window": "week"] as JSONObject,
                    ] as JSONObject,
                    ["id": "three-days", "title": "Three days in a row", "rule": ["kind": "streak", "threshold": 3] as JSONObject] as JSONObject,
                ],
            ])
            let competitionID = UUID(uuidString: competition)!
            let winnerBadge = "challenge:\(competitionID.key):winner", streakBadge = "challenge:\(competitionID.key):three-days"
            let badgesOfCompetition = "/v1/badges?challengeID=\(competition)"
            try await waitUntil("the badge service knows the competition's own badges") {
                try await stage.stack.database.count("SELECT count(*) FROM badges.challenges WHERE challenge_id = \(competitionID)") == 1
            }

            // Its owner may list them before anyone joined; a stranger may not learn it exists.
            let unjoined = try await bruno.http.get(badgesOfCompetition)
            #expect(unjoined.status == 200, "\(unjoined.text)")
            #expect((unjoined.json["items"] as? [[String: Any]])?.compactMap { $0["badgeID"] as? String } == [winnerBadge, streakBadge])
            for refused in [try await outsider.http.get(badgesOfCompetition), try await outsider.http.get("/v1/badges?challengeID=\(UUID())")] {
                #expect(refused.status == 404 && refused.header("Content-Type")?.hasPrefix("application/problem+json") == true, "\(refused.text)")
            }
            let malformed = try await outsider.http.get("/v1/badges?challengeID=water")
            #expect(malformed.status == 422 && malformed.header("Content-Type")?.hasPrefix("application/problem+json") == true, "\(malformed.text)")
            #expect((malformed.json["errors"] as? [[String: Any]])?.map { $0["field"] as? String } == ["challengeID"], "\(malformed.text)")

            // Aiko logs 5 litres on Monday; Bruno 1 litre and a stretch on Monday and on Tuesday: 2 litres, but 22 points.
            try await stage.setClock(start.addingTimeInterval(3600))
            var attempts: [UUID: String] = [:]
            for user in [aiko, bruno] {
                let started = try await user.http.post("/v1/attempts", json: ["challengeID": competition])
                attempts[user.id] = try #require((started.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(started.text)")
            }
            #expect(try await aiko.http.post("/v1/attempts/\(attempts[aiko.id]!)/tasks/\(water)/logs", json: ["quantity": 5.0]).status == 201)
            for day in 0..<2 {
                try await stage.setClock(start.addingTimeInterval(Double(day) * 86_400 + 3600))
                #expect(try await bruno.http.post("/v1/attempts/\(attempts[bruno.id]!)/tasks/\(water)/logs", json: ["quantity": 1.0]).status == 201)
                #expect(try await bruno.http.put("/v1/attempts/\(attempts[bruno.id]!)/tasks/stretch", json: ["done": true]).status == 200)
            }

            // Joined, both see its badges locked; the stranger's list has none of them.
            for user in [aiko, bruno] {
                let mine = try await Self.badges(of: user, "\(user.id)'s locked badges list the competition's") {
                    Self.progress(of: winnerBadge, $0) == "0 of 1"
                }
                #expect(Self.locked(mine).first { $0["badgeID"] as? String == winnerBadge }?["challengeID"] as? String == competitionID.key)
            }
            #expect(!Self.locked(try await outsider.http.get("/v1/me/badges")).contains { ($0["badgeID"] as? String)?.hasPrefix("challenge:") == true })

            // Both boards final before the week closes: a window closed early is published again when a late event changes
            // it, and its first winners keep their award.
            try await waitUntil("the competition's board is final: Aiko 5 litres, Bruno 2") {
                let board = try await bruno.http.get("/v1/leaderboards/challenges/\(competition)?window=week").json["items"] as? [[String: Any]] ?? []
                return board.map { "\($0["displayName"] as? String ?? "?") \($0["score"] as? Double ?? -1)" } == ["Aiko 5.0", "Bruno 2.0"]
            }
            try await waitUntil("the points board is final: Bruno 22 (two stretches, two waters), Aiko 1") {
                try await stage.stack.database.count(
                    """
                    SELECT count(*) FROM leaderboard.scores WHERE board = \("challenge:\(competitionID.key)") AND window_key = '2026-W48'
                    AND ((user_id = \(bruno.id) AND score = 22) OR (user_id = \(aiko.id) AND score = 1))
                    """) == 2
            }

            // The week closes on every board of the competition once Sunday is over everywhere (Monday 12:00 UTC).
            try await stage.setClock(Timestamp.parse("2026-11-30T12:01:00Z")!)
            let closes = try await eventually("the badge service has read the week's close of both boards", timeout: .seconds(30)) { () -> [String]? in
                let read = try await stage.stack.database.withAdmin { client in
                    try await client.query(
                        """
                        SELECT DISTINCT o.payload->>'board', o.payload->'winners'->>0, json_array_length(o.payload->'winners')
                        FROM leaderboard.outbox o JOIN badges.processed_events p USING (event_id)
                        WHERE o.type = 'surge.leaderboard.window.closed.v1' AND o.payload->>'window' = '2026-W48' ORDER BY 1
                        """, logger: .test("closes")
                    ).collect().map { try $0.decode((String, String, Int).self) }
                }
                return read.count == 2 ? read.map { "\($0.0) \($0.1) of \($0.2)" } : nil
            }
            #expect(closes == [
                "challenge:\(competitionID.key) \(bruno.id.key) of 1", "competition:\(competitionID.key) \(aiko.id.key) of 1",
            ], "Aiko wins the litres; Bruno leads the points board")

            let won = try await Self.badges(of: aiko, "Aiko's first place") { response in
                Self.earned(response).contains { $0["badgeID"] as? String == winnerBadge }
            }
            let award = Self.earned(won).filter { $0["badgeID"] as? String == winnerBadge }
            #expect(award.count == 1, "\(won.text)")
            #expect(award.first?["title"] as? String == "Water Cup winner 2026-W48" && award.first?["period"] as? String == "2026-W48")
            #expect(award.first?["icon"] as? String == "trophy" && award.first?["challengeID"] as? String == competitionID.key)
            #expect(Self.progress(of: winnerBadge, won) == nil, "earned, no longer locked")
            #expect(try await stage.stack.database.count("SELECT count(*) FROM badges.awards WHERE badge_id = \(winnerBadge)") == 1)
            #expect(try await stage.stack.database.count(
                "SELECT count(*) FROM badges.outbox WHERE type = 'surge.badges.badge.awarded.v1' AND payload->>'badgeID' = \(winnerBadge)") == 1)

            // Bruno, first on the points board only, has not won; his best streak (Monday and Tuesday) shows as 2 of 3.
            let runnerUp = try await Self.badges(of: bruno, "Bruno's streak on the competition") { Self.progress(of: streakBadge, $0) == "2 of 3" }
            #expect(!Self.earned(runnerUp).contains { $0["badgeID"] as? String == winnerBadge }, "\(runnerUp.text)")
            #expect(Self.progress(of: winnerBadge, runnerUp) == "0 of 1")

            // Its catalogue: one holder of the two who joined.
            let listed = try await aiko.http.get(badgesOfCompetition)
            #expect(listed.json["users"] as? Int == 2 && listed.json["challengeID"] as? String == competitionID.key, "\(listed.text)")
            let winnerLevels = (listed.json["items"] as? [[String: Any]])?.first { $0["badgeID"] as? String == winnerBadge }?["levels"] as? [[String: Any]]
            #expect(winnerLevels?.map { "\($0["holders"] as? Int ?? -1) \($0["rarityPercent"] as? Double ?? -1)" } == ["1 50.0"], "\(listed.text)")

            // The badge service's part of her data export (the gateway's needs every service) names what she joined.
            let exported = try await stage.stack.signedHTTP("badges", caller: aiko.id.key).get("/internal/export")
            #expect(exported.json["challengesJoined"] as? [String] == [competitionID.key], "\(exported.text)")

            // Deleted, the competition leaves the locked lists and its badges can no longer be listed; the award stays.
            #expect(try await bruno.http.delete("/v1/challenges/\(competition)?confirm=true").status == 204)
            let afterDeletion = try await Self.badges(of: bruno, "the deleted competition's badges unlisted") { Self.progress(of: streakBadge, $0) == nil }
            #expect(!Self.locked(afterDeletion).contains { $0["challengeID"] as? String == competitionID.key }, "\(afterDeletion.text)")
            #expect(try await aiko.http.get(badgesOfCompetition).status == 404)
            #expect(Self.earned(try await aiko.http.get("/v1/me/badges")).contains { $0["badgeID"] as? String == winnerBadge })
        }
    }
}
