import Foundation
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// A habit's own reminder, end to end: challenges publishes the habit with its reminder time, progress starts the
/// attempt and records check-ins, notifications reminds at that local time. Every clock but identity's is moved by
/// the test (identity keeps the real one, so tokens stay valid; the days are after today's date for that reason).
@Suite("Notifications: a habit's own reminder at its local time", .tags(.system), .kind(.system), .serialized)
struct HabitReminderSystemTests {
    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!

    static func reminders(of user: ProgressStage.User, on stack: TestStack) async throws -> [String] {
        try await stack.database.withAdmin { client in
            try await client.query(
                "SELECT key FROM notifications.inbox WHERE user_id = \(user.id) AND kind = 'habit-reminder' ORDER BY created_at", logger: .test("inbox")
            ).collect().map { try $0.decode(String.self) }
        }
    }

    static func pending(of user: ProgressStage.User, on stack: TestStack) async throws -> [String] {
        try await stack.database.withAdmin { client in
            try await client.query(
                "SELECT key FROM notifications.scheduled_notifications WHERE user_id = \(user.id) AND kind = 'habit-reminder'", logger: .test("pending")
            ).collect().map { try $0.decode(String.self) }
        }
    }

    @Test("a habit reminding at 07:30 reminds at 07:30 Rome time, not before, once; a check-in before 07:30 the next day skips that day's; no reminder time, no reminder")
    func habitReminder() async throws {
        try await NotificationTriggersSystemTests.withStage("notifications-habit-reminder") { stage in
            let stack = stage.stack
            let day = Self.rome.date(at: Date()).adding(days: 7)
            try await stage.setClock(Self.rome.instant(of: LocalTime("06:00")!, on: day))
            let ana = try await stage.user("Ana", timeZone: "Europe/Rome")
            let created = try await ana.http.post("/v1/challenges", json: [
                "kind": "habit", "name": "Stretch", "description": "Every morning",
                "tasks": [["taskID": "stretch", "title": "Stretch", "kind": "checkbox"] as [String: any Sendable]],
                "habit": ["colour": "#FF8800", "reminderTime": "07:30"] as [String: any Sendable],
            ])
            let habit = try #require((created.json["definition"] as? [String: Any])?["challengeID"] as? String, "\(created.text)")
            try await stage.waitForDefinition(habit)
            let started = try await ana.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require((started.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(started.text)").lowercased()
            let today = "habit-reminder:\(attemptID):\(day)"
            let tomorrow = "habit-reminder:\(attemptID):\(day.adding(days: 1))"
            let dayAfter = "habit-reminder:\(attemptID):\(day.adding(days: 2))"

            // Both the habit (challenges) and the attempt (progress) reached notifications: today's reminder is pending,
            // at 07:30 Rome time.
            try await waitUntil("today's habit reminder scheduled") { try await Self.pending(of: ana, on: stack) == [today] }
            let fireAt = try await stack.database.withAdmin { client in
                try await client.query(
                    "SELECT fire_at FROM notifications.scheduled_notifications WHERE user_id = \(ana.id) AND key = \(today)", logger: .test("fire")
                ).collect().first?.decode(Date.self)
            }
            #expect(fireAt == Self.rome.instant(of: LocalTime("07:30")!, on: day))

            try await stage.setClock(Self.rome.instant(of: LocalTime("07:29")!, on: day))
            #expect(try await Self.reminders(of: ana, on: stack).isEmpty, "not before 07:30")
            try await stage.setClock(Self.rome.instant(of: LocalTime("07:30")!, on: day).addingTimeInterval(5))
            let reminder = try await eventually("the habit reminder") {
                try await NotificationTriggersSystemTests.notifications("habit-reminder", of: ana).first
            }
            #expect(reminder["title"] as? String == "Habit reminder")
            #expect(reminder["body"] as? String == "Time for “Stretch”.")
            #expect(reminder["deepLink"] as? String == "surge://attempts/\(attemptID)")
            // Sent, the next day's is pending; later that day nothing more comes.
            try await waitUntil("tomorrow's habit reminder scheduled") { try await Self.pending(of: ana, on: stack) == [tomorrow] }
            try await stage.setClock(Self.rome.instant(of: LocalTime("22:00")!, on: day))
            #expect(try await Self.reminders(of: ana, on: stack) == [today], "once")

            // The next day: a check-in at 07:00, heard by notifications before 07:30 comes, skips that day's reminder.
            let next = day.adding(days: 1)
            try await stage.setClock(next, "07:00", for: ana)
            #expect(try await ana.http.put("/v1/attempts/\(attemptID)/tasks/stretch", json: ["done": true]).status == 200)
            try await waitUntil("the check-in known to notifications") {
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.habit_attempts WHERE attempt_id = \(UUID(uuidString: attemptID)!) AND last_check_in = \(next)") == 1
            }
            try await stage.setClock(next, "07:31", for: ana)
            // The scheduler looked at it (it moved on to the day after) and did not send it.
            try await waitUntil("the day after's habit reminder scheduled") { try await Self.pending(of: ana, on: stack) == [dayAfter] }
            #expect(try await Self.reminders(of: ana, on: stack) == [today], "skipped on a day already checked in")

            // Per-habit off: the habit edited without a reminder time has none pending; a time set again schedules the
            // next one (still today, 08:00) at once.
            let off = try await ana.http.patch("/v1/challenges/\(habit)", json: ["habit": ["colour": "#FF8800"] as [String: any Sendable]])
            #expect(off.status == 200, "\(off.text)")
            try await waitUntil("the habit's reminders switched off") { try await Self.pending(of: ana, on: stack).isEmpty }
            let on = try await ana.http.patch("/v1/challenges/\(habit)", json: ["habit": ["colour": "#FF8800", "reminderTime": "08:00"] as [String: any Sendable]])
            #expect(on.status == 200, "\(on.text)")
            try await waitUntil("the habit's reminder back, at 08:00 today") { try await Self.pending(of: ana, on: stack) == [tomorrow] }
            let moved = try await stack.database.withAdmin { client in
                try await client.query(
                    "SELECT fire_at FROM notifications.scheduled_notifications WHERE user_id = \(ana.id) AND key = \(tomorrow)", logger: .test("fire")
                ).collect().first?.decode(Date.self)
            }
            #expect(moved == Self.rome.instant(of: LocalTime("08:00")!, on: next))
        }
    }
}
