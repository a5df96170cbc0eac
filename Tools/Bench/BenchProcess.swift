import Foundation

/// The stack's processes as the benchmarks see them: ids from the `<name>.pid` files `scripts/bench.sh` writes,
/// resident memory from /proc, and stopping one.
enum BenchProcess {
    static func pid(inFile path: String) throws -> Int32 {
        guard let pid = Int32(try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchError("no process id in \(path)")
        }
        return pid
    }

    /// Resident set size in KiB (VmRSS of /proc/<pid>/status).
    static func residentKiB(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw BenchError("no VmRSS for process \(pid)") }
        return kib
    }

    /// SIGTERM, then waits until the process is gone (or a zombie its parent has not reaped yet).
    static func stop(_ pid: Int32, name: String) throws {
        kill(pid, SIGTERM)
        for _ in 0..<3000 {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8), !status.contains("State:\tZ") else { return }
            usleep(10_000)
        }
        throw BenchError("\(name) (\(pid)) did not stop in 30 s")
    }
}
