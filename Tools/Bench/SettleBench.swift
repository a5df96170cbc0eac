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
        let started = ContinuousClock.now
        let deadline = started + .seconds(timeout)
        var busy: [String] = []
        repeat {
            busy = []
            for metrics in url {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: metrics), timeout: .seconds(10))
                let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
                let pending = Self.backlog(inMetrics: text)
                if pending > 0 { busy.append("\(metrics): \(Int(pending))") }
            }
            if busy.isEmpty { break }
            try await Task.sleep(for: .milliseconds(500))
        } while ContinuousClock.now < deadline
        guard busy.isEmpty else { throw BenchError("the stack did not settle in \(timeout) s: \(busy.joined(separator: ", "))") }
        print(String(format: "Settled (every consumer lag and outbox at 0) after %.1f s", milliseconds(ContinuousClock.now - started) / 1000))
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
