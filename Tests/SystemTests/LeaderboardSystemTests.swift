import Foundation
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// The leaderboard end to end: identity, challenges, progress and leaderboard as processes on one simulated clock,
/// driven through the gateway.
@Suite("Leaderboard: boards through the gateway", .tags(.system), .kind(.system), .serialized)
struct LeaderboardSystemTests {
    typealias User = ProgressStage.User

    static func withStage(_ name: String, _ body: (ProgressStage) async throws -> Void) async throws {
        try await withTestStack(name) { stack in
            try await stack.start("identity")
            try await stack.start("challenges", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "100"])
            try await stack.start("leaderboard", environment: ["SIMULATED_CLOCK": "true", "WINDOW_CLOSE_INTERVAL_MS": "100"])
            try await stack.start("gateway")
            try await body(ProgressStage(stack: stack))
        }
    }

    func items(_ response: TestResponse) -> [[String: Any]] { response.json["items"] as? [[String: Any]] ?? [] }
    func summary(_ response: TestResponse) -> [String] {
        items(response).map { "\($0["rank"] as? Int ?? 0):\($0["displayName"] as? String ?? "?"):\($0["score"] as? Double ?? -1)" }
    }

    /// Waits until the board reads `expected` (rank:name:score, in order).
    func board(_ user: User, _ path: String, reads expected: [String]) async throws -> TestResponse {
        try await eventually("\(path) reads \(expected)") { () -> TestResponse? in
            let response = try await user.http.get(path)
            return summary(response) == expected ? response : nil
        }
    }

    @Test("a Tokyo household's weekly board: order, shared ranks, reset at Monday 00:00 Tokyo, a move to Rome waits for the next week, last week's winner; outsiders get 404")
    func householdWeek() async throws {
        try await Self.withStage("leaderboard-household") { stage in
            let tokyo = LocalCalendar(zoneNamed: "Asia/Tokyo")!
            let wednesday = LocalDate("2026-11-18")!
            try await stage.setClock(tokyo.instant(of: LocalTime("12:00")!, on: wednesday))
            let aiko = try await stage.user("Aiko", timeZone: "Asia/Tokyo")
            let bruno = try await stage.user("Bruno", timeZone: "Europe/Rome")
            let cara = try await stage.user("Cara", timeZone: "America/New_York")
            let outsider = try await stage.user("Olaf", timeZone: "Europe/Oslo")
            let household = try await stage.household(owner: aiko, members: [bruno, cara], timeZone: "Asia/Tokyo")

            var chores: [String: String] = [:]
            for (name, points) in [("Dishes", 5), ("Laundry", 3), ("Bins", 3)] {
                let chore = try await aiko.http.post("/v1/challenges", json: [
                    "kind": "chore", "name": name, "groupID": household,
                    "chore": ["firstDueOn": wednesday.description, "recurrence": ["kind": "daily"] as JSONObject, "points": points] as JSONObject,
                ])
                chores[name] = try #require((chore.json["definition"] as? [String: Any])?["challengeID"] as? String, "\(chore.text)")
            }
            let pending = try await eventually("three chores are due") { () -> [[String: Any]]? in
                let list = items(try await aiko.http.get("/v1/groups/\(household)/chore-occurrences"))
                return list.count == 3 ? list : nil
            }
            func occurrence(_ name: String) throws -> String {
                try #require(pending.first { ($0["choreID"] as? String)?.lowercased() == chores[name]?.lowercased() }?["occurrenceID"] as? String)
            }
            #expect(try await bruno.http.post("/v1/chore-occurrences/\(try occurrence("Dishes"))/complete").status == 200)
            #expect(try await cara.http.post("/v1/chore-occurrences/\(try occurrence("Laundry"))/complete").status == 200)
            #expect(try await aiko.http.post("/v1/chore-occurrences/\(try occurrence("Bins"))/complete").status == 200)

            let path = "/v1/leaderboards/groups/\(household)"
            let week = try await board(cara, path, reads: ["1:Bruno:5.0", "2:Aiko:3.0", "2:Cara:3.0"])
            let thisWeek = WindowKeyText.week(wednesday)
            let window = try #require(week.json["window"] as? [String: Any])
            #expect(window["key"] as? String == thisWeek)
            #expect(window["timeZone"] as? String == "Asia/Tokyo")
            let mondayTokyo = tokyo.start(of: LocalDate("2026-11-23")!)
            #expect(window["nextResetAt"] as? String == Timestamp.format(mondayTokyo) || window["nextResetAt"] as? String == SurgeJSONText.whole(mondayTokyo))
            #expect(items(week).map { $0["leader"] as? Bool } == [true, false, false])
            #expect((week.json["me"] as? [String: Any])?["rank"] as? Int == 2)
            #expect(try await outsider.http.get(path).status == 404)
            #expect(try await outsider.http.get("/v1/leaderboards/groups/\(UUID())").status == 404)
            #expect(try await cara.http.get("\(path)?window=yesterday").status == 422)

            // The household moves to Rome: the week under way stays Tokyo's to its end; Rome's zone applies from the
            // next Monday 00:00 Tokyo (identity runs on the real clock here, so that Monday follows today's date; the
            // switch itself is covered by the GroupZone unit tests).
            let moved = try await aiko.http.patch("/v1/groups/\(household)", json: ["timeZone": "Europe/Rome"])
            #expect(moved.status == 200, "\(moved.text)")
            try await waitUntil("the leaderboard knows of the move, from a Monday 00:00 in Tokyo") {
                try await stage.stack.database.count(
                    """
                    SELECT count(*) FROM leaderboard.groups WHERE next_time_zone = 'Europe/Rome' AND time_zone = 'Asia/Tokyo'
                      AND extract(isodow FROM zone_changes_at AT TIME ZONE 'Asia/Tokyo') = 1
                      AND (zone_changes_at AT TIME ZONE 'Asia/Tokyo')::time = '00:00'
                    """) == 1
            }
            let stillTokyo = try #require(try await cara.http.get(path).json["window"] as? [String: Any])
            #expect(stillTokyo["timeZone"] as? String == "Asia/Tokyo")
            #expect(stillTokyo["nextResetAt"] as? String == window["nextResetAt"] as? String)

            // Monday 00:00 in Tokyo is still Sunday for Bruno and Cara: the week resets in the household's zone.
            try await stage.setClock(mondayTokyo.addingTimeInterval(60))
            let fresh = try await board(cara, path, reads: ["1:Aiko:0.0", "1:Bruno:0.0", "1:Cara:0.0"])
            #expect(items(fresh).allSatisfy { $0["leader"] as? Bool == false })
            _ = try await board(cara, "\(path)?window=month", reads: ["1:Bruno:5.0", "2:Aiko:3.0", "2:Cara:3.0"])
            let last = try await cara.http.get("\(path)?window=\(thisWeek)")
            #expect(summary(last) == ["1:Bruno:5.0", "2:Aiko:3.0", "2:Cara:3.0"])
            #expect((last.json["window"] as? [String: Any])?["closed"] as? Bool == true)
            #expect((last.json["window"] as? [String: Any])?["timeZone"] as? String == "Asia/Tokyo")
            let history = try await eventually("last week's winner") { () -> [[String: Any]]? in
                let list = items(try await cara.http.get("\(path)/history"))
                return list.isEmpty ? nil : list
            }
            #expect(((history.first?["window"] as? [String: Any])?["key"] as? String) == thisWeek)
            #expect((history.first?["winners"] as? [[String: Any]])?.map { $0["displayName"] as? String } == ["Bruno"])
            try await waitUntil("the closed week is published") {
                try await stage.stack.database.count(
                    "SELECT count(*) FROM leaderboard.outbox WHERE type = 'surge.leaderboard.window.closed.v1' AND subject LIKE \("%" + thisWeek)") >= 1
            }
            let listed = try await cara.http.get("/v1/leaderboards")
            #expect(items(listed).contains { ($0["board"] as? [String: Any])?["name"] as? String == "Home" })
        }
    }

    @Test("a competition in litres ranks by total litres; a friends' board ranks 1..n among the friends")
    func competitionAndFriends() async throws {
        try await Self.withStage("leaderboard-competition") { stage in
            let start = Timestamp.parse("2026-11-23T08:00:00Z")!
            try await stage.setClock(start.addingTimeInterval(-3600))
            let aiko = try await stage.user("Aiko", timeZone: "Asia/Tokyo")
            let bruno = try await stage.user("Bruno", timeZone: "Europe/Rome")
            let cara = try await stage.user("Cara", timeZone: "America/New_York")
            try await stage.befriend(bruno, aiko)
            try await stage.befriend(bruno, cara)
            // A second replica in the same consumer group: the events are divided between the two, yet each answers
            // every board with every event either has consumed.
            try await stage.stack.start("leaderboard", instance: "leaderboard-2", environment: ["SIMULATED_CLOCK": "true"])
            try await stage.setClock(start.addingTimeInterval(-3600))
            let (competitionID, taskID) = try await stage.waterCompetition(owner: bruno, from: start, inviting: [aiko, cara])
            try await stage.setClock(start.addingTimeInterval(3600))
            var lastLog: [UUID: (attemptID: String, logID: String)] = [:]
            for (user, litres) in [(bruno, [2.0, 1.5]), (aiko, [5.0]), (cara, [1.0, 1.0])] {
                let attempt = try await user.http.post("/v1/attempts", json: ["challengeID": competitionID])
                let attemptID = try #require((attempt.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(attempt.text)")
                for amount in litres {
                    let logged = try await user.http.post("/v1/attempts/\(attemptID)/tasks/\(taskID)/logs", json: ["quantity": amount])
                    #expect(logged.status == 201, "\(logged.text)")
                    lastLog[user.id] = (attemptID, logged.json["logID"] as? String ?? "")
                }
            }
            let path = "/v1/leaderboards/challenges/\(competitionID)"
            let standings = try await board(cara, "\(path)?window=all-time", reads: ["1:Aiko:5.0", "2:Bruno:3.5", "3:Cara:2.0"])
            for replica in ["leaderboard", "leaderboard-2"] {
                let direct = try await stage.stack.signedHTTP(replica, caller: cara.id.key).get("\(path)?window=all-time")
                #expect(summary(direct) == ["1:Aiko:5.0", "2:Bruno:3.5", "3:Cara:2.0"], "\(replica): \(direct.text)")
            }
            #expect((standings.json["board"] as? [String: Any])?["measure"] as? String == "litres")
            let me = try await cara.http.get("\(path)/me?window=all-time")
            #expect(me.json["rank"] as? Int == 3)
            #expect(me.json["topPercent"] as? Int == 100)
            // Cara's only friend is Bruno: among them she is 2nd, not 3rd.
            let friends = try await cara.http.get("\(path)/friends?window=all-time")
            #expect(summary(friends) == ["1:Bruno:3.5", "2:Cara:2.0"])
            let brunoFriends = try await bruno.http.get("\(path)/friends?window=all-time")
            #expect(summary(brunoFriends) == ["1:Aiko:5.0", "2:Bruno:3.5", "3:Cara:2.0"])
            let outsider = try await stage.user("Olaf", timeZone: "Europe/Oslo")
            #expect(try await outsider.http.get(path).status == 404)
            // Paging: one at a time, by cursor.
            let first = try await cara.http.get("\(path)?window=all-time&limit=1")
            let cursor = try #require(first.json["nextCursor"] as? String)
            let second = try await cara.http.get("\(path)?window=all-time&limit=1&cursor=\(cursor)")
            #expect(summary(second) == ["2:Bruno:3.5"])
            #expect(try await cara.http.get("\(path)?limit=0").status == 422)
            #expect(try await cara.http.get("\(path)?cursor=nonsense").status == 400)
            #expect(try await cara.http.get("\(path)?cursor=nonsense").json["type"] as? String == "https://surge.example/problems/unknown-cursor")
            try await waitUntil("rank changes are published") {
                try await stage.stack.database.count("SELECT count(*) FROM leaderboard.outbox WHERE type = 'surge.leaderboard.rank.changed.v1'") > 0
            }

            // Bruno takes his 1.5 litres back: the correction lowers his total and he shares 2nd place with Cara.
            let brunoLog = try #require(lastLog[bruno.id])
            #expect(try await bruno.http.delete("/v1/attempts/\(brunoLog.attemptID)/logs/\(brunoLog.logID)").status == 200)
            _ = try await board(cara, "\(path)?window=all-time", reads: ["1:Aiko:5.0", "2:Bruno:2.0", "2:Cara:2.0"])
            // Both replicas held the board before the correction, and only one consumed it: each hears of it on the
            // change feed (a replica that trusted memory without hearing would answer the old order forever).
            try await readsOnEveryReplica(stage, caller: bruno, "\(path)?window=all-time", ["1:Aiko:5.0", "2:Bruno:2.0", "2:Cara:2.0"])

            // Cara deletes her account: she vanishes from the board.
            let goodbye = try await cara.http.delete("/v1/me?confirm=true")
            #expect(goodbye.status == 204 || goodbye.status == 200, "\(goodbye.text)")
            _ = try await board(bruno, "\(path)?window=all-time", reads: ["1:Aiko:5.0", "2:Bruno:2.0"])
            try await readsOnEveryReplica(stage, caller: bruno, "\(path)?window=all-time", ["1:Aiko:5.0", "2:Bruno:2.0"])
        }
    }

    func readsOnEveryReplica(_ stage: ProgressStage, caller: User, _ path: String, _ expected: [String]) async throws {
        for replica in ["leaderboard", "leaderboard-2"] {
            _ = try await eventually("\(replica): \(path) reads \(expected)") { () -> TestResponse? in
                let response = try await stage.stack.signedHTTP(replica, caller: caller.id.key).get(path)
                return summary(response) == expected ? response : nil
            }
        }
    }

    /// The `rank` events the leaderboard published for `user`: each one's window and whom it overtook (lower-case ids).
    func rankEvents(of user: User, _ stage: ProgressStage) async throws -> [(window: String, overtook: Set<String>)] {
        let payloads = try await stage.stack.database.withAdmin { client in
            try await client.query(
                "SELECT COALESCE(payload->'data', payload)::text FROM leaderboard.outbox WHERE type = 'surge.leaderboard.rank.changed.v1' ORDER BY position",
                logger: .test("rank-events")
            ).collect().map { try $0.decode(String.self) }
        }
        return payloads.compactMap { text -> (window: String, overtook: Set<String>)? in
            guard let data = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                (data["userID"] as? String)?.lowercased() == user.id.key
            else { return nil }
            return (data["window"] as? String ?? "", Set((data["overtook"] as? [String] ?? []).map { $0.lowercased() }))
        }
    }

    @Test("entering a board above others overtakes them: the newcomer's rank event names them and each has an overtaken notification")
    func overtakenOnEntry() async throws {
        try await withTestStack("leaderboard-overtaken-on-entry") { stack in
            try await stack.start("identity")
            try await stack.start("challenges", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "100"])
            try await stack.start("leaderboard", environment: ["SIMULATED_CLOCK": "true", "WINDOW_CLOSE_INTERVAL_MS": "100"])
            try await stack.start("notifications", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("gateway")
            let stage = ProgressStage(stack: stack)
            let start = Timestamp.parse("2026-11-23T08:00:00Z")!
            try await stage.setClock(start.addingTimeInterval(-3600))
            let bruno = try await stage.user("Bruno", timeZone: "Europe/Rome")
            let cara = try await stage.user("Cara", timeZone: "Europe/Rome")
            let aiko = try await stage.user("Aiko", timeZone: "Asia/Tokyo")
            try await stage.befriend(bruno, aiko)
            try await stage.befriend(bruno, cara)
            let (competitionID, taskID) = try await stage.waterCompetition(owner: bruno, from: start, inviting: [aiko, cara])
            try await stage.setClock(start.addingTimeInterval(3600))
            func log(_ user: User, _ litres: Double) async throws {
                let attempt = try await user.http.post("/v1/attempts", json: ["challengeID": competitionID])
                let attemptID = try #require((attempt.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(attempt.text)")
                let logged = try await user.http.post("/v1/attempts/\(attemptID)/tasks/\(taskID)/logs", json: ["quantity": litres])
                #expect(logged.status == 201, "\(logged.text)")
            }
            let path = "/v1/leaderboards/challenges/\(competitionID)?window=all-time"
            // Bruno, then Cara below him: nobody passed anybody.
            try await log(bruno, 2)
            _ = try await board(bruno, path, reads: ["1:Bruno:2.0"])
            try await log(cara, 1)
            _ = try await board(bruno, path, reads: ["1:Bruno:2.0", "2:Cara:1.0"])
            // Aiko's first log puts her straight at the top.
            try await log(aiko, 5)
            _ = try await board(bruno, path, reads: ["1:Aiko:5.0", "2:Bruno:2.0", "3:Cara:1.0"])

            let entry = try await eventually("Aiko's all-time rank event") {
                try await rankEvents(of: aiko, stage).first { $0.window == "all-time" }
            }
            #expect(entry.overtook == [bruno.id.key, cara.id.key])
            #expect(try await rankEvents(of: cara, stage).allSatisfy { $0.overtook.isEmpty })
            for displaced in [bruno, cara] {
                let overtaken = try await eventually("an overtaken notification for \(displaced.id)") { () -> [String: Any]? in
                    let items = try await displaced.http.get("/v1/me/notifications?limit=100").json["items"] as? [[String: Any]] ?? []
                    return items.first { $0["kind"] as? String == "overtaken" }
                }
                #expect((overtaken["body"] as? String)?.contains("Aiko") == true, "\(overtaken)")
            }
            let aikos = try await aiko.http.get("/v1/me/notifications?limit=100").json["items"] as? [[String: Any]] ?? []
            #expect(!aikos.contains { $0["kind"] as? String == "overtaken" })
        }
    }
}

/// Window keys and instants as the API writes them.
enum WindowKeyText {
    static func week(_ date: LocalDate) -> String {
        // ISO week: the week's Thursday decides the year.
        let thursday = date.startOfWeek.adding(days: 3)
        let firstThursday = LocalDate(year: thursday.year, month: 1, day: 1)!
        let offset = (4 - firstThursday.weekday.isoNumber + 7) % 7
        let week = firstThursday.adding(days: offset).days(until: thursday) / 7 + 1
        return String(format: "%04d-W%02d", thursday.year, week)
    }
}

enum SurgeJSONText {
    static func whole(_ date: Date) -> String {
        Date.ISO8601FormatStyle().format(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
    }
}
