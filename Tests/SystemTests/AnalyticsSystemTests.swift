import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeSimulation
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
        var simulation = PopulationSimulation(users: count, seed: seed, firstDay: Self.firstDay, days: Self.days)
        try await withTestStack("analytics") { stack in
            try await stack.start("identity", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("challenges", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "50"])
            try await stack.start("analytics", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("gateway", environment: ["RATE_LIMIT_PER_IP_PER_MINUTE": "100000", "RATE_LIMIT_CREDENTIALS_PER_MINUTE": "100000"])
            let backend = StackBackend(stack: stack)
            try await simulation.run(on: backend)
            try await backend.waitForAnalytics(handling: Self.handledTypes)

            let admin = try await backend.admin()
            let range = "from=\(Self.firstDay)&to=\(simulation.lastDay)"
            let first = try await admin.get("/v1/admin/kpis?\(range)")
            #expect(first.status == 200, "\(first.text)")
            #expect(simulation.mismatches(in: first.json) == [])
            #expect(simulation.unmeasured() == [], "a larger population is needed")
            print("Analytics simulation (\(count) users, seed \(seed)), totals:\n" + PopulationSimulation.summary(of: first.json))

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
            #expect(simulation.mismatches(in: again.json) == [])
            #expect(
                try JSONSerialization.jsonObject(with: Self.withoutGeneratedAt(first.body)) as? NSDictionary
                    == JSONSerialization.jsonObject(with: Self.withoutGeneratedAt(again.body)) as? NSDictionary)

            try await Self.checkDashboard(stack: stack, from: Self.firstDay, to: simulation.lastDay)

            let csv = try await admin.get("/v1/admin/kpis.csv?\(range)")
            #expect(csv.status == 200)
            #expect(csv.header("content-type")?.hasPrefix("text/csv") == true)
            #expect(csv.text.split(separator: "\n").count == 1 + (Self.days + 1 + 1) * 6)
        }
    }

    /// The dashboard in headless Chromium (`scripts/check-kpi-dashboard-in-browser.py`): signed in as the analyst, every KPI's chart
    /// drawn with data points; the screenshot is left in `$SURGE_TEST_ARTIFACTS/dashboard.png`.
    static func checkDashboard(stack: TestStack, from: LocalDate, to: LocalDate) async throws {
        let variables = ProcessInfo.processInfo.environment
        guard let python = variables["SURGE_TEST_BROWSER_PYTHON"], let artifacts = variables["SURGE_TEST_ARTIFACTS"] else {
            Issue.record("the dashboard check needs scripts/test.sh (it installs chromium and selenium)")
            return
        }
        let (status, output) = try await runProgram(
            URL(fileURLWithPath: python),
            [
                TestEnvironment.repositoryRoot.appendingPathComponent("scripts/check-kpi-dashboard-in-browser.py").path, try stack.process("gateway").baseURL,
                SimulationAnalyst.email, SimulationAnalyst.password, from.description, to.description, artifacts + "/dashboard.png",
            ])
        #expect(status == 0, "dashboard check: \(output)")
        #expect(FileManager.default.fileExists(atPath: artifacts + "/dashboard.png"))
    }

    static func withoutGeneratedAt(_ body: Data) throws -> Data {
        var json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        json["generatedAt"] = nil
        return try JSONSerialization.data(withJSONObject: json, options: .sortedKeys)
    }
}

enum SimulationAnalyst {
    static let email = "analyst@example.com"
    static let password = "seven kpis before breakfast"
}

/// The simulation's view of a test stack: the gateway, the clock of every service, and the database to wait on.
struct StackBackend: SimulationBackend {
    let stack: TestStack

    func send(_ method: String, _ path: String, token: String?, json: [String: any Sendable]?) async throws -> SimulationResponse {
        let http = try token.map { try stack.http().authorized($0) } ?? stack.http()
        let response = try await http.send(.init(rawValue: method), path, body: try json.map { try JSONSerialization.data(withJSONObject: $0) })
        return SimulationResponse(status: response.status, body: response.body)
    }

    func setClock(_ instant: Date, dayClosed: Bool) async throws {
        try await stack.setClock(instant)
        guard dayClosed else { return }
        // Two more rounds of the day judge: the second certainly ran at the clock's new time.
        let progress = try stack.process("progress")
        let before = try await MetricsPage.scrape(progress).sum("surge_judgement_rounds_total")
        try await waitUntil("two day-judgement rounds") {
            try await MetricsPage.scrape(progress).sum("surge_judgement_rounds_total") >= before + 2
        }
    }

    func waitForUser(_ userID: UUID) async throws {
        try await waitUntil("progress knows \(userID)") {
            try await stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(userID)") == 1
        }
    }

    func waitForDefinition(_ challengeID: String) async throws {
        let id = UUID(uuidString: challengeID)!
        try await waitUntil("progress knows \(challengeID)") {
            try await stack.database.count("SELECT count(*) FROM progress.definitions WHERE challenge_id = \(id)") >= 1
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

    /// A client allowed to read the KPIs: a password account made an admin by `surge-admin grant-admin`. Until then
    /// (and for a guest) the KPI routes do not exist.
    func admin() async throws -> TestHTTP {
        let email = SimulationAnalyst.email
        let credentials: [String: any Sendable] = ["email": email, "password": SimulationAnalyst.password]
        let registered = try await stack.http().post(
            "/v1/auth/register", json: credentials.merging(["displayName": "Analyst", "timeZone": "UTC"]) { first, _ in first })
        guard let token = (registered.json["tokens"] as? [String: Any])?["accessToken"] as? String else { throw StageError("analyst: \(registered.text)") }
        let notYet = try await stack.http().authorized(token).get("/v1/admin/kpis")
        #expect(notYet.status == 404 && notYet.json["type"] as? String == "https://surge.example/problems/not-found", "\(notYet.text)")
        #expect(try await stack.http().get("/v1/admin/kpis.csv").status == 404)
        let granted = try await runSurgeAdmin(["grant-admin", "--email", email, "--database", stack.database.name])
        #expect(granted.status == 0, "\(granted.output)")
        let signedIn = try await stack.http().post("/v1/auth/sign-in", json: credentials)
        guard let adminToken = (signedIn.json["tokens"] as? [String: Any])?["accessToken"] as? String else { throw StageError("sign-in: \(signedIn.text)") }
        return try stack.http().authorized(adminToken)
    }
}
