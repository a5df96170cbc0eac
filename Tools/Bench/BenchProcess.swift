import Foundation

/// The stack's processes as the benchmarks see them: ids from the `<name>.pid` files `scripts/bench.sh` writes,
/// resident memory and CPU from /proc, stopping one, and running a tool to its end.
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

    /// The parent and the CPU seconds of a process, from /proc/<pid>/stat.
    static func stat(of pid: Int32) -> (parent: Int32, cpu: Double)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = text.lastIndex(of: ")") else { return nil }
        // After the command's closing parenthesis: state, ppid, …, utime (14th field of the line), stime (15th).
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let parent = Int32(fields[1]), let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (parent, (user + system) / Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// CPU seconds so far of each named process of `pidDirectory` (its `<name>.pid`) that is running.
    static func cpuSeconds(of names: [String], pidDirectory: String) -> [String: Double] {
        var seconds: [String: Double] = [:]
        for name in names {
            if let pid = try? pid(inFile: "\(pidDirectory)/\(name).pid"), let stat = stat(of: pid) { seconds[name] = stat.cpu }
        }
        return seconds
    }

    /// CPU seconds so far of the PostgreSQL server of `pgdata` (its `postmaster.pid`) with every backend still running.
    static func postgresCPUSeconds(pgdata: String) throws -> Double {
        let postmasterFile = try String(contentsOfFile: pgdata + "/postmaster.pid", encoding: .utf8)
        guard let postmaster = postmasterFile.split(separator: "\n").first.flatMap({ Int32($0) }) else {
            throw BenchError("no process id in \(pgdata)/postmaster.pid")
        }
        var seconds = 0.0
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = Int32(entry), let stat = stat(of: pid), pid == postmaster || stat.parent == postmaster else { continue }
            seconds += stat.cpu
        }
        return seconds
    }

    /// Runs a tool to its end and returns its standard output (with its standard error when `includingErrors`); a
    /// non-zero exit is an error carrying what it printed.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], includingErrors: Bool = false
    ) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let output = Pipe()
        process.standardOutput = output
        if includingErrors { process.standardError = output }
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw BenchError("\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(text)")
        }
        return text
    }
}
