import ArgumentParser
import AsyncHTTPClient
import Foundation
import SurgeContracts

/// The stack as an operator sees it: the time from launching every service at once to every `/readyz` answering 200,
/// and each service's resident memory, idle (just after launch) or loaded (after the other benchmarks).
struct StackBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack", abstract: "Launch → all /readyz 200, and the resident memory of every service.")

    enum Phase: String, ExpressibleByArgument { case idle, loaded }

    @Option(help: "When the services were launched, in seconds since 1970 (`date +%s.%N`); with --url, times launch → ready.")
    var launched: Double?
    @Option(help: "A /readyz URL to wait for (repeat for every service).") var url: [String] = []
    @Option(help: "Directory of <service>.pid files.") var pidDirectory: String
    @Option(help: "idle (right after launch) or loaded (after the load).") var phase: Phase
    @OptionGroup var output: ResultsOption

    static let services = SurgeService.startOrder.map(\.rawValue)

    func run() async throws {
        var figures: [BenchFigure] = []
        if let launched, !url.isEmpty {
            let ready = try await waitUntilReady(since: Date(timeIntervalSince1970: launched))
            print("")
            print(String(format: "Launch of all %d services at once → every /readyz 200: %.2f s (target ≤ 5 s)", url.count, ready))
            figures.append(BenchFigure("stack", "launch → all /readyz 200 (\(url.count) services)", ready, "s", target: "≤ 5 s", met: ready <= 5))
        }
        let limit: Double = phase == .idle ? 40 : 150
        print("")
        print("Resident memory per service, \(phase.rawValue) (target ≤ \(Int(limit)) MiB; PSS shares the Swift runtime among the processes):")
        print("  service          RSS MiB   PSS MiB   peak RSS MiB")
        for service in Self.services {
            guard let pid = try? pid(of: service), let memory = try? CheckInThroughputBench.memory(of: pid) else {
                throw BenchError("surge-\(service) is not running (no live process in \(pidDirectory)/\(service).pid)")
            }
            let peak = CheckInThroughputBench.peakResidentKibibytes(of: pid) ?? 0
            print("  " + service.padding(toLength: 14, withPad: " ", startingAt: 0)
                + String(format: "%9.1f  %8.1f  %13.1f", memory.rss / 1024, memory.pss / 1024, peak / 1024))
            figures.append(BenchFigure(
                "stack", "\(service) RSS, \(phase.rawValue)", memory.rss / 1024, "MiB", target: "≤ \(Int(limit)) MiB", met: memory.rss / 1024 <= limit))
        }
        try output.record(figures)
    }

    /// Seconds from `launch` until every URL answered 200, polling every 10 ms.
    func waitUntilReady(since launch: Date) async throws -> Double {
        var waiting = Set(url)
        let deadline = ContinuousClock.now + .seconds(120)
        while !waiting.isEmpty {
            for candidate in waiting {
                var request = HTTPClientRequest(url: candidate)
                request.method = .GET
                if let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(1)), response.status == .ok {
                    waiting.remove(candidate)
                }
            }
            guard ContinuousClock.now < deadline else { throw BenchError("not ready 120 s after launch: \(waiting.sorted())") }
            if !waiting.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        }
        return Date().timeIntervalSince(launch)
    }

    func pid(of service: String) throws -> Int32 { try BenchProcess.pid(inFile: "\(pidDirectory)/\(service).pid") }
}
