import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import Synchronization

/// Process-wide logging and metrics, bootstrapped once.
public enum Observability {
    private static let bootstrapped = Mutex(false)
    public static let registry = PrometheusCollectorRegistry()

    public static func bootstrap(format: LogFormat, level: Logger.Level) {
        let first = bootstrapped.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                switch format {
                case .json: JSONLogHandler(label: label)
                case .text: StreamLogHandler.standardOutput(label: label)
                }
            handler.logLevel = level
            return handler
        }
        MetricsSystem.bootstrap(HelpfulMetricsFactory(registry: registry))
    }

    /// Prometheus names allow `[a-zA-Z0-9_:]` only: OpenTelemetry's dotted dimension names become underscored.
    static func prometheusName(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" ? $0 : "_" })
    }
}

/// A named check that `/readyz` runs; throwing means not ready.
public struct ReadinessCheck: Sendable {
    public let name: String
    public let check: @Sendable () async throws -> Void

    public init(_ name: String, _ check: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.check = check
    }
}

/// `/healthz` (the process is alive), `/readyz` (its database and broker answer) and `/metrics` (Prometheus).
public struct OperationalRoutes<Context: RequestContext>: Sendable {
    let checks: [ReadinessCheck]
    let timeout: Duration

    public init(checks: [ReadinessCheck], timeout: Duration = .seconds(2)) {
        self.checks = checks
        self.timeout = timeout
    }

    struct ReadinessReport: ResponseEncodable {
        var status: String
        var checks: [String: String]
    }

    public func addRoutes(to router: Router<Context>) {
        router.get("/healthz") { _, _ in
            ["status": "ok"]
        }
        router.get("/readyz") { _, _ -> EditedResponse<ReadinessReport> in
            let results = await runChecks()
            let ready = results.values.allSatisfy { $0 == "ok" }
            return EditedResponse(
                status: ready ? .ok : .serviceUnavailable,
                response: ReadinessReport(status: ready ? "ready" : "not ready", checks: results))
        }
        router.get("/metrics") { _, _ in
            ProcessMetrics.update()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(bytes: Observability.registry.emitToBuffer())))
        }
    }

    private func runChecks() async -> [String: String] {
        let timeout = self.timeout
        return await withTaskGroup(of: (String, String).self) { group in
            for check in checks {
                group.addTask {
                    do {
                        try await withDeadline(timeout) { try await check.check() }
                        return (check.name, "ok")
                    } catch {
                        return (check.name, "\(error)")
                    }
                }
            }
            var results: [String: String] = [:]
            for await (name, result) in group { results[name] = result }
            return results
        }
    }
}

public struct DeadlineExceeded: Error, CustomStringConvertible {
    public var description: String { "timed out" }
}

/// Runs `work`, throwing `DeadlineExceeded` if it takes longer than `timeout`.
public func withDeadline<T: Sendable>(_ timeout: Duration, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await work() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let result = try await group.next(), let value = result else { throw DeadlineExceeded() }
        return value
    }
}
