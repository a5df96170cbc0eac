import Foundation
import PostgresNIO
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Operability: configuration errors, bounded shutdown, calls only from the gateway", .tags(.system), .kind(.system), .serialized)
struct OperabilitySystemTests {
    @Test("a bad setting ends the process with one line naming the variable and status 78, no crash dump")
    func configurationErrors() async throws {
        try await withTestStack("config-errors") { stack in
            let cases: [(service: String, environment: [String: String], variable: String)] = [
                ("gateway", ["RATE_LIMIT_PER_IP_PER_MINUTE": "100000000"], "RATE_LIMIT_PER_IP_PER_MINUTE"),
                ("progress", ["INTERNAL_AUTH_SECRET": ""], "INTERNAL_AUTH_SECRET"),
                ("identity", ["SHUTDOWN_TIMEOUT_SECONDS": "forever"], "SHUTDOWN_TIMEOUT_SECONDS"),
                ("challenges", ["LOG_LEVEL": "loud"], "LOG_LEVEL"),
            ]
            for (index, entry) in cases.enumerated() {
                let instance = "\(entry.service)-bad-\(index)"
                await #expect(throws: ServiceProcessError.self) {
                    try await stack.start(entry.service, instance: instance, environment: entry.environment)
                }
                let process = try stack.process(instance)
                let status = try await eventually("\(instance) to exit") { process.exitStatus }
                #expect(status == 78, "\(instance) exited with \(status)")
                let log = try String(contentsOf: process.logFile, encoding: .utf8)
                let lines = log.split(separator: "\n")
                #expect(lines.count == 1, "\(log)")
                #expect(log.hasPrefix("surge-\(entry.service): configuration: \(entry.variable) "), "\(log)")
                #expect(!log.contains("Fatal error") && !log.contains("backtrace"))
            }
        }
    }

    @Test("an operator's first minutes: a refused database login and a port in use each end the process at once with one line naming the setting; a healthy start logs no warning")
    func startupMistakes() async throws {
        try await withTestStack("startup-mistakes") { stack in
            let healthy = try await stack.start("identity")
            let healthyLog = try String(contentsOf: healthy.logFile, encoding: .utf8)
            #expect(!healthyLog.contains("warning"), "\(healthyLog)")
            #expect(!healthyLog.contains("hasn't been called yet"))

            var wrongPassword = stack.database.configuration(for: "progress")
            wrongPassword.password = "not-the-password"
            let cases: [(service: String, environment: [String: String], line: String)] = [
                ("progress", ["DATABASE_URL": wrongPassword.url],
                 "surge-progress: configuration: DATABASE_URL is refused by PostgreSQL at \(wrongPassword.host):\(wrongPassword.port) for role \(wrongPassword.username)"),
                ("challenges", ["HTTP_PORT": String(try healthy.port)],
                 "surge-challenges: configuration: HTTP_PORT \(try healthy.port) is in use"),
            ]
            for (index, entry) in cases.enumerated() {
                let instance = "\(entry.service)-mistake-\(index)"
                let started = ContinuousClock.now
                await #expect(throws: ServiceProcessError.self) {
                    try await stack.start(entry.service, instance: instance, environment: entry.environment)
                }
                let process = try stack.process(instance)
                let status = try await eventually("\(instance) to exit") { process.exitStatus }
                #expect(ContinuousClock.now - started < .seconds(15), "\(instance) took \(ContinuousClock.now - started) to give up")
                #expect(status == 78, "\(instance) exited with \(status)")
                let log = try String(contentsOf: process.logFile, encoding: .utf8)
                let last = log.split(separator: "\n").last.map(String.init) ?? ""
                #expect(last.hasPrefix(entry.line), "\(log)")
                #expect(!log.contains("not reachable yet") && !log.contains("Fatal error"), "\(log)")
            }
        }
    }

    @Test("SIGTERM ends a healthy service quickly, and one whose broker and database are gone within its shutdown bound")
    func shutdownIsBounded() async throws {
        try await withTestStack("shutdown") { stack in
            let kafka = try #require(stack.kafka)
            try await stack.start("identity")
            try await stack.start("challenges", environment: ["SHUTDOWN_TIMEOUT_SECONDS": "3"])
            try await stack.start("gateway", environment: ["SHUTDOWN_TIMEOUT_SECONDS": "3"])
            let guest = try await stack.http().post("/v1/auth/guest", json: ["displayName": "Sam", "timeZone": "Europe/Rome"])
            #expect(guest.status == 201)

            // Healthy: a graceful shutdown well inside the default bound.
            let identity = try stack.process("identity")
            let healthy = try await timeToExit(identity)
            #expect(healthy < .seconds(10), "identity took \(healthy)")
            #expect(identity.exitStatus == 0)

            // Broker and database gone: still out within the configured 3 s, plus process start-up slack.
            kafka.cluster.setBrokersAvailable(false)
            for service in ["challenges", "gateway"] {
                let role = stack.database.role(for: service)
                try await stack.database.withAdmin { client in
                    try await client.query("ALTER ROLE \(unescaped: role) NOLOGIN", logger: .init(label: "test"))
                    try await client.query(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = \(role)", logger: .init(label: "test"))
                }
            }
            for service in ["challenges", "gateway"] {
                let process = try stack.process(service)
                let took = try await timeToExit(process)
                #expect(took < .seconds(5), "\(service) took \(took) with its dependencies gone")
            }
        }
    }

    /// Sends SIGTERM and measures until the process has exited, failing after 30 s.
    func timeToExit(_ process: ServiceProcess) async throws -> Duration {
        let started = ContinuousClock.now
        await process.stop(signal: SIGTERM, timeout: .seconds(30))
        #expect(!process.isRunning)
        return ContinuousClock.now - started
    }

    @Test("every service refuses a forged caller header; only the gateway's signature carries a caller")
    func forgedCallers() async throws {
        try await withTestStack("forged-caller") { stack in
            let services = SurgeService.allCases.filter { $0 != .gateway }.map(\.rawValue)
            for service in services { try await stack.start(service) }
            try await stack.start("gateway")
            let guest = try await stack.http().post("/v1/auth/guest", json: ["displayName": "Victim", "timeZone": "Europe/Rome"])
            let victim = try #require((guest.json["user"] as? [String: Any])?["id"] as? String)
            for service in services {
                let direct = try stack.http(service)
                for path in ["/internal/export", "/v1/me", "/v1/attempts", "/v1/challenges?limit=1"] {
                    let forged = try await direct.get(path, headers: [("X-Surge-Caller", victim)])
                    #expect(forged.status == 401, "\(service) \(path) answered \(forged.status) to a forged caller")
                    #expect(forged.json["type"] as? String == "https://surge.example/problems/unauthenticated-call")
                    #expect(!forged.text.contains(victim))
                    let stale = try await direct.get(
                        path,
                        headers: [
                            ("X-Surge-Caller", victim), ("X-Request-ID", "r"),
                            ("X-Surge-Signature", "v1;t=\(Int(Date().timeIntervalSince1970) - 3600);sig=AAAA"),
                        ])
                    #expect(stale.status == 401)
                }
                #expect(try await direct.get("/healthz").status == 200)
            }
            // The same export through the gateway's signature works where the service keeps user data.
            for service in SurgeService.exporting.map(\.rawValue) where ["identity", "challenges", "progress"].contains(service) {
                let signed = try await stack.signedHTTP(service, caller: victim).get("/internal/export")
                #expect(signed.status == 200, "\(service): \(signed.text)")
            }
        }
    }
}
