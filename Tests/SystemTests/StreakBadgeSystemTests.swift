import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// A streak level as the user meets it (issue 43.5): earned by the check-in that completes the day reaching it, not a
/// day later when that day is judged. Identity on the real clock; challenges, progress (judging every 100 ms) and
/// notifications on the stack's simulated one; badges and the gateway.
@Suite("Badges: a streak level earned by the check-in that reaches it", .tags(.system), .kind(.system), .serialized)
struct StreakBadgeSystemTests {
    typealias User = ProgressStage.User
    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!
    /// How soon after the check-in's 2xx the badge and the milestone must be readable. Measured 0.09 s on a settled stack
    /// (a chore's badge takes 0.07-0.6 s); the bound leaves room for a test run with five other stacks on two cores,
    /// where the milestone's hop through notifications took 1.0-1.5 s. Judging day 7 takes a day of simulated clock.
    static let bound: Duration = .seconds(3)

    static func streakAwards(_ response: TestResponse) -> [[String: Any]] {
        BadgesSystemTests.earned(response).filter { $0["badgeID"] as? String == "streak" }
    }

    /// The attempt's live streak in a check-in's answer.
    static func streak(_ response: TestResponse) -> Int? {
        ((response.json["attempt"] as? [String: Any])?["stats"] as? [String: Any])?["currentStreak"] as? Int
    }

    static func milestones(of user: User) async throws -> [[String: Any]] {
        let items = try await user.http.get("/v1/me/notifications?limit=100").json["items"] as? [[String: Any]] ?? []
        return items.filter { $0["kind"] as? String == "streak-milestone" }
    }

    /// Waits until the badge and notification services have handled every event of `type` progress wrote.
    static func handledEverywhere(_ stack: TestStack, _ type: String) async throws {
        try await waitUntil("badges and notifications handled every \(type)") {
            let badges = try await stack.database.count(
                "SELECT count(*) FROM progress.outbox o WHERE o.type = \(type) AND NOT EXISTS (SELECT 1 FROM badges.processed_events p WHERE p.event_id = o.event_id)")
            let notifications = try await stack.database.count(
                "SELECT count(*) FROM progress.outbox o WHERE o.type = \(type) AND NOT EXISTS (SELECT 1 FROM notifications.processed_events p WHERE p.event_id = o.event_id)")
            return badges == 0 && notifications == 0
        }
    }

    @Test("the 7th daily tick earns the 7-day streak badge and its milestone within a second of the 2xx, before day 7 is judged; undone and ticked again the same day, and day 7 judged later, nothing is awarded or told again")
    func seventhTick() async throws {
        try await withTestStack("badges-live-streak") { stack in
            try await stack.start("identity")
            try await stack.start("challenges", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "100"])
            try await stack.start("notifications", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("badges")
            try await stack.start("gateway")
            let stage = ProgressStage(stack: stack)
            let first = Self.rome.date(at: Date()).adding(days: 7)
            try await stage.setClock(Self.rome.instant(of: LocalTime("09:00")!, on: first))
            let ana = try await stage.user("Ana", timeZone: "Europe/Rome")
            let habit = try await stage.habit(for: ana, graceMinutes: 60)
            let started = try await ana.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require((started.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(started.text)")
            let task = "/v1/attempts/\(attemptID)/tasks/sketch"

            for day in 0..<6 {
                try await stage.setClock(first.adding(days: day), "09:00", for: ana)
                #expect(try await ana.http.put(task, json: ["done": true]).status == 200)
            }
            // The seventh morning: six days judged, every service caught up with them.
            let seventh = first.adding(days: 6)
            try await stage.setClock(seventh, "09:00", for: ana)
            let before = try await BadgesSystemTests.badges(of: ana, "six days judged") { BadgesSystemTests.progress(of: "streak", $0) == "6 of 7" }
            #expect(Self.streakAwards(before).isEmpty)
            try await waitUntil("notifications know the sixth check-in") {
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.recipients WHERE user_id = \(ana.id) AND last_check_in = \(first.adding(days: 5))") == 1
            }
            let stream = try await StreamSystemTests.connect(stage, ana)
            defer { stream.close() }

            let ticked = try await ana.http.put(task, json: ["done": true])
            let answered = ContinuousClock.now
            #expect(ticked.status == 200 && Self.streak(ticked) == 7, "\(ticked.text)")
            let (earned, told) = try await eventually("the 7-day streak badge and its milestone", timeout: Self.bound) {
                () -> (TestResponse, [String: Any])? in
                let badges = try await ana.http.get("/v1/me/badges")
                guard !Self.streakAwards(badges).isEmpty, let told = try await Self.milestones(of: ana).first else { return nil }
                return (badges, told)
            }
            print("badges: the 7-day streak badge and its milestone were readable \(ContinuousClock.now - answered) after the 7th tick's 2xx")
            #expect(Self.streakAwards(earned).map { $0["title"] as? String } == ["7-day streak"], "\(earned.text)")
            #expect(BadgesSystemTests.progress(of: "streak", earned) == "7 of 14")
            #expect(told["title"] as? String == "🔥 7-day streak!")
            let badge = try await stream.waitFor("the badge on the stream") { $0.name == "badge" && $0.json["badgeID"] as? String == "streak" }
            let milestone = try await stream.waitFor("the milestone on the stream") {
                $0.name == "notification" && $0.json["kind"] as? String == "streak-milestone"
            }
            #expect(badge.arrivedAt - answered <= Self.bound && milestone.arrivedAt - answered <= Self.bound)
            let checkIn = try await stream.waitFor("the check-in on the stream") { $0.name == "checkin" }
            #expect(checkIn.json["currentStreak"] as? Int == 7, "\(checkIn)")
            // Not from a judgement: day 7's window is still open.
            #expect(try await stack.database.count(
                "SELECT count(*) FROM progress.outbox WHERE type = 'surge.progress.day.judged.v1' AND payload->>'localDate' = \(seventh.description)") == 0)

            // Undone the same day, the streak is 6 again and the badge stays; ticked again, nothing is awarded twice.
            let undone = try await ana.http.put(task, json: ["done": false])
            #expect(undone.status == 200 && Self.streak(undone) == 6, "\(undone.text)")
            let retick = try await ana.http.put(task, json: ["done": true])
            #expect(retick.status == 200 && Self.streak(retick) == 7, "\(retick.text)")
            try await Self.handledEverywhere(stack, "surge.progress.checkin.recorded.v1")
            #expect(Self.streakAwards(try await ana.http.get("/v1/me/badges")).count == 1)

            // Day 7 judged: the streak reaches 7 for good, and its streak.changed finds the level held and the milestone told.
            try await stage.setClock(first.adding(days: 7), "09:00", for: ana)
            try await waitUntil("day 7 judged") {
                try await stack.database.count(
                    "SELECT count(*) FROM progress.outbox WHERE type = 'surge.progress.streak.changed.v1' AND payload->>'localDate' = \(seventh.description) AND (payload->>'current')::int = 7") == 1
            }
            try await Self.handledEverywhere(stack, "surge.progress.streak.changed.v1")
            let after = try await ana.http.get("/v1/me/badges")
            #expect(Self.streakAwards(after).count == 1, "\(after.text)")
            #expect(BadgesSystemTests.progress(of: "streak", after) == "7 of 14")
            #expect(try await stack.database.count(
                "SELECT count(*) FROM badges.outbox WHERE type = 'surge.badges.badge.awarded.v1' AND payload->>'badgeID' = 'streak'") == 1)
            #expect(try await stack.database.count(
                "SELECT count(*) FROM notifications.inbox WHERE user_id = \(ana.id) AND kind = 'streak-milestone'") == 1)
            #expect(try await Self.milestones(of: ana).count == 1)
        }
    }
}
