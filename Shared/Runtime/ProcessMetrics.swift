import Foundation
import Prometheus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `process_*` metrics Prometheus's own client libraries export, read from `/proc/self` when `/metrics` is
/// scraped: CPU seconds, resident and virtual memory, open and allowed file descriptors, start time. swift-prometheus
/// has no process collector; on a system without `/proc` these stay absent.
enum ProcessMetrics {
    private static let cpu = Observability.registry.makeCounter(
        descriptor: .init(metricName: "process_cpu_seconds_total", unitName: "", helpText: "User and system CPU time spent, in seconds."))
    private static let resident = Observability.registry.makeGauge(
        descriptor: .init(metricName: "process_resident_memory_bytes", unitName: "", helpText: "Resident memory size, in bytes."))
    private static let virtual = Observability.registry.makeGauge(
        descriptor: .init(metricName: "process_virtual_memory_bytes", unitName: "", helpText: "Virtual memory size, in bytes."))
    private static let openFDs = Observability.registry.makeGauge(
        descriptor: .init(metricName: "process_open_fds", unitName: "", helpText: "Open file descriptors."))
    private static let maxFDs = Observability.registry.makeGauge(
        descriptor: .init(metricName: "process_max_fds", unitName: "", helpText: "The most file descriptors the process may open."))
    private static let startTime = Observability.registry.makeGauge(
        descriptor: .init(
            metricName: "process_start_time_seconds", unitName: "", helpText: "When the process started, in seconds since the Unix epoch."))
    /// The CPU seconds already added to the counter, which only counts up.
    private static let counted = Mutex(0.0)

    /// Reads `/proc/self` into the gauges and the CPU counter.
    static func update() {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let fields = ProcStat(stat)
        else { return }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let seconds = Double(fields.userTicks + fields.systemTicks) / ticks
        let delta = counted.withLock { counted -> Double in
            defer { counted = max(counted, seconds) }
            return max(0, seconds - counted)
        }
        if delta > 0 { cpu.increment(by: delta) }
        resident.set(Double(fields.residentPages * sysconf(Int32(_SC_PAGESIZE))))
        virtual.set(Double(fields.virtualBytes))
        if let boot = bootTime() { startTime.set(boot + Double(fields.startTicks) / ticks) }
        if let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") { openFDs.set(Double(descriptors.count)) }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { maxFDs.set(Double(limit.rlim_cur)) }
    }

    /// The machine's boot time (`btime` in `/proc/stat`), in seconds since the Unix epoch.
    private static func bootTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count))
        }
        return nil
    }
}

/// The fields of `/proc/self/stat` used here (proc(5)); the command name, in parentheses, may itself hold spaces.
struct ProcStat: Equatable {
    var userTicks: Int
    var systemTicks: Int
    var startTicks: Int
    var virtualBytes: Int
    var residentPages: Int
}

extension ProcStat {
    init?(_ text: String) {
        guard let close = text.lastIndex(of: ")") else { return nil }
        // After the command: state (field 3) onwards, so field n is at index n - 3.
        let fields = text[text.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> Int? { fields.count > number - 3 ? Int(fields[number - 3]) : nil }
        guard let user = field(14), let system = field(15), let start = field(22), let virtual = field(23), let resident = field(24) else {
            return nil
        }
        (userTicks, systemTicks, startTicks, virtualBytes, residentPages) = (user, system, start, virtual, resident)
    }
}
