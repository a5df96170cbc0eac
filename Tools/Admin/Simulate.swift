import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOFoundationCompat
import SurgeCalendar
import SurgeContracts
import SurgeSimulation

struct Simulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Drive a simulated population through the gateway and check the analytics KPIs against its own ground truth.",
        discussion: """
            Needs a stack started with SIMULATED_CLOCK=true (`SIMULATED_CLOCK=true JUDGEMENT_INTERVAL_MS=200 make run`: the
            judge runs every 5 s by default, and the simulation waits for it after each local midnight) and an admin account
            (`surge-admin grant-admin --email ...`). N users in Rome, New York and Tokyo register over the first three
            days and behave as docs/analytics.md describes (some never start, some finish, some start late and miss a
            day, some fail 75 Hard and restart, some abandon; one opts out of telemetry, one deletes the account), while
            every service's clock moves through the simulated days together. Then it reads GET /v1/admin/kpis for those
            days, prints the totals, and fails naming every figure that differs from the simulation's own record.
            The simulated days start on the Monday two weeks after the stack's clock, so other data does not overlap.
            """)

    @Option(help: "Simulated users.") var users = 40
    @Option(help: "Simulated days (at least 10, so that day 7 of every cohort is measured).") var days = 11
    @Option(help: "Seed of the population: the same seed, the same people.") var seed: UInt64 = 1
    @Option(help: "Where each service listens: {service} and {port} are filled in from the registry.") var urlTemplate = "http://127.0.0.1:{port}"
    @Option(help: "An admin account's e-mail (it reads the KPIs).") var adminEmail: String
    @Option(help: "That account's password.") var adminPassword: String

    func validate() throws {
        guard days >= 10 else { throw ValidationError("--days must be at least 10") }
        guard (1...100_000).contains(users) else { throw ValidationError("--users must be between 1 and 100000") }
    }

    func run() async throws {
        let backend = HTTPSimulationBackend(urlTemplate: urlTemplate)
        let today = LocalCalendar.utc.date(at: try await backend.clock())
        var simulation = PopulationSimulation(users: users, seed: seed, firstDay: today.startOfWeek.adding(days: 14), days: days)
        print("simulating \(users) users over \(days) days from \(simulation.firstDay) (seed \(seed))")
        try await simulation.run(on: backend)

        let signIn = try await backend.send("POST", "/v1/auth/sign-in", token: nil, json: ["email": adminEmail, "password": adminPassword])
        guard let token = (signIn.json["tokens"] as? [String: Any])?["accessToken"] as? String else {
            throw ValidationError("the admin could not sign in: \(signIn.text)")
        }
        let path = "/v1/admin/kpis?from=\(simulation.firstDay)&to=\(simulation.lastDay)"
        // Analytics consumes the topics on its own: wait until it has caught up (or a minute has passed).
        var mismatches: [String] = []
        var report: [String: Any] = [:]
        for _ in 0..<120 {
            let response = try await backend.send("GET", path, token: token, json: nil)
            guard response.status == 200 else { throw ValidationError("GET \(path) answered \(response.status): \(response.text)") }
            report = response.json
            mismatches = simulation.mismatches(in: report)
            if mismatches.isEmpty { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        print(PopulationSimulation.summary(of: report))
        let unmeasured = simulation.unmeasured()
        if !unmeasured.isEmpty { print("not exercised by this population (use more users): \(unmeasured.joined(separator: ", "))") }
        guard mismatches.isEmpty else {
            for mismatch in mismatches { print("MISMATCH \(mismatch)") }
            throw ExitCode(1)
        }
        print("the KPIs equal the simulation's ground truth (per day and per cohort week)")
    }
}

/// A running stack over HTTP: the gateway for the users, each service's `/internal/clock`, progress's metrics.
struct HTTPSimulationBackend: SimulationBackend {
    let urlTemplate: String

    func url(_ service: SurgeService) -> String {
        urlTemplate.replacingOccurrences(of: "{service}", with: service.rawValue).replacingOccurrences(of: "{port}", with: String(service.entry.port))
    }

    func send(_ method: String, _ path: String, token: String?, json: [String: any Sendable]?) async throws -> SimulationResponse {
        // Progress answers `catching-up` (503) for a user or a definition it has not learnt yet, and the gateway
        // throttles sign-ups (429, Retry-After): ask again.
        for _ in 0..<120 {
            let (response, retryAfter) = try await requestWithRetryAfter(method, url(.gateway) + path, token: token, json: json)
            switch response.status {
            case 429: try await Task.sleep(for: .seconds(retryAfter ?? 1))
            case 503 where response.text.contains("catching-up"): try await Task.sleep(for: .milliseconds(500))
            default: return response
            }
        }
        throw ValidationError("\(method) \(path) still throttled or catching up after 120 tries")
    }

    func request(_ method: String, _ url: String, token: String? = nil, json: [String: any Sendable]? = nil) async throws -> SimulationResponse {
        try await requestWithRetryAfter(method, url, token: token, json: json).response
    }

    func requestWithRetryAfter(_ method: String, _ url: String, token: String?, json: [String: any Sendable]?) async throws
        -> (response: SimulationResponse, retryAfter: Int?)
    {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        if let token { request.headers.add(name: "authorization", value: "Bearer \(token)") }
        if let json {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(try JSONSerialization.data(withJSONObject: json))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = Data(buffer: try await response.body.collect(upTo: 16 << 20))
        return (SimulationResponse(status: Int(response.status.code), body: body), response.headers.first(name: "retry-after").flatMap { Int($0) })
    }

    func clock() async throws -> Date {
        let response = try await request("GET", url(.identity) + "/internal/clock")
        guard response.status == 200, let text = response.json["now"] as? String, let now = Timestamp.parse(text) else {
            throw ValidationError("identity has no simulated clock: start the stack with SIMULATED_CLOCK=true")
        }
        return now
    }

    func setClock(_ instant: Date, dayClosed: Bool) async throws {
        let before = try await judgementRounds()
        for service in SurgeService.deployed where service != .gateway {
            let response = try await request("PUT", url(service) + "/internal/clock", json: ["now": Timestamp.format(instant)])
            guard response.status == 200 || response.status == 404 else { throw ValidationError("\(service.rawValue) refused the clock: \(response.text)") }
        }
        guard dayClosed else { return }
        // Two more rounds of the day judge: the second certainly ran at the new time.
        let deadline = ContinuousClock.now + .seconds(30)
        while try await judgementRounds() < before + 2 {
            guard ContinuousClock.now < deadline else { throw ValidationError("the day judge did not run within 30 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func judgementRounds() async throws -> Double {
        let page = try await request("GET", url(.progress) + "/metrics").text
        return page.split(separator: "\n").filter { $0.hasPrefix("surge_judgement_rounds_total") }.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            .reduce(0, +)
    }

    func waitForUser(_ userID: UUID) async throws {}
    func waitForDefinition(_ challengeID: String) async throws {}
}
