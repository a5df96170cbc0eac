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

extension SettleBench {
    /// The worst of a service's `surge_kafka_consumer_lag_seconds` and `surge_outbox_lag_seconds` gauges, in seconds,
    /// and the series it came from.
    static func worstLag(_ metrics: String) async throws -> (seconds: Double, series: String) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: metrics), timeout: .seconds(10))
        let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
        return text.split(separator: "\n").reduce((0, "")) { worst, line in
            guard line.hasPrefix("surge_kafka_consumer_lag_seconds{") || line.hasPrefix("surge_outbox_lag_seconds{"),
                let value = line.split(separator: " ").last.flatMap({ Double($0) }), value > worst.0
            else { return worst }
            return (value, String(line.split(separator: " ").dropLast().joined(separator: " ")))
        }
    }
}

/// The machine's busy CPU seconds so far, every process together (exited ones included), from the first line of
/// /proc/stat: user + nice + system + irq + softirq. Both sides of a ratio are measured this way.
enum MachineCPU {
    static func busySeconds() throws -> Double {
        let text = try String(contentsOfFile: "/proc/stat", encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { throw BenchError("no cpu line in /proc/stat") }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 7 else { throw BenchError("short cpu line in /proc/stat: \(line)") }
        // user, nice, system, idle, iowait, irq, softirq
        return (ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
