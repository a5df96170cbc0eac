import Foundation

/// Closed-loop HTTP load on one URL with `wrk` (`threads` threads, `connections` connections, one request in flight on
/// each) and fixed headers, plus a header whose value changes with every request when one is given: a 2 s warm-up
/// run, then the measured run with the machine's busy CPU (/proc/stat) read around it.
///
/// A service accepts each signature once (`InternalCallSigner`'s replay window), so a signed call's header is made
/// afresh for every request: the values are written to a file before the run and the Lua script reads one line per
/// request. Every run builds each request in Lua, so wrk's own work per request is about the same on every path.
struct HTTPLoad {
    var connections: Int
    var seconds: Int
    var threads = 1
    /// Varying values written per second of a run: above any rate the stack reaches on these cores.
    var valuesPerSecond = 60_000

    /// A header with a new value for every request (a fresh signature), or the same value read the same way.
    struct VaryingHeader {
        var name: String
        var value: () -> String
    }

    /// `processes` reads named processes' CPU seconds so far; their share of the measured run is in `processCPUSeconds`.
    func run(
        _ url: String, headers: [String: String] = [:], varying: VaryingHeader? = nil, processes: () -> [String: Double] = { [:] }
    ) throws -> LoadRun {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("surge-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func script(seconds: Int, name: String) throws -> String {
            let script = directory.appendingPathComponent("\(name).lua")
            var lua = headers.map { "wrk.headers[\"\($0.key)\"] = \"\($0.value)\"\n" }.joined()
            if let varying {
                let values = directory.appendingPathComponent("\(name).values")
                var text = ""
                text.reserveCapacity(seconds * valuesPerSecond * 64)
                for _ in 0..<(seconds * valuesPerSecond) {
                    text += varying.value()
                    text += "\n"
                }
                try text.write(to: values, atomically: false, encoding: .utf8)
                lua += """
                    local values = io.open("\(values.path)")
                    request = function()
                      wrk.headers["\(varying.name)"] = values:read("*l")
                      return wrk.format()
                    end

                    """
            } else {
                lua += "request = function() return wrk.format() end\n"
            }
            lua += """
                done = function(summary, latency, requests)
                  local e = summary.errors
                  io.write(string.format("SURGE-RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration,
                    latency:percentile(50.0), latency:percentile(99.0), e.status, e.connect + e.read + e.write + e.timeout))
                end

                """
            try lua.write(to: script, atomically: true, encoding: .utf8)
            return script.path
        }
        let common = ["-t\(threads)", "-c\(connections)"]
        _ = try BenchProcess.run("/usr/bin/wrk", common + ["-d2s", "-s", try script(seconds: 2, name: "warm-up"), url])
        let measured = try script(seconds: seconds, name: "measured")
        let processesBefore = processes()
        let cpuBefore = try MachineCPU.busySeconds()
        let output = try BenchProcess.run("/usr/bin/wrk", common + ["-d\(seconds)s", "-s", measured, url])
        let cpu = try MachineCPU.busySeconds() - cpuBefore
        let processCPU = processes().compactMapValues { after in after }.reduce(into: [String: Double]()) { split, entry in
            split[entry.key] = entry.value - (processesBefore[entry.key] ?? 0)
        }
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("SURGE-RESULT") }) else {
            throw BenchError("wrk printed no result: \(output)")
        }
        let numbers = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard numbers.count == 6 else { throw BenchError("wrk: \(line)") }
        return LoadRun(
            requests: Int(numbers[0]), requestsPerSecond: numbers[0] / (numbers[1] / 1e6), p50: numbers[2] / 1000, p99: numbers[3] / 1000,
            failures: Int(numbers[4] + numbers[5]), machineCPUSeconds: cpu, processCPUSeconds: processCPU)
    }
}

/// What one closed-loop load run measured (latencies in milliseconds).
struct LoadRun {
    var requests: Int
    var requestsPerSecond: Double
    var p50: Double
    var p99: Double
    var failures: Int
    /// The whole machine's busy CPU seconds during the run, when measured.
    var machineCPUSeconds: Double?
    /// Named processes' CPU seconds during the run, when asked for.
    var processCPUSeconds: [String: Double] = [:]

    /// Machine CPU seconds per request.
    var cpuPerRequest: Double? { machineCPUSeconds.map { $0 / Double(max(requests, 1)) } }
}
