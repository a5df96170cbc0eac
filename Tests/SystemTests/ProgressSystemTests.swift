import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// Issue 5's scenarios, through the gateway, with progress on a simulated clock.
@Suite("Progress: scenarios through the gateway", .serialized)
struct ProgressSystemTests {
    func attempt(_ response: TestResponse) -> [String: Any] { response.json["attempt"] as? [String: Any] ?? [:] }
    func stats(_ response: TestResponse) -> [String: Any] { attempt(response)["stats"] as? [String: Any] ?? [:] }

    /// Checks in every task of 75 Hard for the local day the clock is on.
    func completeDay(_ user: ProgressStage.User, attemptID: String, skip: String? = nil) async throws -> TestResponse {
        var last: TestResponse?
        for task in ["workouts", "diet", "reading"] where task != skip {
            last = try await user.http.put("/v1/attempts/\(attemptID)/tasks/\(task)", json: ["done": true])
            #expect(last?.status == 200, "\(last?.text ?? "")")
        }
        if skip != "water" {
            last = try await user.http.post("/v1/attempts/\(attemptID)/tasks/water/logs", json: ["quantity": 3.8])
            #expect(last?.status == 201, "\(last?.text ?? "")")
        }
        if skip != "photo" {
            last = try await user.http.send(.PUT, "/v1/attempts/\(attemptID)/tasks/photo/photo", body: Fixtures.jpeg, contentType: "image/jpeg")
            #expect(last?.status == 200, "\(last?.text ?? "")")
        }
        return last!
    }

    @Test("Sarah starts 75 Hard and sees its five tasks for day 1 of 75")
    func sarahStarts() async throws {
        try await ProgressStage.with("sarah") { stage in
            let hard = Fixtures.seventyFiveHard()
            try await stage.publish(hard)
            let sarah = try await stage.user("Sarah", timeZone: "Europe/London")
            try await stage.setClock(LocalDate("2026-03-01")!, "08:00", for: sarah)
            let started = try await sarah.http.post("/v1/attempts", json: ["challengeID": hard.challengeID.uuidString])
            #expect(started.status == 201, "\(started.text)")
            let today = try #require(attempt(started)["today"] as? [String: Any])
            #expect((today["tasks"] as? [[String: Any]])?.map { $0["taskID"] as? String } == ["workouts", "diet", "water", "reading", "photo"])
            #expect((today["remainingTaskIDs"] as? [String])?.count == 5)
            #expect(attempt(started)["dayNumber"] as? Int == 1)
            #expect(attempt(started)["durationDays"] as? Int == 75)
            #expect(stats(started)["progressPercent"] as? Int == 0)
            let again = try await sarah.http.post("/v1/attempts", json: ["challengeID": hard.challengeID.uuidString])
            #expect(again.status == 409)
            let unknown = try await sarah.http.post("/v1/attempts", json: ["challengeID": UUID().uuidString])
            #expect(unknown.status == 404)
        }
    }

    @Test("Marcus checks off day 23 and sees streak 23 and 30%; all 75 days complete in simulated time, across a DST change")
    func marcusRunsSeventyFiveDays() async throws {
        try await ProgressStage.with("marcus") { stage in
            let hard = Fixtures.seventyFiveHard()
            try await stage.publish(hard)
            let marcus = try await stage.user("Marcus", timeZone: "Europe/London")
            let first = LocalDate("2026-03-01")!
            try await stage.setClock(first, "07:00", for: marcus)
            let started = try await marcus.http.post("/v1/attempts", json: ["challengeID": hard.challengeID.uuidString])
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
            #expect(stats(done)["points"] as? Int == 75 * 5 + 200)
            let points = try await marcus.http.get("/v1/me/points")
            #expect(points.json["total"] as? Int == 75 * 5 + 200)
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
            let hard = Fixtures.seventyFiveHard()
            try await stage.publish(hard)
            let elena = try await stage.user("Elena", timeZone: "America/New_York")
            let first = LocalDate("2026-10-20")!
            try await stage.setClock(first, "07:00", for: elena)
            let started = try await elena.http.post("/v1/attempts", json: ["challengeID": hard.challengeID.uuidString])
            let attemptID = try #require(attempt(started)["attemptID"] as? String)
            for day in 0..<14 {
                try await stage.setClock(first.adding(days: day), "21:00", for: elena)
                _ = try await completeDay(elena, attemptID: attemptID)
            }
            let dayFifteen = first.adding(days: 14)
            try await stage.setClock(dayFifteen, "21:00", for: elena)
            _ = try await completeDay(elena, attemptID: attemptID, skip: "water")
            try await stage.setClock(dayFifteen, "23:59", for: elena)
            try await Task.sleep(for: .milliseconds(400))
            #expect(attempt(try await elena.http.get("/v1/attempts/\(attemptID)"))["status"] as? String == "active")
            try await stage.setClock(dayFifteen.adding(days: 1), "00:00", for: elena)
            let failed = try await eventually("failed at local midnight") { () -> TestResponse? in
                let response = try await elena.http.get("/v1/attempts/\(attemptID)")
                return attempt(response)["status"] as? String == "failed" ? response : nil
            }
            let reason = try #require(attempt(failed)["failureReason"] as? String)
            #expect(reason.contains("Drink 3.8 litres of water") && reason.contains("day 15"))
            #expect(attempt(failed)["missedTaskIDs"] as? [String] == ["water"])
            #expect(stats(failed)["bestStreak"] as? Int == 14)

            let late = try await elena.http.put("/v1/attempts/\(attemptID)/tasks/diet", json: ["done": true])
            #expect(late.status == 409)
            let restarted = try await elena.http.post("/v1/attempts/\(attemptID)/restart")
            #expect(restarted.status == 201)
            #expect(attempt(restarted)["attemptNumber"] as? Int == 2)
            #expect(attempt(restarted)["dayNumber"] as? Int == 1)
            let history = try await elena.http.get("/v1/attempts?challengeID=\(hard.challengeID.uuidString)")
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
            let habit = Fixtures.habit()
            try await stage.publish(habit)
            let user = try await stage.user("Ana", timeZone: "Asia/Kolkata")
            let day = LocalDate("2026-11-10")!
            try await stage.setClock(day, "09:00", for: user)
            let started = try await user.http.post("/v1/attempts", json: ["challengeID": habit.challengeID.uuidString])
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
            let habit = Fixtures.habit(graceMinutes: 180)
            try await stage.publish(habit)
            let user = try await stage.user("Kai", timeZone: "Australia/Sydney")
            let day = LocalDate("2026-11-14")!
            try await stage.setClock(day, "08:00", for: user)
            let started = try await user.http.post("/v1/attempts", json: ["challengeID": habit.challengeID.uuidString])
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
            let household = UUID()
            try await stage.publish(GroupChanged(groupID: household, name: "Home", kind: .household, timeZone: "Europe/Berlin", ownerID: parent.id, created: true, changedAt: Date()))
            for (user, role) in [(parent, GroupRole.owner), (teen, .member)] {
                try await stage.publish(GroupMembershipChanged(groupID: household, userID: user.id, displayName: "x", role: role, change: .joined, changedAt: Date()))
            }
            let monday = LocalDate("2026-11-16")!
            let chore = ChallengeDefinition(
                challengeID: UUID(), version: 1, effectiveFrom: nil, kind: .chore, name: "Take out the bins", description: "",
                category: "household", difficulty: .beginner, visibility: .group, ownerID: parent.id, groupID: household, durationDays: nil,
                estimatedDailyMinutes: 5, tasks: [ChallengeTask(taskID: "done", title: "Bins out", kind: .checkbox, points: 3)],
                rules: ChallengeRules(failure: .init(mode: .none), points: .init(kind: .perTask, pointsPerTask: 1)),
                chore: ChoreDetails(assigneeID: teen.id, firstDueOn: monday, dueTime: LocalTime("19:00"), recurrence: ChoreRecurrence(kind: .weekly, weekdays: [.monday])))
            try await stage.publish(chore)
            try await stage.setClock(monday, "10:00", for: teen)
            let pending = try await eventually("the chore is due") { () -> [[String: Any]]? in
                let items = try await teen.http.get("/v1/groups/\(household.uuidString)/chore-occurrences").json["items"] as? [[String: Any]] ?? []
                return items.isEmpty ? nil : items
            }
            #expect(pending.first?["dueOn"] as? String == "2026-11-16")
            #expect(pending.first?["assigneeID"] as? String == teen.id.uuidString)
            #expect(try await outsider.http.get("/v1/groups/\(household.uuidString)/chore-occurrences").status == 404)
            let occurrenceID = try #require(pending.first?["occurrenceID"] as? String)
            #expect(try await outsider.http.post("/v1/chore-occurrences/\(occurrenceID)/complete").status == 404)
            let completed = try await teen.http.post("/v1/chore-occurrences/\(occurrenceID)/complete")
            #expect(completed.status == 200)
            #expect(try await teen.http.post("/v1/chore-occurrences/\(occurrenceID)/complete").status == 409)
            #expect(try await teen.http.get("/v1/me/points").json["total"] as? Int == 3)
            let next = try await teen.http.get("/v1/groups/\(household.uuidString)/chore-occurrences").json["items"] as? [[String: Any]] ?? []
            #expect(next.map { $0["dueOn"] as? String } == ["2026-11-23"])
            #expect(next.first?["overdue"] as? Bool == false)

            try await stage.setClock(monday.adding(days: 7), "19:30", for: teen)
            try await waitUntil("the next occurrence is flagged overdue") {
                let items = try await parent.http.get("/v1/groups/\(household.uuidString)/chore-occurrences").json["items"] as? [[String: Any]] ?? []
                return items.first?["overdue"] as? Bool == true
            }
            let history = try await parent.http.get("/v1/groups/\(household.uuidString)/chore-occurrences?status=completed")
            #expect((history.json["items"] as? [[String: Any]])?.first?["completedBy"] as? String == teen.id.uuidString)
            #expect(try await stage.eventTypes().contains(ChoreOccurrenceChanged.eventType))
        }
    }
}
