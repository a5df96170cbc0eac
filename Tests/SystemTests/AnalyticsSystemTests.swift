import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// The KPIs as an analyst gets them, from a simulated population driven through the gateway: the projector's figures
/// equal those computed from the simulation's own record, exactly; a rebuild from offset zero gives the same; an
/// opted-out user's later activity is absent. `SURGE_SIM_USERS` and `SURGE_SIM_SEED` change the population.
@Suite("Analytics: a simulated population", .tags(.system), .kind(.system), .serialized)
struct AnalyticsSystemTests {
    static let firstDay = LocalDate("2026-11-02")!
    static let days = 11
    static let handledTypes = [
        UserRegistered.eventType, UserUpgraded.eventType, ProfileChanged.eventType, PreferencesChanged.eventType, UserDeleted.eventType,
        AttemptStarted.eventType, AttemptRestarted.eventType, AttemptEnded.eventType, AttemptPaused.eventType, AttemptResumed.eventType,
        CheckInRecorded.eventType, CheckInUndone.eventType, DayJudged.eventType, StreakChanged.eventType,
    ]

    @Test("the KPIs equal the simulation's ground truth, before and after a rebuild from offset zero")
    func simulatedPopulation() async throws {
        let variables = ProcessInfo.processInfo.environment
        let count = variables["SURGE_SIM_USERS"].flatMap(Int.init) ?? 24
        let seed = variables["SURGE_SIM_SEED"].flatMap(UInt64.init) ?? 2026
        var simulation = AnalyticsSimulation(users: count, seed: seed, firstDay: Self.firstDay, days: Self.days)
        try await withTestStack("analytics") { stack in
            try await stack.start("identity", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("challenges", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "50"])
            try await stack.start("analytics", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("gateway", environment: ["RATE_LIMIT_PER_IP_PER_MINUTE": "100000", "RATE_LIMIT_CREDENTIALS_PER_MINUTE": "100000"])
            let driver = SimulationDriver(stack: stack)
            try await driver.waitForDefinition(Fixtures.seventyFiveHard)

            for instant in simulation.instants {
                try await stack.setClock(instant)
                try await driver.waitForJudgement()
                for day in 0..<Self.days {
                    for slot in AnalyticsSimulation.Slot.allCases {
                        for index in simulation.users.indices {
                            let user = simulation.users[index]
                            guard user.calendar.instant(of: LocalTime(slot.rawValue)!, on: Self.firstDay.adding(days: day)) == instant else { continue }
                            for action in simulation.actions(of: user, day: day, slot: slot) {
                                try await driver.perform(action, user: &simulation.users[index], at: instant)
                            }
                        }
                    }
                }
            }
            try await driver.waitForAnalytics(handling: Self.handledTypes)

            let admin = try await driver.admin()
            let range = "from=\(Self.firstDay)&to=\(simulation.lastDay)"
            let first = try await admin.get("/v1/admin/kpis?\(range)")
            #expect(first.status == 200, "\(first.text)")
            let expected = simulation.expected()
            Self.compare(first.json, with: expected, simulation: simulation)
            print("Analytics simulation (\(count) users, seed \(seed)), totals:", Self.kpis.map { "\($0) \(Self.values(first.json["totals"])[$0]!)" }.joined(separator: ", "))

            // An opted-out user's activity after the opt-out is nowhere.
            let optedOut = try #require(simulation.users[0].id)
            let optedOutAt = try #require(simulation.users[0].optedOutAt)
            for table in ["activity", "check_in_days", "active_days", "streak_breaks"] {
                #expect(
                    try await stack.database.count("SELECT count(*) FROM analytics.\(unescaped: table) WHERE user_id = \(optedOut) AND at >= \(optedOutAt)") == 0,
                    "\(table)")
            }
            #expect(try await stack.database.count("SELECT count(*) FROM analytics.activity WHERE user_id = \(optedOut)") > 0)
            let deleted = try #require(simulation.users[1].id)
            #expect(try await stack.database.count("SELECT count(*) FROM analytics.users WHERE user_id = \(deleted)") == 0)

            // A rebuild from offset zero, with the service running, leaves every figure as it was.
            let rebuild = try await stack.runCommand("analytics", ["rebuild"])
            #expect(rebuild.status == 0, "\(rebuild.output)")
            #expect(rebuild.output.contains("rebuilt the facts of"), "\(rebuild.output)")
            let again = try await admin.get("/v1/admin/kpis?\(range)")
            #expect(again.status == 200)
            Self.compare(again.json, with: expected, simulation: simulation)
            #expect(
                try JSONSerialization.jsonObject(with: Self.withoutGeneratedAt(first.body)) as? NSDictionary
                    == JSONSerialization.jsonObject(with: Self.withoutGeneratedAt(again.body)) as? NSDictionary)

            let csv = try await admin.get("/v1/admin/kpis.csv?\(range)")
            #expect(csv.status == 200)
            #expect(csv.header("content-type")?.hasPrefix("text/csv") == true)
            #expect(csv.text.split(separator: "\n").count == 1 + (Self.days + 1 + 1) * 6)
        }
    }

    static func withoutGeneratedAt(_ body: Data) throws -> Data {
        var json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        json["generatedAt"] = nil
        return try JSONSerialization.data(withJSONObject: json, options: .sortedKeys)
    }

    static let kpis = ["day7Retention", "challengeStartRate", "dailyCheckInRate", "completionRate", "averageStreakBeforeBreak", "restartRate"]

    static func values(_ json: Any?) -> AnalyticsSimulation.Values {
        var values: AnalyticsSimulation.Values = [:]
        for kpi in kpis {
            let value = (json as? [String: Any])?[kpi] as? [String: Any]
            values[kpi] = AnalyticsSimulation.Value(numerator: value?["numerator"] as? Int ?? -1, denominator: value?["denominator"] as? Int ?? -1)
        }
        return values
    }

    static func compare(_ json: [String: Any], with expected: AnalyticsSimulation.Expected, simulation: AnalyticsSimulation) {
        let days = json["days"] as? [[String: Any]] ?? []
        #expect(days.count == simulation.days)
        var measured = 0
        for day in days {
            let date = LocalDate(day["date"] as? String ?? "")!
            let want = expected.days[date] ?? (0, [:])
            #expect(day["registrations"] as? Int == want.registrations, "registrations on \(date)")
            let got = values(day["values"])
            for kpi in kpis {
                let value = want.values[kpi] ?? AnalyticsSimulation.Value()
                #expect(got[kpi] == value, "\(kpi) on \(date): projector \(got[kpi]!), ground truth \(value)")
                measured += value.denominator
            }
        }
        let weeks = json["cohortWeeks"] as? [[String: Any]] ?? []
        #expect(weeks.count == expected.weeks.count)
        for week in weeks {
            let start = LocalDate(week["week"] as? String ?? "")!
            let want = expected.weeks[start] ?? (0, [:])
            #expect(week["users"] as? Int == want.users, "users of cohort week \(start)")
            let got = values(week["values"])
            for kpi in kpis {
                let value = want.values[kpi] ?? AnalyticsSimulation.Value()
                #expect(got[kpi] == value, "\(kpi) of cohort week \(start): projector \(got[kpi]!), ground truth \(value)")
            }
        }
        // The population exercised every KPI.
        for kpi in kpis {
            #expect(expected.days.values.contains { ($0.values[kpi]?.denominator ?? 0) > 0 }, "no \(kpi) was measured: a larger population is needed")
        }
        #expect(measured > 0)
    }
}

/// Performs a simulated user's actions through the gateway, and records them.
struct SimulationDriver {
    let stack: TestStack

    func perform(_ action: AnalyticsSimulation.Action, user: inout AnalyticsSimulation.User, at instant: Date) async throws {
        let today = user.calendar.date(at: instant)
        switch action {
        case .register:
            let response = try await stack.http().post("/v1/auth/guest", json: ["displayName": "Sim \(user.index)", "timeZone": user.zone])
            guard response.status == 201, let token = (response.json["tokens"] as? [String: Any])?["accessToken"] as? String,
                let id = ((response.json["user"] as? [String: Any])?["id"] as? String).flatMap(UUID.init(uuidString:))
            else { throw StageError("guest sign-up failed: \(response.text)") }
            user.id = id
            user.http = try stack.http().authorized(token)
            user.registeredAt = instant
            user.activities.append(instant)
            try await waitUntil("progress knows user \(user.index)") {
                try await stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(id)") == 1
            }
            if user.persona != .ghost && user.persona != .quitter {
                let created = try await http(user).post("/v1/challenges", json: [
                    "kind": "habit", "name": "Walk", "durationDays": AnalyticsSimulation.habitDays,
                    "tasks": [["taskID": "walk", "title": "Walk", "kind": "checkbox"] as [String: any Sendable]],
                    "rules": ["checkInGraceMinutes": 0] as [String: any Sendable],
                ])
                guard let habitID = (created.json["definition"] as? [String: Any])?["challengeID"] as? String else {
                    throw StageError("habit not created: \(created.text)")
                }
                user.habitID = habitID
                try await waitForDefinition(habitID)
            }
        case .startHabit, .startHard:
            let challengeID = action == .startHard ? Fixtures.seventyFiveHard : try unwrap(user.habitID)
            let response = try await http(user).post("/v1/attempts", json: ["challengeID": challengeID])
            guard response.status == 201, let id = (response.json["attempt"] as? [String: Any])?["attemptID"] as? String else {
                throw StageError("user \(user.index) could not start \(challengeID): \(response.text)")
            }
            user.attempts.append(.init(id: id, challengeID: challengeID, strict: action == .startHard, startedOn: today, startedAt: instant))
            user.activities.append(instant)
        case .tick:
            let index = try unwrap(user.attempts.indices.last)
            let response = try await http(user).put("/v1/attempts/\(user.attempts[index].id)/tasks/walk", json: ["done": true])
            guard response.status == 200 else { throw StageError("user \(user.index) could not tick on \(today): \(response.text)") }
            if user.attempts[index].ticks[today] == nil { user.attempts[index].ticks[today] = instant }
            user.activities.append(instant)
        case .restart:
            let index = try unwrap(user.attempts.indices.last)
            let response = try await http(user).post("/v1/attempts/\(user.attempts[index].id)/restart")
            guard response.status == 201, let id = (response.json["attempt"] as? [String: Any])?["attemptID"] as? String else {
                throw StageError("user \(user.index) could not restart: \(response.text)")
            }
            user.attempts[index].restartedAt = instant
            user.attempts.append(.init(id: id, challengeID: user.attempts[index].challengeID, strict: true, startedOn: today, startedAt: instant))
            user.activities.append(instant)
        case .abandon:
            let index = try unwrap(user.attempts.indices.last)
            let response = try await http(user).post("/v1/attempts/\(user.attempts[index].id)/abandon")
            guard response.status == 200 else { throw StageError("user \(user.index) could not abandon: \(response.text)") }
            user.attempts[index].abandonedOn = today
            user.attempts[index].abandonedAt = instant
            user.activities.append(instant)
        case .editProfile:
            let response = try await http(user).patch("/v1/me", json: ["displayName": "Sim \(user.index) again"])
            guard response.status == 200 else { throw StageError("user \(user.index) could not edit the profile: \(response.text)") }
            user.activities.append(instant)
        case .optOut:
            let response = try await http(user).put("/v1/me/preferences", json: ["notificationsEnabled": true, "telemetryOptOut": true])
            guard response.status == 200 else { throw StageError("user \(user.index) could not opt out: \(response.text)") }
            user.optedOutAt = instant
        case .delete:
            let response = try await http(user).send(.DELETE, "/v1/me", body: Data(#"{"confirm": true}"#.utf8))
            guard response.status == 204 else { throw StageError("user \(user.index) could not be deleted: \(response.text)") }
            user.deleted = true
        }
    }

    func http(_ user: AnalyticsSimulation.User) throws -> TestHTTP { try unwrap(user.http) }

    func unwrap<T>(_ value: T?) throws -> T {
        guard let value else { throw StageError("the simulation acted out of order") }
        return value
    }

    func waitForDefinition(_ challengeID: String) async throws {
        let id = UUID(uuidString: challengeID)!
        try await waitUntil("progress knows \(challengeID)") {
            try await stack.database.count("SELECT count(*) FROM progress.definitions WHERE challenge_id = \(id)") >= 1
        }
    }

    /// Two more rounds of the day judge: the second certainly ran at the clock's new time.
    func waitForJudgement() async throws {
        let progress = try stack.process("progress")
        let before = try await MetricsPage.scrape(progress).sum("surge_judgement_rounds_total")
        try await waitUntil("two day-judgement rounds") {
            try await MetricsPage.scrape(progress).sum("surge_judgement_rounds_total") >= before + 2
        }
    }

    /// Until analytics has applied every event of the types it handles that identity and progress wrote.
    func waitForAnalytics(handling types: [String]) async throws {
        try await waitUntil("analytics has every event", timeout: .seconds(120)) {
            let written = try await stack.database.count(
                "SELECT (SELECT count(*) FROM identity.outbox WHERE type = ANY(\(types))) + (SELECT count(*) FROM progress.outbox WHERE type = ANY(\(types)))")
            let applied = try await stack.database.count("SELECT count(*) FROM analytics.processed_events WHERE event_type = ANY(\(types))")
            return applied == written
        }
    }

    /// A client allowed to read the KPIs.
    func admin() async throws -> TestHTTP {
        let response = try await stack.http().post("/v1/auth/guest", json: ["displayName": "Analyst", "timeZone": "UTC"])
        guard let token = (response.json["tokens"] as? [String: Any])?["accessToken"] as? String else { throw StageError("analyst: \(response.text)") }
        return try stack.http().authorized(token)
    }
}
