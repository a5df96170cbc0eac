import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// Issue 16's scenarios: time off through the gateway, with progress on a simulated clock.
@Suite("Progress: pauses and vacations through the gateway", .tags(.system), .kind(.system), .serialized)
struct PauseSystemTests {
    func attempt(_ response: TestResponse) -> [String: Any] { response.json["attempt"] as? [String: Any] ?? [:] }
    func stats(_ response: TestResponse) -> [String: Any] { attempt(response)["stats"] as? [String: Any] ?? [:] }

    func calendarStatus(_ user: ProgressStage.User, attemptID: String, _ date: LocalDate) async throws -> String? {
        let month = String(date.description.prefix(7))
        let calendar = try await user.http.get("/v1/attempts/\(attemptID)/calendar?month=\(month)")
        return (calendar.json["days"] as? [[String: Any]])?.first { $0["date"] as? String == date.description }?["status"] as? String
    }

    @Test("a 30-day habit with a 5-day vacation in the middle keeps its streak; 75 Hard refuses the pause with a clear problem")
    func vacationKeepsStreak() async throws {
        try await ProgressStage.with("vacation") { stage in
            let user = try await stage.user("Noor", timeZone: "America/New_York")
            let created = try await user.http.post("/v1/challenges", json: [
                "kind": "habit", "name": "Thirty days of sketching", "durationDays": 30,
                "tasks": [["taskID": "sketch", "title": "Sketch", "kind": "checkbox"] as [String: any Sendable]],
                "rules": ["checkInGraceMinutes": 0] as [String: any Sendable],
            ])
            let habit = try #require((created.json["definition"] as? [String: Any])?["challengeID"] as? String, "\(created.text)")
            try await stage.waitForDefinition(habit)
            try await stage.waitForDefinition(Fixtures.seventyFiveHard)
            // Across the end of daylight saving time in New York (1 November 2026).
            let first = LocalDate("2026-10-20")!
            try await stage.setClock(first, "08:00", for: user)
            let started = try await user.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require(attempt(started)["attemptID"] as? String, "\(started.text)")

            let vacation = (12...16).map { first.adding(days: $0) }
            for offset in 0..<30 {
                let day = first.adding(days: offset)
                try await stage.setClock(day, "08:00", for: user)
                if offset == 11 {
                    // 75 Hard, started the day before the vacation, may not pause.
                    let hard = try await user.http.post("/v1/attempts", json: ["challengeID": Fixtures.seventyFiveHard])
                    let hardID = try #require(attempt(hard)["attemptID"] as? String, "\(hard.text)")
                    let refused = try await user.http.post("/v1/attempts/\(hardID)/pause", json: ["days": 3])
                    #expect(refused.status == 422)
                    #expect(refused.json["type"] as? String == "https://surge.example/problems/pause-not-allowed")
                    #expect((refused.json["detail"] as? String)?.contains("rules.pause.mode") == true, "\(refused.text)")
                    let away = try await user.http.post("/v1/me/vacation", json: ["from": vacation[0].description, "days": 5])
                    #expect(away.status == 200, "\(away.text)")
                    #expect((away.json["paused"] as? [[String: Any]])?.map { $0["attemptID"] as? String } == [attemptID])
                    let notPaused = away.json["notPaused"] as? [[String: Any]]
                    #expect(notPaused?.first?["attemptID"] as? String == hardID)
                    #expect(notPaused?.first?["type"] as? String == "https://surge.example/problems/pause-not-allowed")
                }
                let tick = try await user.http.put("/v1/attempts/\(attemptID)/tasks/sketch", json: ["done": true])
                if vacation.contains(day) {
                    #expect(tick.status == 409 && tick.json["type"] as? String == "https://surge.example/problems/day-off", "\(tick.text)")
                } else {
                    #expect(tick.status == 200, "\(day): \(tick.text)")
                }
            }
            try await stage.setClock(first.adding(days: 30), "08:00", for: user)
            let done = try await eventually("the habit completed", timeout: .seconds(30)) { () -> TestResponse? in
                let response = try await user.http.get("/v1/attempts/\(attemptID)")
                return attempt(response)["status"] as? String == "completed" ? response : nil
            }
            #expect(stats(done)["currentStreak"] as? Int == 25)
            #expect(stats(done)["bestStreak"] as? Int == 25)
            #expect(stats(done)["daysPaused"] as? Int == 5)
            #expect(stats(done)["daysMissed"] as? Int == 0)
            #expect(attempt(done)["dayNumber"] as? Int == 25)
            #expect(try await calendarStatus(user, attemptID: attemptID, vacation[2]) == "paused")
            #expect(try await calendarStatus(user, attemptID: attemptID, vacation[0].adding(days: -1)) == "completed")
            let types = try await stage.eventTypes()
            #expect(types.contains("surge.progress.attempt.paused.v1"))
        }
    }

    @Test("a retroactive pause inside the grace window saves yesterday; one outside it is refused; a pause to come is cancelled by resume")
    func retroactivePause() async throws {
        try await ProgressStage.with("retro-pause") { stage in
            let user = try await stage.user("Ilse", timeZone: "Australia/Sydney")
            let habit = try await stage.habit(for: user, graceMinutes: 180)
            let day = LocalDate("2026-11-14")!
            try await stage.setClock(day, "08:00", for: user)
            let started = try await user.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require(attempt(started)["attemptID"] as? String)
            #expect(try await user.http.put("/v1/attempts/\(attemptID)/tasks/sketch", json: ["done": true]).status == 200)

            // Ill on the 15th: at 01:30 on the 16th its window (three hours of grace) is still open.
            try await stage.setClock(day.adding(days: 2), "01:30", for: user)
            let saved = try await user.http.post("/v1/attempts/\(attemptID)/pause", json: ["from": day.adding(days: 1).description, "days": 1])
            #expect(saved.status == 200, "\(saved.text)")
            #expect((attempt(saved)["pauses"] as? [[String: Any]])?.first?["through"] as? String == day.adding(days: 1).description)
            let late = try await user.http.put(
                "/v1/attempts/\(attemptID)/tasks/sketch", json: ["done": true, "date": day.adding(days: 1).description])
            #expect(late.json["type"] as? String == "https://surge.example/problems/day-off", "\(late.text)")
            #expect(try await user.http.put("/v1/attempts/\(attemptID)/tasks/sketch", json: ["done": true]).status == 200)

            // At 03:30 on the 17th the 16th's window has closed: too late to take it off.
            try await stage.setClock(day.adding(days: 3), "03:30", for: user)
            let tooLate = try await user.http.post("/v1/attempts/\(attemptID)/pause", json: ["from": day.adding(days: 2).description])
            #expect(tooLate.status == 422)
            #expect(tooLate.json["type"] as? String == "https://surge.example/problems/pause-too-late", "\(tooLate.text)")
            let judged = try await eventually("the 15th judged paused") { () -> TestResponse? in
                let response = try await user.http.get("/v1/attempts/\(attemptID)")
                return stats(response)["daysPaused"] as? Int == 1 ? response : nil
            }
            #expect(stats(judged)["currentStreak"] as? Int == 2)
            #expect(stats(judged)["daysCompleted"] as? Int == 2)
            #expect(stats(judged)["daysMissed"] as? Int == 0)
            #expect(try await calendarStatus(user, attemptID: attemptID, day.adding(days: 1)) == "paused")
            let history = try await user.http.get("/v1/attempts/\(attemptID)/history?weeks=2")
            #expect((history.json["days"] as? [[String: Any]])?.first { $0["date"] as? String == day.adding(days: 1).description }?["paused"] as? Bool == true)

            let planned = try await user.http.post("/v1/attempts/\(attemptID)/pause", json: ["from": day.adding(days: 6).description])
            #expect(planned.status == 200, "\(planned.text)")
            #expect(try await calendarStatus(user, attemptID: attemptID, day.adding(days: 8)) == "paused")
            let overlapping = try await user.http.post("/v1/attempts/\(attemptID)/pause", json: ["from": day.adding(days: 9).description, "days": 2])
            #expect(overlapping.status == 409 && overlapping.json["type"] as? String == "https://surge.example/problems/pause-overlaps")
            let resumed = try await user.http.post("/v1/attempts/\(attemptID)/resume")
            #expect(resumed.status == 200, "\(resumed.text)")
            #expect((attempt(resumed)["pauses"] as? [[String: Any]])?.count == 1)
            let nothing = try await user.http.delete("/v1/me/vacation")
            #expect(nothing.status == 409 && nothing.json["type"] as? String == "https://surge.example/problems/not-paused")
            let types = try await stage.eventTypes()
            #expect(types.filter { $0 == "surge.progress.attempt.paused.v1" }.count == 2)
            #expect(types.contains("surge.progress.attempt.resumed.v1"))
        }
    }

    @Test("a vacation silences the daily reminder while it lasts; the day after it, the reminder comes again")
    func vacationSilencesReminders() async throws {
        try await withTestStack("vacation-reminders") { stack in
            try await stack.start("identity")
            try await stack.start("challenges")
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "100"])
            try await stack.start("notifications", environment: ["SIMULATED_CLOCK": "true", "REMINDER_INTERVAL_MS": "50"])
            try await stack.start("gateway")
            let stage = ProgressStage(stack: stack)
            let user = try await stage.user("Ravi", timeZone: "Asia/Kolkata")
            let habit = try await stage.habit(for: user, graceMinutes: 60)
            // Identity keeps the real clock (tokens stay valid) and preferences are scheduled from its time: the
            // simulated days come after it.
            let first = user.calendar.date(at: Date()).adding(days: 10)
            try await stage.setClock(first, "08:00", for: user)
            let preferences = try await user.http.put(
                "/v1/me/preferences", json: ["notificationsEnabled": true, "dailyReminderTime": "09:00", "telemetryOptOut": false])
            #expect(preferences.status == 200, "\(preferences.text)")
            let firstReminder = user.calendar.instant(of: LocalTime("09:00")!, on: first)
            try await waitUntil("the first day's reminder scheduled") {
                try await stack.database.withAdmin { client in
                    try await client.query("SELECT fire_at FROM notifications.reminders WHERE user_id = \(user.id)", logger: .test("reminders"))
                        .collect().first?.decode(Date.self)
                } == firstReminder
            }
            #expect(try await user.http.post("/v1/attempts", json: ["challengeID": habit]).status == 201)
            let away = try await user.http.post("/v1/me/vacation", json: ["days": 2])
            #expect((away.json["paused"] as? [[String: Any]])?.count == 1, "\(away.text)")
            try await waitUntil("notifications knows the vacation") {
                try await stack.database.count("SELECT count(*) FROM notifications.vacations WHERE user_id = \(user.id)") == 1
            }
            /// The reminder row has moved past `date`'s 09:00: that day's reminder was handled (sent or skipped).
            func handled(_ date: LocalDate) async throws {
                let fired = user.calendar.instant(of: LocalTime("09:00")!, on: date)
                try await waitUntil("the reminder of \(date) handled") {
                    try await stack.database.withAdmin { client in
                        try await client.query("SELECT fire_at FROM notifications.reminders WHERE user_id = \(user.id)", logger: .test("reminders"))
                            .collect().first?.decode(Date.self)
                    }.map { $0 > fired } ?? false
                }
            }
            for offset in 0..<2 {
                try await stage.setClock(first.adding(days: offset), "09:01", for: user)
                try await handled(first.adding(days: offset))
            }
            try await stage.setClock(first.adding(days: 2), "09:01", for: user)
            let keys = try await eventually("the first reminder after the vacation") { () -> [String]? in
                let keys = try await stack.database.withAdmin { client in
                    try await client.query(
                        "SELECT key FROM notifications.inbox WHERE user_id = \(user.id) AND kind = 'daily-reminder' ORDER BY key", logger: .test("inbox")
                    ).collect().map { try $0.decode(String.self) }
                }
                return keys.isEmpty ? nil : keys
            }
            #expect(keys == ["daily-reminder:\(first.adding(days: 2))"])
        }
    }
}
