import ArgumentParser
import Foundation
import SurgeContracts

/// One figure of a benchmark run: its value, the yardstick measured beside it in the same run, and the target.
struct BenchFigure: Codable, Sendable {
    var bench: String
    var name: String
    var value: Double
    var unit: String
    var yardstick: Yardstick?
    /// `value` against the yardstick, the way the target states it (e.g. check-ins/s ÷ pgbench tps, p99 ÷ Redis p99).
    var ratio: Double?
    var target: String?
    /// Whether the target is met; nil when the figure has no target.
    var met: Bool?

    struct Yardstick: Codable, Sendable {
        var name: String
        var value: Double
    }

    init(
        _ bench: String, _ name: String, _ value: Double, _ unit: String, yardstick: Yardstick? = nil, ratio: Double? = nil, target: String? = nil,
        met: Bool? = nil
    ) {
        (self.bench, self.name, self.value, self.unit, self.yardstick, self.ratio, self.target, self.met) = (bench, name, value, unit, yardstick, ratio, target, met)
    }
}

/// The JSON file of one run (`make bench` writes `bench-results/<UTC time>.json`): the machine and commit it ran on,
/// then every benchmark's figures in the order they were measured.
struct BenchRun: Codable, Sendable {
    var started: Date
    var commit: String?
    var configuration: String?
    var host: String
    var cores: Int
    var figures: [BenchFigure]

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    static func read(_ path: String) throws -> BenchRun {
        try decoder.decode(BenchRun.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

/// `--results FILE` on every benchmark: its figures are added to that run's JSON file (created on first use).
struct ResultsOption: ParsableArguments {
    @Option(help: "The run's JSON results file; the benchmark adds its figures to it.") var results: String?

    func record(_ figures: [BenchFigure]) throws {
        guard let results else { return }
        let environment = ProcessInfo.processInfo.environment
        var run = (try? BenchRun.read(results)) ?? BenchRun(
            started: Date(), commit: environment["SURGE_BENCH_COMMIT"], configuration: environment["SURGE_BENCH_CONFIGURATION"],
            host: ProcessInfo.processInfo.hostName, cores: ProcessInfo.processInfo.activeProcessorCount, figures: [])
        run.figures += figures
        try BenchRun.encoder.encode(run).write(to: URL(fileURLWithPath: results), options: .atomic)
    }
}

/// `surge-bench report --results FILE`: the run's figures as one table, each against its yardstick and target.
struct BenchReport: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "report", abstract: "Print a run's results file as a table.")

    @Option(help: "The run's JSON results file.") var results: String

    func run() throws {
        let run = try BenchRun.read(results)
        print("")
        print("Results of the run started \(Timestamp.format(run.started)) on \(run.host) (\(run.cores) cores, commit \(run.commit ?? "unknown"),"
            + " \(run.configuration ?? "release") build), also in \(results):")
        let rows = run.figures.map { figure in
            [
                figure.bench, figure.name, Self.format(figure.value) + " " + figure.unit,
                figure.yardstick.map { "\($0.name) \(Self.format($0.value))" } ?? "",
                figure.ratio.map { String(format: "%.2f", $0) } ?? "",
                figure.target ?? "", figure.met.map { $0 ? "met" : "MISSED" } ?? "",
            ]
        }
        let header = ["bench", "figure", "value", "yardstick (same run)", "ratio", "target", ""]
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            print("  " + row.indices.map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  "))
        }
        let missed = run.figures.filter { $0.met == false }.count
        print("  \(run.figures.filter { $0.met != nil }.count - missed) targets met, \(missed) missed")
    }

    static func format(_ value: Double) -> String {
        if value.rounded() == value || abs(value) >= 1000 { return String(format: "%.0f", value) }
        return abs(value) >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }
}
