import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

/// What an operator's monitoring sees: a real Prometheus (Debian's) scraping every service of a running stack, and
/// the provisioned Grafana dashboard's queries run against it.
@Suite("Observability: Prometheus scrapes the stack", .tags(.system), .kind(.system), .serialized)
struct ObservabilitySystemTests {
    static let dashboard = TestEnvironment.repositoryRoot.appendingPathComponent("deploy/observability/grafana/dashboards/surge.json")

    /// Every PromQL expression in a Grafana dashboard, with Grafana's interval variables made concrete.
    static func expressions(inDashboard url: URL) throws -> [String] {
        func collect(_ value: Any) -> [String] {
            if let object = value as? [String: Any] {
                let own = (object["expr"] as? String).map { [$0] } ?? []
                return own + object.keys.sorted().flatMap { $0 == "expr" ? [] : collect(object[$0]!) }
            }
            if let array = value as? [Any] { return array.flatMap(collect) }
            return []
        }
        let document = try JSONSerialization.jsonObject(with: try Data(contentsOf: url))
        return collect(document).map {
            $0.replacingOccurrences(of: "$__rate_interval", with: "1m").replacingOccurrences(of: "$__interval", with: "1m")
                .replacingOccurrences(of: "$__range", with: "5m")
        }
    }

    @Test("every service is scraped with no target down and passes promtool check metrics; the check-in counter reads the check-ins made; every dashboard query runs")
    func scrapeTheStack() async throws {
        try await withTestStack("observability") { stack in
            let services = SurgeService.deployed.filter { $0 != .gateway } + [.gateway]
            for service in services { try await stack.start(service.rawValue) }
            let targets = try services.map { PrometheusServer.Target(service: $0.rawValue, address: "127.0.0.1:\(try stack.process($0.rawValue).port)") }
            let prometheus = try await PrometheusServer.start(scraping: targets, in: stack.logDirectory.appendingPathComponent("prometheus"))
            defer { prometheus.stop() }

            let health = try await eventually("every target up", timeout: .seconds(30)) { () -> [String: String]? in
                let health = try await prometheus.targetHealth()
                return health.count == services.count && health.values.allSatisfy({ $0 == "up" }) ? health : nil
            }
            #expect(Set(health.keys) == Set(services.map(\.rawValue)))

            // Two people log push-ups through the gateway: seven check-ins, one of them sent twice (the same id).
            let stage = ProgressStage(stack: stack)
            try await stage.waitForDefinition(Fixtures.dailyPushUps)
            var made = 0
            for (name, logs) in [("Ana", 3), ("Ben", 4)] {
                let user = try await stage.user(name, timeZone: "Europe/Lisbon")
                let attempt = try await user.http.post("/v1/attempts", json: ["challengeID": Fixtures.dailyPushUps])
                let attemptID = try #require((attempt.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(attempt.text)")
                for index in 0..<logs {
                    let body: [String: any Sendable] = ["quantity": 10 + index, "checkInID": UUID().uuidString]
                    #expect(try await user.http.post("/v1/attempts/\(attemptID)/tasks/push-ups/logs", json: body).status == 201)
                    made += 1
                    if index == 0 { #expect(try await user.http.post("/v1/attempts/\(attemptID)/tasks/push-ups/logs", json: body).status == 201) }
                }
            }
            let counted = try await eventually("Prometheus counts \(made) check-ins", timeout: .seconds(30)) { () -> Double? in
                let result = try await prometheus.query(#"sum(surge_checkins_total{job="surge",service="progress"})"#)
                return result.values.first == Double(made) ? result.values.first : nil
            }
            #expect(counted == Double(made))
            let logged = try await prometheus.query(#"sum(surge_checkins_total{action="logged"})"#)
            #expect(logged.values == [Double(made)])

            // Every service's page passes Prometheus's own linter: a HELP line on every family, `_total` on counters, units.
            for service in services {
                let problems = try await MetricsPage.scrape(try stack.process(service.rawValue)).promtoolProblems()
                #expect(problems.isEmpty, "promtool check metrics on \(service.rawValue)'s /metrics: \(problems)")
            }

            // Which build runs where: one surge_build_info series per service, at 1.
            let builds = try await prometheus.query(#"count(surge_build_info{version!="",commit!=""} == 1)"#)
            #expect(builds.values == [Double(services.count)], "surge_build_info: \(builds.values)")

            // The provisioned dashboard asks only what Prometheus can answer about this stack.
            let expressions = try Self.expressions(inDashboard: Self.dashboard)
            #expect(expressions.count >= 6, "the dashboard has \(expressions.count) queries")
            for expression in expressions {
                #expect(!expression.contains("$"), "a template variable the test cannot fill in: \(expression)")
                let result = try await prometheus.query(expression)
                #expect(result.status == "success", "\(expression): \(result.error ?? "?")")
            }
            // Every panel has series once its counters have two samples (rates need two), the 5xx panel apart: this
            // stack answered none. Counters start at zero, so most panels have series from the first scrapes on.
            var unanswered: [String] = []
            do {
                _ = try await eventually("every dashboard query but the 5xx one returns series", timeout: .seconds(30), every: .seconds(1)) { () -> Bool? in
                    unanswered = []
                    for expression in expressions where !expression.contains("5..") {
                        if try await prometheus.query(expression).values.isEmpty { unanswered.append(expression) }
                    }
                    return unanswered.isEmpty ? true : nil
                }
            } catch {
                Issue.record("dashboard queries with no series: \(unanswered)")
            }
        }
    }
}
