import ArgumentParser
import AsyncHTTPClient
import Foundation

/// Waits until the stack has no work left from what came before: every consumer caught up (`surge_kafka_consumer_lag`
/// 0 on every topic) and every outbox empty (`surge_outbox_pending` 0), read from each service's `/metrics`. Run before
/// each benchmark, so that one's backlog (the check-in load leaves thousands of events to the other consumers) does
/// not take the CPU from the next one's measurement.
struct SettleBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settle", abstract: "Wait until every consumer lag and outbox backlog of the stack is zero.")

    @Option(help: "A service's /metrics URL (repeat for every service).") var url: [String]
    @Option(help: "Seconds to wait at most.") var timeout = 900

    func run() async throws {
        let took = try await Self.settle(url, timeout: .seconds(timeout))
        print(String(format: "Settled (every consumer lag and outbox at 0) after %.1f s", milliseconds(took) / 1000))
    }

    /// Polls the metrics every 500 ms until the backlog is 0; returns how long that took.
    static func settle(_ urls: [String], timeout: Duration) async throws -> Duration {
        let started = ContinuousClock.now
        var busy: [String] = []
        repeat {
            busy = []
            for metrics in urls {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: metrics), timeout: .seconds(10))
                let pending = backlog(inMetrics: String(buffer: try await response.body.collect(upTo: 16 << 20)))
                if pending > 0 { busy.append("\(metrics): \(Int(pending))") }
            }
            if busy.isEmpty { return ContinuousClock.now - started }
            try await Task.sleep(for: .milliseconds(500))
        } while ContinuousClock.now - started < timeout
        throw BenchError("the stack did not settle in \(timeout): \(busy.joined(separator: ", "))")
    }

    /// The sum of the consumer lag and outbox gauges in a Prometheus text exposition.
    static func backlog(inMetrics text: String) -> Double {
        text.split(separator: "\n").reduce(0) { sum, line in
            guard line.hasPrefix("surge_kafka_consumer_lag{") || line.hasPrefix("surge_outbox_pending{"),
                let value = line.split(separator: " ").last.flatMap({ Double($0) })
            else { return sum }
            return sum + value
        }
    }
}
