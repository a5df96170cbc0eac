import Foundation
import Hummingbird
import HummingbirdTesting
import SurgeTestSupport
import Testing

@testable import SurgeRuntime

@Suite("Service runtime: process metrics", .tags(.unit), .kind(.unit), .timeLimit(.minutes(1)))
struct ProcessMetricsTests {
    @Test("/proc/self/stat is read past a command name holding spaces and parentheses")
    func parsesStat() throws {
        let line = "4242 (surge (a) b) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 25 0 0 20 0 12 0 3300 812345344 9876 18446744073709551615"
        let stat = try #require(ProcStat(line))
        #expect(stat == ProcStat(userTicks: 150, systemTicks: 25, startTicks: 3300, virtualBytes: 812_345_344, residentPages: 9876))
        #expect(ProcStat("4242 surge S 1") == nil)
        #expect(ProcStat("4242 (surge) S 1 2 3") == nil)
    }

    @Test("/metrics carries the process_* families, with this process's own figures")
    func exported() async throws {
        let router = Router()
        OperationalRoutes<BasicRequestContext>(checks: []).addRoutes(to: router)
        let app = Application(router: router)
        try await app.test(.router) { client in
            let page = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            func value(_ name: String) -> Double? {
                page.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            }
            #expect(page.contains("# HELP process_cpu_seconds_total "))
            #expect(try #require(value("process_cpu_seconds_total")) > 0)
            #expect(try #require(value("process_resident_memory_bytes")) > 1_000_000)
            #expect(try #require(value("process_open_fds")) >= 3)
            #expect(try #require(value("process_max_fds")) >= 64)
            let started = try #require(value("process_start_time_seconds"))
            #expect(abs(started - Date().timeIntervalSince1970) < 24 * 3600)
        }
    }
}
