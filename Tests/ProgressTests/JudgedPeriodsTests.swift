import Foundation
import HummingbirdTesting
import PostgresNIO
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ProgressService

/// Issues 43 and 44: the freeze counter a client sees is the judge's, a freeze is spent only where it saves something,
/// a judged week's days never read as open, a tick of a done task is no check-in, and time off stays inside the dates
/// every service reads.
@Suite("Freezes, the calendar of judged weeks, repeated ticks and time off near 2200", .tags(.integration), .kind(.integration))
struct JudgedPeriodsRouterTests {
    /// 001's Daily Push-ups in small: a weekly streak of five days' worth of the daily goal (20, onboarding skipped),
    /// one freeze a month, judged at local midnight (Rome) and never failing.
    static func seedPushUps(_ routes: ProgressRouterHarness, activityKeepsWeeklyStreak: Bool = true) async throws -> UUID {
        let id = UUID()
        let definition = ChallengeDefinition(
            challengeID: id, version: 1, effectiveFrom: nil, kind: .habit, name: "Push-ups", description: "", category: "fitness",
            difficulty: .beginner, visibility: .public, ownerID: nil, groupID: nil, durationDays: nil, estimatedDailyMinutes: nil,
            tasks: [ChallengeTask(taskID: "push-ups", title: "Push-ups", kind: .quantity, targetFromDailyGoal: 1, unit: "push-ups")],
            rules: ChallengeRules(
                failure: .init(mode: .none),
                streak: .init(period: .week, freezesPerMonth: 1, activityKeepsWeeklyStreak: activityKeepsWeeklyStreak, weeklyGoalDays: 5),
                points: .init(kind: .perTask, pointsPerTask: 5)),
            chore: nil)
        try await routes.storage.transaction { stores in try await stores.projections.saveDefinition(definition) }
        return id
    }

    /// Moves the clock to 10:00 in Rome on `date` and judges every period whose window has closed.
    static func morning(_ date: String, _ routes: ProgressRouterHarness) async throws {
        let day = try #require(LocalDate(date))
        routes.clock.set(LocalCalendar(zoneNamed: "Europe/Rome")!.start(of: day).addingTimeInterval(10 * 3600))
        try await routes.useCases.judging.judgeAllDue(batchSize: 50)
    }

    static func start(_ challengeID: UUID, _ routes: ProgressRouterHarness) async throws -> String {
        let response = try await routes.call(.post, "/v1/attempts", json: #"{"challengeID": "\#(challengeID)"}"#)
        try #require(response.status == .created, "\(String(buffer: response.body))")
        return "/v1/attempts/\(try routes.decode(AttemptResponse.self, response).attempt.attemptID)"
    }

    static func log(_ quantity: Int, _ path: String, _ routes: ProgressRouterHarness, date: String? = nil) async throws -> HummingbirdTesting.TestResponse {
        let datePart = date.map { #", "date": "\#($0)""# } ?? ""
        return try await routes.call(.post, path + "/tasks/push-ups/logs", json: #"{"quantity": \#(quantity)\#(datePart)}"#)
    }

    static func attempt(_ path: String, _ routes: ProgressRouterHarness) async throws -> AttemptView {
        try routes.decode(AttemptResponse.self, try await routes.call(.get, path)).attempt
    }

    static func calendar(_ path: String, month: String, _ routes: ProgressRouterHarness) async throws -> [String: String] {
        let response = try routes.decode(AttemptsController.CalendarResponse.self, try await routes.call(.get, path + "/calendar?month=\(month)"))
        return Dictionary(uniqueKeysWithValues: response.days.map { ($0.date.description, $0.status) })
    }

    @Test("43.1: after a frozen week the counter shows 0 for the rest of the month, and the next month's freeze from its 1st")
    func freezeCounterFollowsTheJudge() async throws {
        try await ProgressRouterHarness.run { routes in
            let pushUps = try await Self.seedPushUps(routes)
            try await Self.morning("2026-11-09", routes)
            let path = try await Self.start(pushUps, routes)
            _ = try await Self.log(100, path, routes)
            try await Self.morning("2026-11-16", routes)
            _ = try await Self.log(40, path, routes)
            try await Self.morning("2026-11-23", routes)
            var attempt = try await Self.attempt(path, routes)
            #expect(attempt.stats.currentStreak == 1 && attempt.stats.freezeActive && attempt.stats.freezesLeft == 0)
            _ = try await Self.log(100, path, routes)
            try await Self.morning("2026-11-30", routes)
            // Tuesday 1 December: the week in progress ends in December, and is judged with December's freeze.
            try await Self.morning("2026-12-01", routes)
            attempt = try await Self.attempt(path, routes)
            #expect(attempt.stats.currentStreak == 2)
            #expect(attempt.stats.freezesLeft == 1, "on the 1st, December's freeze")
            _ = try await Self.log(40, path, routes)
            try await Self.morning("2026-12-07", routes)
            attempt = try await Self.attempt(path, routes)
            #expect(try await Self.calendar(path, month: "2026-12", routes)["2026-12-06"] == "frozen")
            #expect(attempt.stats.currentStreak == 2 && attempt.stats.freezesLeft == 0)
        }
    }

    @Test("43.1: a week below goal with the streak at 0 keeps the month's freeze")
    func noFreezeForNoStreak() async throws {
        try await ProgressRouterHarness.run { routes in
            let pushUps = try await Self.seedPushUps(routes)
            try await Self.morning("2026-11-09", routes)
            let path = try await Self.start(pushUps, routes)
            _ = try await Self.log(40, path, routes)
            try await Self.morning("2026-11-16", routes)
            let attempt = try await Self.attempt(path, routes)
            #expect(try await Self.calendar(path, month: "2026-11", routes)["2026-11-15"] == "kept")
            #expect(attempt.stats.currentStreak == 0 && attempt.stats.freezesLeft == 1 && !attempt.stats.freezeActive)
        }
    }

    @Test("43.3: every day of a judged week shows the week's verdict, also across a month's end; the week in progress is open")
    func judgedWeeksOnTheCalendar() async throws {
        try await ProgressRouterHarness.run { routes in
            let pushUps = try await Self.seedPushUps(routes)
            try await Self.morning("2026-11-09", routes)
            let path = try await Self.start(pushUps, routes)
            _ = try await Self.log(100, path, routes)
            try await Self.morning("2026-11-17", routes)
            var days = try await Self.calendar(path, month: "2026-11", routes)
            #expect(days["2026-11-08"] == "before")
            for day in 10...15 { #expect(days["2026-11-\(day)"] == "completed", "2026-11-\(day)") }
            #expect(days["2026-11-09"] == "completed")
            #expect(days["2026-11-16"] == "open" && days["2026-11-17"] == "open" && days["2026-11-18"] == "future")
            // What the calendar says is what a check-in is told.
            let late = try await Self.log(10, path, routes, date: "2026-11-14")
            #expect(try routes.problem(late, .unprocessableContent).type == ProblemType.checkInWindowClosed.uri)
            #expect(try await Self.log(10, path, routes, date: "2026-11-16").status == .created)

            // The week from Monday 30 November is judged on Sunday 6 December: November's calendar shows its Monday.
            try await Self.morning("2026-11-30", routes)
            _ = try await Self.log(100, path, routes)
            try await Self.morning("2026-12-07", routes)
            days = try await Self.calendar(path, month: "2026-11", routes)
            for day in 16...22 { #expect(days["2026-11-\(day)"] == "frozen", "2026-11-\(day)") }
            for day in 23...29 { #expect(days["2026-11-\(day)"] == "missed", "2026-11-\(day)") }
            #expect(days["2026-11-30"] == "completed")
            #expect(!days.values.contains("open"))
        }
    }

    @Test("44.3: ticking a done task again records no check-in and no event; the next day's tick is a check-in of its own")
    func repeatedTicks() async throws {
        try await ProgressRouterHarness.run { routes in
            let attempt = try await routes.startHabit()
            let path = "/v1/attempts/\(attempt.attemptID)"
            for index in 0..<12 {
                let tick = try await routes.call(.put, path + "/tasks/walk", json: #"{"done": true, "checkInID": "\#(UUID())"}"#)
                #expect(tick.status == .ok, "tick \(index): \(String(buffer: tick.body))")
                let view = try routes.decode(AttemptResponse.self, tick).attempt
                #expect(view.stats.points == 5 && view.today?.tasks.first { $0.taskID == "walk" }?.done == true)
            }
            #expect(try await Self.checkInRows(attempt.attemptID, routes) == 1)
            #expect(try await Self.checkInEvents(routes) == 1)

            routes.clock.set(ProgressRouterHarness.now.addingTimeInterval(86_400))
            _ = try await routes.call(.put, path + "/tasks/walk", json: #"{"done": true}"#)
            #expect(try await Self.checkInRows(attempt.attemptID, routes) == 2)
            #expect(try await Self.checkInEvents(routes) == 2)
            #expect(try routes.decode(PointsSummary.self, try await routes.call(.get, "/v1/me/points")).total == 10)
        }
    }

    @Test("44.4: time off past 2200-12-31 is refused naming days, for a pause and a vacation; up to it is taken")
    func timeOffWithinSupportedDates() async throws {
        try await ProgressRouterHarness.run { routes in
            let attempt = try await routes.startHabit()
            let path = "/v1/attempts/\(attempt.attemptID)"
            for target in [path + "/pause", "/v1/me/vacation"] {
                let refused = try await routes.call(.post, target, json: #"{"from": "2200-12-31", "days": 366}"#)
                let problem = try routes.problem(refused, .unprocessableContent)
                #expect(problem.errors?.map(\.field) == ["days"], "\(target)")
                #expect(problem.errors?.first?.message.contains("2200-12-31") == true, "\(target)")
            }
            #expect(try routes.decode(AttemptResponse.self, try await routes.call(.get, path)).attempt.pauses.isEmpty)
            let taken = try await routes.call(.post, path + "/pause", json: #"{"from": "2200-12-01", "days": 31}"#)
            #expect(try routes.decode(AttemptResponse.self, taken).attempt.pauses.first?.through == LocalDate("2200-12-31"))
        }
    }

    static func checkInRows(_ attemptID: UUID, _ routes: ProgressRouterHarness) async throws -> Int {
        let rows = try await routes.postgres.query("SELECT count(*)::int FROM checkins WHERE attempt_id = \(attemptID)")
        var count = 0
        for try await value in rows.decode(Int.self) { count = value }
        return count
    }

    static func checkInEvents(_ routes: ProgressRouterHarness) async throws -> Int {
        let rows = try await routes.postgres.query("SELECT count(*)::int FROM outbox WHERE type = 'surge.progress.checkin.recorded.v1'")
        var count = 0
        for try await value in rows.decode(Int.self) { count = value }
        return count
    }
}

@Suite("Freezes and time off: the domain rules", .tags(.unit), .kind(.unit))
struct FreezeAndTimeOffRuleTests {
    static func judgeMissedDay(failure: FailureRule) -> (Judgement, AttemptState) {
        let definition = JudgingDefinition(
            challengeID: UUID(), version: 1, effectiveFrom: nil, kind: .habit, name: "D", visibility: .public, ownerID: nil, groupID: nil,
            durationDays: nil, tasks: [ChallengeTask(taskID: "a", title: "A", kind: .checkbox), ChallengeTask(taskID: "b", title: "B", kind: .checkbox)],
            rules: ChallengeRules(failure: failure, streak: .init(freezesPerMonth: 1)))
        let day = LocalDate("2026-11-02")!
        var progress = TaskProgress()
        progress.done = true
        var state = AttemptState()
        let judgement = Judge.judge(
            periodEnding: day, startedOn: day, endOn: nil, state: &state, timeline: DefinitionTimeline([definition])!,
            records: [day: DayRecord(date: day, tasks: ["a": progress])], dailyGoal: 20)
        return (judgement, state)
    }

    @Test("a miss with activity at streak 0 spends no freeze when it costs nothing, and one when it counts toward failing")
    func freezeOnlyWhereItSaves() {
        let (free, freeState) = Self.judgeMissedDay(failure: .init(mode: .none))
        #expect(free.outcome == .missed && freeState.freezesLeft == 1)
        let (counted, countedState) = Self.judgeMissedDay(failure: .init(mode: .tolerant, allowedMissedDays: 0))
        #expect(counted.outcome == .frozen && counted.ended == nil && countedState.freezesLeft == 0)
    }

    @Test("the freezes shown are the judge's for the next period: a new month's from its 1st")
    func freezesForThePeriod() {
        var state = AttemptState()
        state.freezeMonth = "2026-11"
        state.freezesLeft = 0
        #expect(Judge.freezesLeft(state, forPeriodEnding: LocalDate("2026-11-29")!, perMonth: 1) == 0)
        #expect(Judge.freezesLeft(state, forPeriodEnding: LocalDate("2026-12-06")!, perMonth: 1) == 1)
    }

    @Test("a pause the rule sizes ends by 2200-12-31; one asked past it is refused naming days")
    func pausesWithinSupportedDates() throws {
        let definition = JudgingDefinition(
            challengeID: UUID(), version: 1, effectiveFrom: nil, kind: .habit, name: "D", visibility: .public, ownerID: nil, groupID: nil,
            durationDays: nil, tasks: [ChallengeTask(taskID: "a", title: "A", kind: .checkbox)],
            rules: ChallengeRules(failure: .init(mode: .none), pause: PauseRule(mode: .pausesStreak, maxDaysPerPause: 10)))
        let attempt = PausePolicy.Attempt(state: AttemptState(), startedOn: LocalDate("2200-12-01")!, endOn: nil, definition: definition)
        let from = LocalDate("2200-12-28")!
        let now = LocalCalendar(zoneNamed: "UTC")!.start(of: from)
        let sized = try PausePolicy.pause(
            PauseRequest(kind: .pause, from: from, days: nil), attempt: attempt, today: from, now: now, pauseID: UUID(), closes: { _ in .distantFuture })
        #expect(sized.through == LocalDate("2200-12-31"))
        #expect(throws: PauseRefusal.beyondSupportedDates(
            field: "days", message: "would end time off on 2201-01-03, after 2200-12-31, the last date Surge supports")) {
            try PausePolicy.pause(
                PauseRequest(kind: .pause, from: from, days: 7), attempt: attempt, today: from, now: now, pauseID: UUID(), closes: { _ in .distantFuture })
        }
    }
}
