import Foundation
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// The notifications a habit brings as its user lives a week of it: identity, challenges, progress, notifications and
/// the gateway as processes, every clock but identity's moved by the test (identity keeps the real one, so tokens stay
/// valid; the week is set after today's date for that reason).
@Suite("Notifications: milestones, the weekly digest, the personalised time, a streak at risk and a nudge", .tags(.system), .kind(.system), .serialized)
struct NotificationTriggersSystemTests {
    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!

    static func items(_ user: ProgressStage.User) async throws -> [[String: Any]] {
        try await user.http.get("/v1/me/notifications?limit=100").json["items"] as? [[String: Any]] ?? []
    }

    static func notifications(_ kind: String, of user: ProgressStage.User) async throws -> [[String: Any]] {
        try await items(user).filter { $0["kind"] as? String == kind }
    }

    /// Identity on the real clock; challenges, progress and notifications on one simulated clock; the gateway.
    static func withStage(_ name: String, _ body: (ProgressStage) async throws -> Void) async throws {
        try await withTestStack(name) { stack in
            try await stack.start("identity")
            try await stack.start("challenges", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "100"])
            try await stack.start("notifications", environment: ["SIMULATED_CLOCK": "true", "REMINDER_INTERVAL_MS": "50"])
            try await stack.start("gateway")
            try await body(ProgressStage(stack: stack))
        }
    }

    static func waitFor(_ kind: String, of user: ProgressStage.User) async throws -> [String: Any] {
        try await eventually("a \(kind) notification") { try await notifications(kind, of: user).first }
    }

    @Test("a week of evening check-ins: the digest on Sunday, the 7-day milestone, the reminder moved to 18:00; two missed days: a streak at risk and a nudge, once each")
    func week() async throws {
        try await Self.withStage("notifications-triggers") { stage in
            let stack = stage.stack
            var monday = Self.rome.date(at: Date()).adding(days: 7)
            while monday.weekday != .monday { monday = monday.adding(days: 1) }
            try await stage.setClock(Self.rome.instant(of: LocalTime("09:00")!, on: monday))

            let ana = try await stage.user("Ana", timeZone: "Europe/Rome")
            let habit = try await stage.habit(for: ana, graceMinutes: 60)
            let started = try await ana.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require((started.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(started.text)")

            for day in 0..<7 {
                if day == 6 {
                    // Saturday's completion is in before Sunday's digest counts the week.
                    try await waitUntil("six completions recorded") {
                        try await stack.database.count("SELECT count(*) FROM notifications.completion_times WHERE user_id = \(ana.id)") == 6
                    }
                }
                try await stage.setClock(monday.adding(days: day), "19:10", for: ana)
                #expect(try await ana.http.put("/v1/attempts/\(attemptID)/tasks/sketch", json: ["done": true]).status == 200)
                // The notification service hears of it before the days move on, as it would in real time.
                try await waitUntil("the check-in of day \(day + 1) known to notifications") {
                    try await stack.database.count(
                        "SELECT count(*) FROM notifications.recipients WHERE user_id = \(ana.id) AND last_check_in = \(monday.adding(days: day))") == 1
                }
            }
            let digest = try await Self.waitFor("weekly-digest", of: ana)
            #expect((digest["body"] as? String)?.contains("6 of the last 7") == true, "\(digest)")
            #expect(digest["deepLink"] as? String == "surge://statistics")

            // Sunday is judged after its grace: the streak reaches 7.
            try await stage.setClock(monday.adding(days: 7), "01:30", for: ana)
            let milestone = try await Self.waitFor("streak-milestone", of: ana)
            #expect(milestone["title"] as? String == "🔥 7-day streak!")
            #expect(milestone["deepLink"] as? String == "surge://attempts/\(attemptID.lowercased())")
            // Seven completions at 19:10 fall in the 18:00-20:00 bin: the daily reminder moves to 18:00.
            try await waitUntil("the personalised reminder time") {
                try await stack.database.withAdmin { client in
                    try await client.query("SELECT personalised_time FROM notifications.recipients WHERE user_id = \(ana.id)", logger: .test("time"))
                        .collect().first?.decode(String?.self) == "18:00"
                }
            }

            // Monday and Tuesday go by without a check-in.
            try await stage.setClock(monday.adding(days: 9), "02:00", for: ana)
            try await waitUntil("two missed days counted") {
                try await stack.database.count("SELECT count(*) FROM notifications.attempt_misses WHERE consecutive = 2 AND user_id = \(ana.id)") == 1
            }
            #expect(try await Self.notifications("streak-at-risk", of: ana).isEmpty, "not before the daily time")
            try await stage.setClock(monday.adding(days: 9), "18:01", for: ana)
            let risk = try await Self.waitFor("streak-at-risk", of: ana)
            #expect(risk["title"] as? String == "Your streak is at risk")
            let nudge = try await Self.waitFor("re-engagement", of: ana)
            #expect(nudge["title"] as? String == "We miss you")

            // A day later, neither comes again.
            try await stage.setClock(monday.adding(days: 10), "18:30", for: ana)
            try await waitUntil("Thursday's daily reminder") {
                try await Self.notifications("daily-reminder", of: ana).contains { ($0["createdAt"] as? String)?.hasPrefix(monday.adding(days: 10).description) == true }
            }
            // Counted where they are written, whatever the gateway's answers under load.
            let written = try await stack.database.withAdmin { client in
                try await client.query(
                    "SELECT kind, key FROM notifications.inbox WHERE user_id = \(ana.id) AND kind <> 'daily-reminder' ORDER BY created_at",
                    logger: .test("inbox")
                ).collect().map { try $0.decode((String, String).self) }
            }
            for kind in ["streak-at-risk", "re-engagement", "weekly-digest", "streak-milestone"] {
                #expect(written.filter { $0.0 == kind }.count == 1, "\(kind) once: \(written)")
            }
        }
    }

    @Test("close to the daily goal: 45 of 50 push-ups tells once that day (not at 30, not again at 47, not once done); the next day again")
    func closeToGoal() async throws {
        try await withTestStack("notifications-close-to-goal") { stack in
            try await stack.start("identity")
            try await stack.start("challenges", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("notifications", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("gateway")
            let stage = ProgressStage(stack: stack)
            let day = Self.rome.date(at: Date()).adding(days: 7)
            try await stage.setClock(Self.rome.instant(of: LocalTime("09:00")!, on: day))
            let ana = try await stage.user("Ana", timeZone: "Europe/Rome")
            let created = try await ana.http.post("/v1/challenges", json: [
                "kind": "habit", "name": "Push-ups", "description": "Every day",
                "tasks": [["taskID": "reps", "title": "50 push-ups", "kind": "quantity", "target": 50, "unit": "push-ups"] as [String: any Sendable]],
            ])
            let habit = try #require((created.json["definition"] as? [String: Any])?["challengeID"] as? String, "\(created.text)")
            try await stage.waitForDefinition(habit)
            let started = try await ana.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require((started.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(started.text)")
            func log(_ amount: Int) async throws {
                let logged = try await ana.http.post("/v1/attempts/\(attemptID)/tasks/reps/logs", json: ["quantity": amount])
                #expect(logged.status == 200 || logged.status == 201, "\(logged.text)")
            }

            // 30 is not close (20 left); 45 is: had 30 told, today's one would say 20.
            try await log(30)
            try await log(15)
            let close = try await Self.waitFor("close-to-goal", of: ana)
            #expect(close["body"] as? String == "Only 5 push-ups to go to reach today's goal!", "\(close)")
            #expect(close["deepLink"] as? String == "surge://attempts/\(attemptID.lowercased())")
            try await log(2)
            try await log(10)
            // Day complete: its check-in is handled (the day's completion recorded), and still one close-to-goal today.
            try await waitUntil("the completed day known to notifications") {
                try await stack.database.count("SELECT count(*) FROM notifications.completion_times WHERE user_id = \(ana.id)") == 1
            }
            #expect(try await Self.notifications("close-to-goal", of: ana).count == 1, "once a day")

            try await stage.setClock(Self.rome.instant(of: LocalTime("10:00")!, on: day.adding(days: 1)))
            try await log(48)
            try await eventually("the next day's close-to-goal") { try await Self.notifications("close-to-goal", of: ana).count == 2 ? true : nil }
            #expect(try await Self.notifications("close-to-goal", of: ana).first?["body"] as? String == "Only 2 push-ups to go to reach today's goal!")
        }
    }

    @Test("a weekly chore due Monday 18:00 reminds its assignee an hour before (the default lead) and at 18:00, not before and nobody else; completed, the next Monday's does the same; a chore's own lead of 15 minutes, told in the assignee's zone")
    func choreDue() async throws {
        try await withTestStack("notifications-chore-due") { stack in
            try await stack.start("identity")
            try await stack.start("challenges", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "100"])
            try await stack.start("notifications", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("gateway")
            let stage = ProgressStage(stack: stack)
            var monday = Self.rome.date(at: Date()).adding(days: 7)
            while monday.weekday != .monday { monday = monday.adding(days: 1) }
            try await stage.setClock(Self.rome.instant(of: LocalTime("10:00")!, on: monday))
            // The parent lives in London; the household's times are Rome's.
            let parent = try await stage.user("Paolo", timeZone: "Europe/London")
            let teen = try await stage.user("Teo", timeZone: "Europe/Rome")
            let household = try await stage.household(owner: parent, members: [teen], timeZone: "Europe/Rome")
            let chore = try await parent.http.post("/v1/challenges", json: [
                "kind": "chore", "name": "Take out the bins", "groupID": household,
                "chore": [
                    "assigneeID": teen.id.uuidString, "firstDueOn": monday.description, "dueTime": "18:00",
                    "recurrence": ["kind": "weekly", "weekdays": ["monday"]] as [String: any Sendable],
                ] as [String: any Sendable],
            ])
            #expect(chore.status == 201, "\(chore.text)")
            let first = try await eventually("the first occurrence") { () -> [String: Any]? in
                (try await teen.http.get("/v1/groups/\(household)/chore-occurrences").json["items"] as? [[String: Any]])?.first
            }
            #expect(first["dueOn"] as? String == monday.description)
            let firstID = try #require(first["occurrenceID"] as? String)
            for user in [parent, teen] {
                try await waitUntil("notifications knows \(user.id)") {
                    try await stack.database.count("SELECT count(*) FROM notifications.recipients WHERE user_id = \(user.id)") == 1
                }
            }
            let at = { (date: LocalDate, time: String) in Self.rome.instant(of: LocalTime(time)!, on: date) }
            let createdAt = { (note: [String: Any]) in try #require((note["createdAt"] as? String).flatMap(Timestamp.parse)) }

            // 16:59: not yet (two judgement rounds have looked at that time). 17:00: an hour before.
            try await stage.setClock(at(monday, "16:59"))
            try await stage.waitForJudgement()
            #expect(try await Self.notifications("chore-due", of: teen).isEmpty, "not before the lead time")
            try await stage.setClock(at(monday, "17:00"))
            let soon = try await Self.waitFor("chore-due", of: teen)
            #expect(soon["body"] as? String == "Reminder: “Take out the bins” is due at 18:00.")
            #expect(soon["deepLink"] as? String == "surge://groups/\(household.lowercased())/chores")
            let soonAt = try createdAt(soon)
            #expect(soonAt >= at(monday, "17:00") && soonAt < at(monday, "17:01"), "at 17:00 Rome: \(soonAt)")

            // 17:59: nothing more. 18:00: due now.
            try await stage.setClock(at(monday, "17:59"))
            try await stage.waitForJudgement()
            #expect(try await Self.notifications("chore-due", of: teen).count == 1, "not before the due time")
            try await stage.setClock(at(monday, "18:00"))
            let reminder = try await eventually("the reminder at the due time") { () -> [String: Any]? in
                try await Self.notifications("chore-due", of: teen).first { $0["body"] as? String == "Reminder: “Take out the bins” is due now." }
            }
            #expect(reminder["deepLink"] as? String == "surge://groups/\(household.lowercased())/chores")
            let sentAt = try createdAt(reminder)
            #expect(sentAt >= at(monday, "18:00") && sentAt < at(monday, "18:01"), "at 18:00 Rome: \(sentAt)")
            #expect(try await Self.notifications("chore-due", of: parent).isEmpty, "only the assignee")

            // A chore with its own lead of 15 minutes, due 20:00 Rome, assigned to the parent in London.
            let plants = try await parent.http.post("/v1/challenges", json: [
                "kind": "chore", "name": "Water the plants", "groupID": household,
                "chore": [
                    "assigneeID": parent.id.uuidString, "firstDueOn": monday.description, "dueTime": "20:00", "reminderLeadMinutes": 15,
                    "recurrence": ["kind": "weekly", "weekdays": ["monday"]] as [String: any Sendable],
                ] as [String: any Sendable],
            ])
            #expect(plants.status == 201, "\(plants.text)")
            #expect(((plants.json["definition"] as? [String: Any])?["chore"] as? [String: Any])?["reminderLeadMinutes"] as? Int == 15, "\(plants.text)")
            _ = try await eventually("the plants' occurrence") { () -> Bool? in
                let items = try await parent.http.get("/v1/groups/\(household)/chore-occurrences").json["items"] as? [[String: Any]] ?? []
                return items.contains { $0["title"] as? String == "Water the plants" } ? true : nil
            }

            // Done at 18:30: the next occurrence is next Monday's.
            try await stage.setClock(at(monday, "18:30"))
            #expect(try await teen.http.post("/v1/chore-occurrences/\(firstID)/complete").status == 200)
            try await stage.setClock(at(monday, "19:44"))
            try await stage.waitForJudgement()
            #expect(try await Self.notifications("chore-due", of: parent).isEmpty, "not an hour before: its own lead is 15 minutes")
            try await stage.setClock(at(monday, "19:45"))
            let plantsSoon = try await Self.waitFor("chore-due", of: parent)
            #expect(plantsSoon["body"] as? String == "Reminder: “Water the plants” is due at 19:00.", "London's time")
            try await stage.setClock(at(monday, "20:00"))
            _ = try await eventually("the plants' reminder at 20:00") { try await Self.notifications("chore-due", of: parent).count == 2 ? true : nil }

            // Next Monday's occurrence reminds an hour before and at its 18:00, once each.
            let nextMonday = monday.adding(days: 7)
            _ = try await eventually("next Monday's occurrence") { () -> Bool? in
                let items = try await teen.http.get("/v1/groups/\(household)/chore-occurrences").json["items"] as? [[String: Any]] ?? []
                return items.contains { $0["dueOn"] as? String == nextMonday.description } ? true : nil
            }
            try await stage.setClock(at(nextMonday, "16:59"))
            try await stage.waitForJudgement()
            #expect(try await Self.notifications("chore-due", of: teen).count == 2, "not before next Monday's 17:00")
            try await stage.setClock(at(nextMonday, "17:00"))
            _ = try await eventually("next Monday's early reminder") { try await Self.notifications("chore-due", of: teen).count == 3 ? true : nil }
            try await stage.setClock(at(nextMonday, "18:00"))
            _ = try await eventually("next Monday's reminder") { try await Self.notifications("chore-due", of: teen).count == 4 ? true : nil }
            try await stage.setClock(at(nextMonday, "18:05"))
            try await stage.waitForJudgement()
            #expect(try await Self.notifications("chore-due", of: teen).count == 4, "each occurrence twice: before and at its due time")
        }
    }
}
