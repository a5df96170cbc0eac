import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// Issue 5's scenarios, through the gateway, with progress on a simulated clock.
@Suite("Progress: scenarios through the gateway", .tags(.system), .kind(.system), .serialized)
struct ProgressSystemTests {
    func attempt(_ response: TestResponse) -> [String: Any] { response.json["attempt"] as? [String: Any] ?? [:] }
    func stats(_ response: TestResponse) -> [String: Any] { attempt(response)["stats"] as? [String: Any] ?? [:] }

    /// Checks in every task of 75 Hard for the local day the clock is on.
    func completeDay(_ user: ProgressStage.User, attemptID: String, skip: String? = nil) async throws -> TestResponse {
        var last: TestResponse?
        for task in ["workouts", "diet"] where task != skip {
            last = try await user.http.put("/v1/attempts/\(attemptID)/tasks/\(task)", json: ["done": true])
            #expect(last?.status == 200, "\(last?.text ?? "")")
        }
        for (task, amount) in [("water", 3.8), ("reading", 10.0)] where task != skip {
            last = try await user.http.post("/v1/attempts/\(attemptID)/tasks/\(task)/logs", json: ["quantity": amount])
            #expect(last?.status == 201, "\(last?.text ?? "")")
        }
        if skip != "progress-photo" {
            last = try await user.http.send(.PUT, "/v1/attempts/\(attemptID)/tasks/progress-photo/photo", body: Fixtures.jpeg, contentType: "image/jpeg")
            #expect(last?.status == 200, "\(last?.text ?? "")")
        }
        return last!
    }

    @Test("Sarah starts 75 Hard and sees its five tasks for day 1 of 75")
    func sarahStarts() async throws {
        try await ProgressStage.with("sarah") { stage in
            try await stage.waitForDefinition(Fixtures.seventyFiveHard)
            let sarah = try await stage.user("Sarah", timeZone: "Europe/London")
            try await stage.setClock(LocalDate("2026-03-01")!, "08:00", for: sarah)
            let started = try await sarah.http.post("/v1/attempts", json: ["challengeID": Fixtures.seventyFiveHard])
            #expect(started.status == 201, "\(started.text)")
            let today = try #require(attempt(started)["today"] as? [String: Any])
            #expect((today["tasks"] as? [[String: Any]])?.map { $0["taskID"] as? String } == ["workouts", "diet", "water", "reading", "progress-photo"])
            #expect((today["remainingTaskIDs"] as? [String])?.count == 5)
            #expect(attempt(started)["dayNumber"] as? Int == 1)
            #expect(attempt(started)["durationDays"] as? Int == 75)
            #expect(stats(started)["progressPercent"] as? Int == 0)
            let again = try await sarah.http.post("/v1/attempts", json: ["challengeID": Fixtures.seventyFiveHard])
            #expect(again.status == 409)
            let unknown = try await sarah.http.post("/v1/attempts", json: ["challengeID": UUID().uuidString])
            #expect(unknown.status == 404)
        }
    }

    @Test("Marcus checks off day 23 and sees streak 23 and 30%; all 75 days complete in simulated time, across a DST change")
    func marcusRunsSeventyFiveDays() async throws {
        try await ProgressStage.with("marcus") { stage in
            try await stage.waitForDefinition(Fixtures.seventyFiveHard)
            let marcus = try await stage.user("Marcus", timeZone: "Europe/London")
            let first = LocalDate("2026-03-01")!
            try await stage.setClock(first, "07:00", for: marcus)
            let started = try await marcus.http.post("/v1/attempts", json: ["challengeID": Fixtures.seventyFiveHard])
            let attemptID = try #require(attempt(started)["attemptID"] as? String)
            for day in 0..<75 {
                try await stage.setClock(first.adding(days: day), "20:00", for: marcus)
                let response = try await completeDay(marcus, attemptID: attemptID)
                if day == 22 {
                    #expect(attempt(response)["dayNumber"] as? Int == 23)
                    #expect(stats(response)["currentStreak"] as? Int == 23)
                    #expect(stats(response)["progressPercent"] as? Int == 30)
                    #expect((attempt(response)["today"] as? [String: Any])?["remainingTaskIDs"] as? [String] == [])
                }
            }
            try await stage.setClock(first.adding(days: 75), "00:05", for: marcus)
            let done = try await eventually("the attempt completes") { () -> TestResponse? in
                let response = try await marcus.http.get("/v1/attempts/\(attemptID)")
                return attempt(response)["status"] as? String == "completed" ? response : nil
            }
            #expect(stats(done)["bestStreak"] as? Int == 75)
            #expect(stats(done)["daysCompleted"] as? Int == 75)
            #expect(stats(done)["progressPercent"] as? Int == 100)
            // 10 points per task (5 a day) and the 200-point completion bonus.
            #expect(stats(done)["points"] as? Int == 75 * 5 * 10 + 200)
            let points = try await marcus.http.get("/v1/me/points")
            #expect(points.json["total"] as? Int == 75 * 5 * 10 + 200)
            let types = Set(try await stage.eventTypes())
            for type in [AttemptStarted.eventType, CheckInRecorded.eventType, DayJudged.eventType, StreakChanged.eventType, PointsAwarded.eventType, AttemptEnded.eventType] {
                #expect(types.contains(type), "missing \(type)")
            }
            let photos = try await marcus.http.get("/v1/attempts/\(attemptID)/photos?limit=100")
            #expect((photos.json["items"] as? [Any])?.count == 75)
        }
    }

    @Test("Elena misses a requirement on day 15, is failed at her local midnight, restarts, and her first attempt stays visible")
    func elenaFailsAndRestarts() async throws {
        try await ProgressStage.with("elena") { stage in
            try await stage.waitForDefinition(Fixtures.seventyFiveHard)
            let elena = try await stage.user("Elena", timeZone: "America/New_York")
            let first = LocalDate("2026-10-20")!
            try await stage.setClock(first, "07:00", for: elena)
            let started = try await elena.http.post("/v1/attempts", json: ["challengeID": Fixtures.seventyFiveHard])
            let attemptID = try #require(attempt(started)["attemptID"] as? String)
            for day in 0..<14 {
                try await stage.setClock(first.adding(days: day), "21:00", for: elena)
                _ = try await completeDay(elena, attemptID: attemptID)
            }
            let dayFifteen = first.adding(days: 14)
            try await stage.setClock(dayFifteen, "21:00", for: elena)
            _ = try await completeDay(elena, attemptID: attemptID, skip: "water")
            try await stage.setClock(dayFifteen, "23:59", for: elena)
            try await stage.waitForJudgement()
            #expect(attempt(try await elena.http.get("/v1/attempts/\(attemptID)"))["status"] as? String == "active")
            try await stage.setClock(dayFifteen.adding(days: 1), "00:00", for: elena)
            let failed = try await eventually("failed at local midnight") { () -> TestResponse? in
                let response = try await elena.http.get("/v1/attempts/\(attemptID)")
                return attempt(response)["status"] as? String == "failed" ? response : nil
            }
            let reason = try #require(attempt(failed)["failureReason"] as? String)
            #expect(reason.contains("Drink a gallon of water") && reason.contains("day 15"))
            #expect(attempt(failed)["missedTaskIDs"] as? [String] == ["water"])
            #expect(stats(failed)["bestStreak"] as? Int == 14)

            let late = try await elena.http.put("/v1/attempts/\(attemptID)/tasks/diet", json: ["done": true])
            #expect(late.status == 409)
            let restarted = try await elena.http.post("/v1/attempts/\(attemptID)/restart")
            #expect(restarted.status == 201)
            #expect(attempt(restarted)["attemptNumber"] as? Int == 2)
            #expect(attempt(restarted)["dayNumber"] as? Int == 1)
            let history = try await elena.http.get("/v1/attempts?challengeID=\(Fixtures.seventyFiveHard)")
            let attempts = try #require(history.json["items"] as? [[String: Any]])
            #expect(attempts.map { $0["status"] as? String } == ["active", "failed"])
            #expect((attempts[1]["stats"] as? [String: Any])?["daysCompleted"] as? Int == 14)
            let types = try await stage.eventTypes()
            #expect(types.contains(AttemptRestarted.eventType) && types.contains(AttemptEnded.eventType))
        }
    }

    @Test("a hobby toggled on and off leaves no completion; retries and out-of-order toggles end in the right state")
    func hobbyToggles() async throws {
        try await ProgressStage.with("hobby") { stage in
            let user = try await stage.user("Ana", timeZone: "Asia/Kolkata")
            let habit = try await stage.habit(for: user, graceMinutes: 180)
            let day = LocalDate("2026-11-10")!
            try await stage.setClock(day, "09:00", for: user)
            let started = try await user.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require(attempt(started)["attemptID"] as? String)
            let path = "/v1/attempts/\(attemptID)/tasks/sketch"
            for done in [true, false, true, false] {
                #expect(try await user.http.put(path, json: ["done": done]).status == 200)
            }
            // An offline client syncs later: its changes carry when they happened, and an older one arriving late loses.
            try await stage.setClock(day, "09:30", for: user)
            let at = { (time: String) in Timestamp.format(user.calendar.instant(of: LocalTime(time)!, on: day)) }
            let retryID = UUID().uuidString
            _ = try await user.http.put(path, json: ["done": true, "happenedAt": at("09:10"), "checkInID": retryID])
            _ = try await user.http.put(path, json: ["done": false, "happenedAt": at("09:05")])
            let retried = try await user.http.put(path, json: ["done": true, "happenedAt": at("09:10"), "checkInID": retryID])
            #expect(((attempt(retried)["today"] as? [String: Any])?["tasks"] as? [[String: Any]])?.first?["done"] as? Bool == true)
            #expect(stats(retried)["points"] as? Int == 5)
            let final = try await user.http.put(path, json: ["done": false, "happenedAt": at("09:15")])
            #expect(((attempt(final)["today"] as? [String: Any])?["tasks"] as? [[String: Any]])?.first?["done"] as? Bool == false)
            #expect(stats(final)["points"] as? Int == 0)

            try await stage.setClock(day.adding(days: 1), "04:00", for: user)
            let judged = try await eventually("the day is judged") { () -> TestResponse? in
                let response = try await user.http.get("/v1/attempts/\(attemptID)/calendar?month=2026-11")
                let days = response.json["days"] as? [[String: Any]] ?? []
                return days.first { $0["date"] as? String == "2026-11-10" }?["status"] as? String == "missed" ? response : nil
            }
            #expect((judged.json["days"] as? [[String: Any]])?.first { $0["date"] as? String == "2026-11-10" }?["tasksDone"] as? Int == 0)
            let history = try await user.http.get("/v1/me/history?weeks=12")
            // Twelve weeks: eleven whole weeks before this one, and this week up to today (Wednesday).
            #expect((history.json["days"] as? [[String: Any]])?.count == 7 * 11 + LocalDate("2026-11-11")!.weekday.isoNumber)
            #expect((history.json["days"] as? [[String: Any]])?.allSatisfy { $0["tasksDone"] as? Int == 0 } == true)
            let points = try await user.http.get("/v1/me/points")
            #expect(points.json["total"] as? Int == 0)
            #expect(stats(try await user.http.get("/v1/attempts/\(attemptID)"))["daysCompleted"] as? Int == 0)
        }
    }

    @Test("a backdated offline check-in inside the grace window counts; outside it is refused")
    func offlineGraceWindow() async throws {
        try await ProgressStage.with("offline") { stage in
            let user = try await stage.user("Kai", timeZone: "Australia/Sydney")
            let habit = try await stage.habit(for: user, graceMinutes: 180)
            let day = LocalDate("2026-11-14")!
            try await stage.setClock(day, "08:00", for: user)
            let started = try await user.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require(attempt(started)["attemptID"] as? String)
            let path = "/v1/attempts/\(attemptID)/tasks/sketch"

            try await stage.setClock(day.adding(days: 1), "01:30", for: user)
            let inside = try await user.http.put(path, json: ["done": true, "happenedAt": Timestamp.format(user.calendar.instant(of: LocalTime("22:10")!, on: day))])
            #expect(inside.status == 200, "\(inside.text)")
            let calendar = try await user.http.get("/v1/attempts/\(attemptID)/calendar?month=2026-11")
            #expect((calendar.json["days"] as? [[String: Any]])?.first { $0["date"] as? String == "2026-11-14" }?["tasksDone"] as? Int == 1)

            try await stage.setClock(day.adding(days: 1), "03:30", for: user)
            let outside = try await user.http.put(path, json: ["done": true, "date": "2026-11-14", "happenedAt": Timestamp.format(user.calendar.instant(of: LocalTime("23:00")!, on: day))])
            #expect(outside.status == 422)
            #expect(outside.json["type"] as? String == "https://surge.example/problems/check-in-window-closed")
            let judged = try await eventually("day 1 judged completed") { () -> TestResponse? in
                let response = try await user.http.get("/v1/attempts/\(attemptID)")
                return stats(response)["daysCompleted"] as? Int == 1 ? response : nil
            }
            #expect(stats(judged)["currentStreak"] as? Int == 1)
            let future = try await user.http.put(path, json: ["done": true, "happenedAt": Timestamp.format(Date().addingTimeInterval(86_400 * 400))])
            #expect(future.status == 422)
        }
    }

    @Test("a weekly household chore completed by a housemate earns their points and reappears the next week; outsiders see nothing")
    func weeklyChore() async throws {
        try await ProgressStage.with("chores") { stage in
            let parent = try await stage.user("Parent", timeZone: "Europe/Berlin")
            let teen = try await stage.user("Teen", timeZone: "Europe/Berlin")
            let outsider = try await stage.user("Outsider", timeZone: "Europe/Berlin")
            let household = try await stage.household(owner: parent, members: [teen], timeZone: "Europe/Berlin")
            let monday = LocalDate("2026-11-16")!
            let chore = try await parent.http.post("/v1/challenges", json: [
                "kind": "chore", "name": "Take out the bins", "groupID": household,
                "chore": [
                    "assigneeID": teen.id.uuidString, "firstDueOn": monday.description, "dueTime": "19:00",
                    "recurrence": ["kind": "weekly", "weekdays": ["monday"]] as [String: any Sendable], "points": 3,
                ] as [String: any Sendable],
            ])
            #expect(chore.status == 201, "\(chore.text)")
            try await stage.setClock(monday, "10:00", for: teen)
            let pending = try await eventually("the chore is due") { () -> [[String: Any]]? in
                let items = try await teen.http.get("/v1/groups/\(household)/chore-occurrences").json["items"] as? [[String: Any]] ?? []
                return items.isEmpty ? nil : items
            }
            #expect(pending.first?["dueOn"] as? String == "2026-11-16")
            #expect((pending.first?["assigneeID"] as? String).flatMap(UUID.init(uuidString:)) == teen.id)
            #expect(try await outsider.http.get("/v1/groups/\(household)/chore-occurrences").status == 404)
            let occurrenceID = try #require(pending.first?["occurrenceID"] as? String)
            #expect(try await outsider.http.post("/v1/chore-occurrences/\(occurrenceID)/complete").status == 404)
            let completed = try await teen.http.post("/v1/chore-occurrences/\(occurrenceID)/complete")
            #expect(completed.status == 200)
            #expect(try await teen.http.post("/v1/chore-occurrences/\(occurrenceID)/complete").status == 409)
            #expect(try await teen.http.get("/v1/me/points").json["total"] as? Int == 3)
            let next = try await teen.http.get("/v1/groups/\(household)/chore-occurrences").json["items"] as? [[String: Any]] ?? []
            #expect(next.map { $0["dueOn"] as? String } == ["2026-11-23"])
            #expect(next.first?["overdue"] as? Bool == false)

            try await stage.setClock(monday.adding(days: 7), "19:30", for: teen)
            try await waitUntil("the next occurrence is flagged overdue") {
                let items = try await parent.http.get("/v1/groups/\(household)/chore-occurrences").json["items"] as? [[String: Any]] ?? []
                return items.first?["overdue"] as? Bool == true
            }
            let history = try await parent.http.get("/v1/groups/\(household)/chore-occurrences?status=completed")
            #expect(((history.json["items"] as? [[String: Any]])?.first?["completedBy"] as? String).flatMap(UUID.init(uuidString:)) == teen.id)
            #expect(try await stage.eventTypes().contains(ChoreOccurrenceChanged.eventType))
        }
    }
}

@Suite("Progress: the push-up trainer (001)", .tags(.system), .kind(.system), .serialized)
struct PushUpTrainerSystemTests {
    func attempt(_ response: TestResponse) -> [String: Any] { response.json["attempt"] as? [String: Any] ?? [:] }

    @Test("series points with the streak multiplier, the anti-cheat cap, the weekly goal bonus and the weekly challenge")
    func pushUps() async throws {
        try await ProgressStage.with("push-ups") { stage in
            try await stage.waitForDefinition(Fixtures.dailyPushUps)
            try await stage.waitForDefinition(Fixtures.weeklyPushUps)
            let athlete = try await stage.user("Luca", timeZone: "Europe/Rome")
            let plan = try await athlete.http.put("/v1/me/training-plan", json: [
                "activityLevel": "intermediate", "maxPushUpsInOneSet": 20, "daysPerWeek": 5, "dailyGoal": 20,
            ])
            #expect(plan.status == 200, "\(plan.text)")
            try await waitUntil("progress knows the daily goal") {
                try await stage.stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(athlete.id) AND daily_goal = 20") == 1
            }
            let monday = LocalDate("2026-11-16")!
            try await stage.setClock(monday, "07:00", for: athlete)
            let daily = try await athlete.http.post("/v1/attempts", json: ["challengeID": Fixtures.dailyPushUps])
            let weekly = try await athlete.http.post("/v1/attempts", json: ["challengeID": Fixtures.weeklyPushUps])
            #expect(daily.status == 201 && weekly.status == 201, "\(daily.text) \(weekly.text)")
            let dailyID = try #require(attempt(daily)["attemptID"] as? String)
            let weeklyID = try #require(attempt(weekly)["attemptID"] as? String)

            // Level 1: the cap is 1.5 x 20 = 30 push-ups a day. 20, then 20 more: 10 of them earn nothing.
            let first = try await athlete.http.post("/v1/attempts/\(dailyID)/tasks/push-ups/logs", json: ["quantity": 20, "series": 5])
            #expect(first.status == 201, "\(first.text)")
            let second = try await athlete.http.post("/v1/attempts/\(dailyID)/tasks/push-ups/logs", json: ["quantity": 20, "series": 5])
            let ledger = try await athlete.http.get("/v1/me/points/ledger").json["items"] as? [[String: Any]] ?? []
            let series = ledger.filter { $0["reason"] as? String == "series" }.compactMap { $0["points"] as? Int }
            // 10 x (20 x 0.3 + 5 x 0.8) = 100, then 10 x (10 x 0.3 + 5 x 0.8) = 70 for the 10 within the cap.
            #expect(series.sorted() == [70, 100])
            #expect(ledger.contains { ($0["excessQuantity"] as? Double) == 10 })
            let week = try #require(attempt(second)["week"] as? [String: Any])
            // Only the 30 within the cap count toward the week (001: excess is "not counted toward totals").
            #expect(week["target"] as? Double == 100)
            #expect(week["done"] as? Double == 30)
            #expect(week["goalMet"] as? Bool == false)

            // Tuesday, Wednesday and Thursday bring the week to 100 = 5 x the daily goal: the 500 bonus, once.
            var thursdayLogID = ""
            for (offset, amount) in [(1, 30), (2, 30), (3, 10)] {
                try await stage.setClock(monday.adding(days: offset), "18:00", for: athlete)
                let logged = try await athlete.http.post("/v1/attempts/\(dailyID)/tasks/push-ups/logs", json: ["quantity": amount, "series": 5])
                #expect(logged.status == 201, "\(logged.text)")
                thursdayLogID = logged.json["logID"] as? String ?? ""
            }
            let afterGoal = try await athlete.http.get("/v1/attempts/\(dailyID)")
            let goalWeek = try #require(attempt(afterGoal)["week"] as? [String: Any])
            #expect(goalWeek["goalMet"] as? Bool == true)
            #expect(goalWeek["suggestedDailyGoals"] as? [Int] == [20, 22, 24])
            func awards(_ reason: String) async throws -> [Int] {
                (try await athlete.http.get("/v1/me/points/ledger?limit=100").json["items"] as? [[String: Any]] ?? [])
                    .filter { $0["reason"] as? String == reason }.compactMap { $0["points"] as? Int }
            }
            #expect(try await awards("weeklyGoalBonus") == [500])

            // Taking Thursday's 10 back leaves the week short, and takes the bonus back; logging them again earns it again.
            #expect(try await athlete.http.delete("/v1/attempts/\(dailyID)/logs/\(thursdayLogID)").status == 200)
            #expect(try await awards("correction").contains(-500))
            let short = try await athlete.http.get("/v1/attempts/\(dailyID)")
            #expect((attempt(short)["week"] as? [String: Any])?["goalMet"] as? Bool == false)
            _ = try await athlete.http.post("/v1/attempts/\(dailyID)/tasks/push-ups/logs", json: ["quantity": 10, "series": 5])
            #expect(try await awards("weeklyGoalBonus") == [500, 500])
            let total = try await athlete.http.get("/v1/me/points").json["total"] as? Int ?? 0
            let entries = (try await athlete.http.get("/v1/me/points/ledger?limit=100").json["items"] as? [[String: Any]] ?? []).compactMap { $0["points"] as? Int }
            #expect(total == entries.reduce(0, +))

            // The weekly challenge: 7 x 20 = 140 push-ups by Sunday earns its 200 points, once.
            for amount in [100, 40, 10] {
                _ = try await athlete.http.post("/v1/attempts/\(weeklyID)/tasks/push-ups/logs", json: ["quantity": amount])
            }
            let challengeBonuses = (try await athlete.http.get("/v1/me/points/ledger?limit=100").json["items"] as? [[String: Any]] ?? [])
                .filter { $0["reason"] as? String == "challengeBonus" }
            #expect(challengeBonuses.compactMap { $0["points"] as? Int } == [200])

            // Sunday night closes the week: a met goal extends the weekly streak.
            try await stage.setClock(monday.adding(days: 7), "00:01", for: athlete)
            let judged = try await eventually("the week is judged") { () -> TestResponse? in
                let response = try await athlete.http.get("/v1/attempts/\(dailyID)")
                return ((attempt(response)["stats"] as? [String: Any])?["daysCompleted"] as? Int) == 1 ? response : nil
            }
            #expect((attempt(judged)["stats"] as? [String: Any])?["currentStreak"] as? Int == 1)
            #expect((attempt(judged)["stats"] as? [String: Any])?["streakPeriod"] as? String == "week")
        }
    }
}
