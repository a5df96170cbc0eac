import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// Issue 21's product rules and a new user's first minute, through the gateway with the services as processes.
@Suite("Progress: a new user's first minute and the product rules", .tags(.system), .kind(.system), .serialized)
struct ProductRulesSystemTests {
    func attempt(_ response: TestResponse) -> [String: Any] { response.json["attempt"] as? [String: Any] ?? [:] }
    func stats(_ response: TestResponse) -> [String: Any] { attempt(response)["stats"] as? [String: Any] ?? [:] }

    /// A guest signed up through the gateway, without waiting for any service to hear of them.
    func signUp(_ stage: ProgressStage, _ name: String, timeZone: String) async throws -> ProgressStage.User {
        let response = try await stage.stack.http().post("/v1/auth/guest", json: ["displayName": name, "timeZone": timeZone])
        let token = try #require((response.json["tokens"] as? [String: Any])?["accessToken"] as? String, "\(response.text)")
        let idText = (response.json["user"] as? [String: Any])?["id"] as? String
        let id = try #require(idText.flatMap { UUID(uuidString: $0) }, "\(response.text)")
        return .init(id: id, http: try stage.stack.http().authorized(token), calendar: LocalCalendar(zoneNamed: timeZone)!)
    }

    @Test("the first taps right after signing up, creating a household or a competition succeed without retries")
    func firstMinute() async throws {
        try await ProgressStage.with("first-minute") { stage in
            try await stage.waitForDefinition(Fixtures.seventyFiveHard)
            for round in 1...3 {
                let user = try await signUp(stage, "New \(round)", timeZone: "Europe/Rome")
                let started = try await user.http.post("/v1/attempts", json: ["challengeID": Fixtures.seventyFiveHard])
                #expect(started.status == 201, "round \(round): \(started.text)")

                let household = try await user.http.post("/v1/groups", json: ["name": "Home \(round)", "kind": "household", "timeZone": "Asia/Tokyo"])
                let groupID = try #require(household.json["id"] as? String, "\(household.text)")
                let chore = try await user.http.post("/v1/challenges", json: [
                    "kind": "chore", "name": "Dishes", "groupID": groupID,
                    "chore": ["firstDueOn": "2026-12-01", "dueTime": "19:00", "recurrence": ["kind": "daily"] as JSONObject, "points": 3] as JSONObject,
                ])
                #expect(chore.status == 201, "round \(round): \(chore.text)")
                #expect(((chore.json["definition"] as? [String: Any])?["chore"] as? [String: Any])?["points"] as? Int == 3)
                #expect(try await user.http.get("/v1/groups/\(groupID)/chore-occurrences").status == 200)

                let start = Date().addingTimeInterval(-60)
                let competition = try await user.http.post("/v1/challenges", json: [
                    "kind": "competition", "name": "Water \(round)", "description": "Most litres",
                    "competition": [
                        "startsAt": Timestamp.format(start), "endsAt": Timestamp.format(start.addingTimeInterval(7 * 86_400)),
                        "timeZone": "Europe/Rome", "unit": "litres",
                    ] as JSONObject,
                ])
                let competitionID = try #require((competition.json["definition"] as? [String: Any])?["challengeID"] as? String, "\(competition.text)")
                let joined = try await user.http.post("/v1/attempts", json: ["challengeID": competitionID])
                #expect(joined.status == 201, "round \(round): \(joined.text)")
            }
        }
    }

    @Test("a week-long competition from Monday 09:00 lasts 7 days, ends at its endsAt, and takes no log after it")
    func competitionEndsAtItsEnd() async throws {
        try await ProgressStage.with("competition-end") { stage in
            let rome = LocalCalendar(zoneNamed: "Europe/Rome")!
            // Challenges runs on the real clock: a Monday safely ahead of it.
            var monday = rome.date(at: Date()).adding(days: 2)
            while monday.weekday != .monday { monday = monday.adding(days: 1) }
            let startsAt = rome.instant(of: LocalTime("09:00")!, on: monday)
            let endsAt = rome.instant(of: LocalTime("09:00")!, on: monday.adding(days: 7))
            let user = try await stage.user("Giulia", timeZone: "Europe/Rome")
            let competition = try await user.http.post("/v1/challenges", json: [
                "kind": "competition", "name": "Most water", "description": "Litres in a week",
                "competition": [
                    "startsAt": Timestamp.format(startsAt), "endsAt": Timestamp.format(endsAt), "timeZone": "Europe/Rome", "unit": "litres",
                ] as JSONObject,
            ])
            let definition = try #require(competition.json["definition"] as? [String: Any], "\(competition.text)")
            #expect(definition["durationDays"] as? Int == 7)
            let competitionID = try #require(definition["challengeID"] as? String)
            try await stage.waitForDefinition(competitionID)

            try await stage.setClock(monday, "10:00", for: user)
            let started = try await user.http.post("/v1/attempts", json: ["challengeID": competitionID])
            #expect(started.status == 201, "\(started.text)")
            let attemptID = try #require(attempt(started)["attemptID"] as? String)
            #expect(attempt(started)["durationDays"] as? Int == 7)
            #expect(attempt(started)["dayNumber"] as? Int == 1)
            let taskID = try #require(((definition["tasks"] as? [[String: Any]])?.first)?["taskID"] as? String)

            // The last morning is day 7 of 7, not day 8.
            try await stage.setClock(monday.adding(days: 7), "08:30", for: user)
            let lastMorning = try await user.http.post("/v1/attempts/\(attemptID)/tasks/\(taskID)/logs", json: ["quantity": 2])
            #expect(lastMorning.status == 201, "\(lastMorning.text)")
            #expect(attempt(lastMorning)["dayNumber"] as? Int == 7)

            // A minute after its end the attempt is completed, not active until midnight.
            try await stage.setClock(endsAt.addingTimeInterval(60))
            try await stage.waitForJudgement()
            let ended = try await user.http.get("/v1/attempts/\(attemptID)")
            #expect(attempt(ended)["status"] as? String == "completed", "\(ended.text)")
            #expect(attempt(ended)["dayNumber"] as? Int == 7)

            // An amount logged offline before the end but sent after it is refused, naming the end as the close.
            let late = try await user.http.post(
                "/v1/attempts/\(attemptID)/tasks/\(taskID)/logs",
                json: ["quantity": 1, "happenedAt": Timestamp.format(endsAt.addingTimeInterval(-600))])
            #expect(late.status == 409 || late.status == 422, "\(late.text)")
        }
    }

    @Test("a check-in for a day judged before a move west is told when that day closed, not the time of the request")
    func lateCheckInNamesTheClose() async throws {
        try await ProgressStage.with("late-check-in") { stage in
            let user = try await stage.user("Ana", timeZone: "Asia/Tokyo")
            let habitID = try await stage.habit(for: user, graceMinutes: 0)
            let monday = LocalDate("2026-11-16")!
            try await stage.setClock(monday, "09:00", for: user)
            let started = try await user.http.post("/v1/attempts", json: ["challengeID": habitID])
            let attemptID = try #require(attempt(started)["attemptID"] as? String, "\(started.text)")
            // Monday closes at Tokyo's midnight and is judged; the user then flies to New York, where it is Monday morning.
            let tokyoMidnight = user.calendar.end(of: monday)
            try await stage.setClock(tokyoMidnight.addingTimeInterval(30 * 60))
            try await stage.waitForJudgement()
            #expect(try await user.http.patch("/v1/me", json: ["timeZone": "America/New_York"]).status == 200)
            try await waitUntil("progress learned of New York") {
                try await stage.stack.database.count("SELECT count(*) FROM progress.members WHERE time_zone = 'America/New_York'") == 1
            }
            let late = try await user.http.put("/v1/attempts/\(attemptID)/tasks/sketch", json: ["done": true, "date": monday.description])
            #expect(late.status == 422, "\(late.text)")
            #expect((late.json["type"] as? String)?.hasSuffix("check-in-window-closed") == true, "\(late.text)")
            #expect((late.json["detail"] as? String)?.contains(Timestamp.format(tokyoMidnight)) == true, "\(late.text)")
        }
    }

    @Test("points a user's own challenge awards are bounded and never raise the level that sets the push-up cap")
    func selfAuthoredPointsBuyNothing() async throws {
        try await ProgressStage.with("self-points") { stage in
            try await stage.waitForDefinition(Fixtures.dailyPushUps)
            let user = try await stage.user("Max", timeZone: "Europe/Berlin")
            let plan = try await user.http.put("/v1/me/training-plan", json: [
                "activityLevel": "intermediate", "maxPushUpsInOneSet": 20, "daysPerWeek": 5, "dailyGoal": 20,
            ])
            #expect(plan.status == 200, "\(plan.text)")
            try await waitUntil("progress knows the daily goal") {
                try await stage.stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(user.id) AND daily_goal = 20") == 1
            }
            func habit(points: Int) async throws -> TestResponse {
                try await user.http.post("/v1/challenges", json: [
                    "kind": "habit", "name": "Easy points", "description": "One tap",
                    "tasks": [["taskID": "tap", "title": "Tap", "kind": "checkbox"] as JSONObject],
                    "rules": ["points": ["kind": "perTask", "pointsPerTask": points] as JSONObject] as JSONObject,
                ])
            }
            let greedy = try await habit(points: 10_000)
            #expect(greedy.status == 422, "\(greedy.text)")
            #expect((greedy.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "rules.points.pointsPerTask")
            let created = try await habit(points: 100)
            let habitID = try #require((created.json["definition"] as? [String: Any])?["challengeID"] as? String, "\(created.text)")
            try await stage.waitForDefinition(habitID)
            let monday = LocalDate("2026-11-16")!
            try await stage.setClock(monday, "08:00", for: user)
            let habitAttempt = try await user.http.post("/v1/attempts", json: ["challengeID": habitID])
            let habitAttemptID = try #require(attempt(habitAttempt)["attemptID"] as? String, "\(habitAttempt.text)")
            #expect(try await user.http.put("/v1/attempts/\(habitAttemptID)/tasks/tap", json: ["done": true]).status == 200)

            let points = try await user.http.get("/v1/me/points")
            #expect(points.json["total"] as? Int == 100)
            #expect(points.json["levelPoints"] as? Int == 0)

            // Still level 1 on the push-ups: the cap is 1.5 x 20 = 30, and 40 push-ups earn points for 30 of them.
            let pushUps = try await user.http.post("/v1/attempts", json: ["challengeID": Fixtures.dailyPushUps])
            let pushUpsID = try #require(attempt(pushUps)["attemptID"] as? String, "\(pushUps.text)")
            #expect(stats(pushUps)["level"] as? Int == 1)
            #expect(stats(pushUps)["dailyCap"] as? Double == 30)
            let logged = try await user.http.post("/v1/attempts/\(pushUpsID)/tasks/push-ups/logs", json: ["quantity": 40, "series": 4])
            #expect(logged.status == 201, "\(logged.text)")
            let ledger = try await user.http.get("/v1/me/points/ledger").json["items"] as? [[String: Any]] ?? []
            let series = try #require(ledger.first { $0["reason"] as? String == "series" })
            let checkIn = try #require(series["checkIn"] as? [String: Any], "a series row names its check-in")
            #expect(checkIn["taskID"] as? String == "push-ups")
            #expect(checkIn["quantity"] as? Double == 40)
            #expect(checkIn["rewardedQuantity"] as? Double == 30)
            #expect(series["excessQuantity"] as? Double == 10)
        }
    }
}
