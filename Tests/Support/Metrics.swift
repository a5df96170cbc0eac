import Foundation

/// Reads a service's Prometheus `/metrics` page.
public struct MetricsPage: Sendable {
    public let text: String

    public static func scrape(_ process: ServiceProcess) async throws -> MetricsPage {
        MetricsPage(text: try await TestHTTP(baseURL: try process.baseURL).get("/metrics").text)
    }

    /// What Debian's `promtool check metrics` (the `prometheus` package) says is wrong with the page: empty when it
    /// passes, the reason when promtool is missing.
    public func promtoolProblems() async throws -> String {
        guard let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            return "promtool is not installed (scripts/test.sh installs Debian's prometheus)"
        }
        let (status, said) = try await runProgram(URL(fileURLWithPath: promtool), ["check", "metrics"], input: Data(text.utf8))
        return status == 0 && said.isEmpty ? "" : said.isEmpty ? "exit status \(status)" : said
    }

    /// The sum of every sample of `name` whose labels include all of `labels`.
    public func sum(_ name: String, _ labels: [String: String] = [:]) -> Double {
        text.split(separator: "\n").reduce(0) { total, line in
            guard !line.hasPrefix("#"), line.hasPrefix(name + "{") || line.hasPrefix(name + " ") else { return total }
            let matches = labels.allSatisfy { line.contains("\($0.key)=\"\($0.value)\"") }
            guard matches, let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { return total }
            return total + value
        }
    }
}
