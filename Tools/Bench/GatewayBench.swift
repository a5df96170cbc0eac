import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// The gateway's hop beside nginx's: one authenticated read of each service (a rank read and a top-10 page on a
/// challenge board, and a small GET of identity, challenges, progress, badges and notifications) straight to the
/// service, through the gateway, and through nginx as a plain reverse proxy to the same service, each under the same
/// closed-loop load. A hop's CPU is the machine's CPU per request through the proxy minus that of the same read direct.
///
/// The services answer only signed calls, each signature once. For the direct and the nginx runs the bench signs every
/// request ahead of the run (`HTTPLoad`'s varying header), and nginx passes the headers through as any reverse proxy
/// does: the services need no bench-only switch. The gateway signs each call itself, as in production.
struct GatewayBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway", abstract: "The gateway's hop (CPU, req/s, p99) beside nginx as a reverse proxy and the service alone.")

    @Option(help: "Gateway base URL.") var gateway = "http://127.0.0.1:8080"
    @Option(help: "A service's own base URL, as <service>=<URL> (one for each service read).") var upstream: [String] = []
    @Option(help: "An administrator's URL of the database holding the leaderboard's schema (the board is seeded straight into it).")
    var database: String
    @Option(help: "Port nginx listens on.") var nginxPort = 18180
    @Option(help: "Directory for nginx's configuration, process id and error log.") var nginxDirectory: String
    @Option(help: "Port the NIO byte relay listens on.") var relayPort = 18181
    @Option(help: "Directory of the stack's <service>.pid files (each process's CPU per request is printed beside the machine's).")
    var pidDirectory: String?
    @Option(help: "Members on the board the rank and top-10 reads use.") var members = 100_000
    @Option(help: "Concurrent connections for every load run.") var connections = 32
    @Option(help: "Seconds per load run (signatures are valid for 60 s).") var seconds = 5
    @OptionGroup var output: ResultsOption

    struct Read {
        var label: String
        var service: SurgeService
        var target: String
    }

    struct Measured {
        var read: Read
        var direct: LoadRun
        var gateway: LoadRun
        var nginx: LoadRun
        /// Through the NIO byte relay: the in-memory reads only.
        var relay: LoadRun?

        var gatewayHop: Double { gateway.cpuPerRequest! - direct.cpuPerRequest! }
        var nginxHop: Double { nginx.cpuPerRequest! - direct.cpuPerRequest! }
        var relayHop: Double? { relay.map { $0.cpuPerRequest! - direct.cpuPerRequest! } }
        var paths: [(String, LoadRun)] { [("direct", direct), ("gateway", gateway), ("nginx", nginx)] + (relay.map { [("relay", $0)] } ?? []) }
    }

    func run() async throws {
        guard let secret = ProcessInfo.processInfo.environment[InternalCallSigner.secretVariable] else {
            throw BenchError("\(InternalCallSigner.secretVariable) must be set (the bench signs its direct calls)")
        }
        guard seconds < 50 else { throw BenchError("--seconds must stay well under the signature's 60 s validity") }
        let signer = try InternalCallSigner(secret: secret)
        let services = try Dictionary(uniqueKeysWithValues: upstream.map { entry in
            guard let (name, url) = entry.split(separator: "=", maxSplits: 1).map(String.init).pair, let service = SurgeService(rawValue: name) else {
                throw BenchError("--upstream \(entry): expected <service>=<URL>")
            }
            return (service, url)
        })
        let logger = Logger(label: "bench")
        let (token, caller) = try await GatewayClient(gateway: gateway).guestAccount("Gateway bench", zone: "UTC")
        let challengeID = UUID()
        let admin = try DatabaseConfiguration(url: database, maximumConnections: 1)
        try await PostgresClient.withRunning(admin.makeClient(logger: logger)) { client in
            try await client.withConnection { connection in
                try await LeaderboardBench.createBoard(
                    challengeID, caller: caller, score: LeaderboardBench.score(members / 2), on: connection, logger: logger)
                try await LeaderboardBench.addMembers(members, to: challengeID, except: members / 2, on: connection, logger: logger)
            }
        }
        let board = "/v1/leaderboards/challenges/\(challengeID.uuidString.lowercased())"
        let reads = [
            Read(label: "rank read", service: .leaderboard, target: board + "/me?window=all-time"),
            Read(label: "top 10", service: .leaderboard, target: board + "?window=all-time&limit=10"),
            Read(label: "GET /v1/me", service: .identity, target: "/v1/me"),
            Read(label: "GET /v1/me/challenges", service: .challenges, target: "/v1/me/challenges"),
            Read(label: "GET /v1/me/points", service: .progress, target: "/v1/me/points"),
            Read(label: "GET /v1/me/badges", service: .badges, target: "/v1/me/badges"),
            Read(label: "GET /v1/me/notifications/unread-count", service: .notifications, target: "/v1/me/notifications/unread-count"),
        ]
        let load = HTTPLoad(connections: connections, seconds: seconds)
        let bearer = ["Authorization": "Bearer \(token)"]
        let nginx = Nginx(directory: nginxDirectory, port: nginxPort)
        let relay = ByteRelay(port: relayPort)
        let processes = { processCPU(pidDirectory: pidDirectory) }

        print("The gateway's hop: \(reads.count) reads, \(connections) connections, closed loop (wrk -t1), \(seconds) s each after 2 s of warm-up;")
        print("  direct (signed by the bench), through the gateway (bearer token), through nginx \(try nginx.version()) (one worker, keep-alive upstream),")
        print("  and for the in-memory reads through a byte relay on SwiftNIO (each connection glued to one of its own to the service, nothing parsed)")
        var measured: [Measured] = []
        for read in reads {
            guard let base = services[read.service] else { throw BenchError("no --upstream for \(read.service.rawValue)") }
            // Every path answers 200 before it is timed: a misrouted or unsigned read would be a fast 401.
            let (signed, signature) = Self.signed(read.target, caller: caller, signer: signer)
            try await expectOK(base + read.target, headers: signed.merging([signature.name: signature.value()]) { $1 })
            try await expectOK(gateway + read.target, headers: bearer)
            let direct = try load.run(base + read.target, headers: signed, varying: signature, processes: processes)
            let throughGateway = try load.run(
                gateway + read.target, varying: .init(name: "Authorization") { "Bearer \(token)" }, processes: processes)
            let throughNginx = try await nginx.running(upstream: base) {
                try await expectOK(nginx.url + read.target, headers: signed.merging([signature.name: signature.value()]) { $1 })
                return try load.run(nginx.url + read.target, headers: signed, varying: signature, processes: processes)
            }
            var throughRelay: LoadRun?
            if read.service == .leaderboard {
                throughRelay = try await relay.running(upstream: base) { pid in
                    try await expectOK(relay.url + read.target, headers: signed.merging([signature.name: signature.value()]) { $1 })
                    return try load.run(relay.url + read.target, headers: signed, varying: signature) {
                        processes().merging(["relay": BenchProcess.stat(of: pid)?.cpu ?? 0]) { $1 }
                    }
                }
            }
            let entry = Measured(read: read, direct: direct, gateway: throughGateway, nginx: throughNginx, relay: throughRelay)
            for (path, run) in entry.paths where run.failures > 0 {
                throw BenchError("\(read.label) \(path): \(run.failures) of \(run.requests) requests failed")
            }
            measured.append(entry)
        }
        let floor = try load.run(services[.leaderboard]! + "/healthz")

        print("  read                                    path       req/s   p50 ms   p99 ms  CPU µs/req  hop µs   ÷ direct req/s  p99 ÷ direct")
        for entry in measured {
            for (path, run) in entry.paths {
                let hop = path == "direct" ? "" : String(format: "  %6.0f  %14.2f  %12.2f", (run.cpuPerRequest! - entry.direct.cpuPerRequest!) * 1e6,
                    run.requestsPerSecond / entry.direct.requestsPerSecond, run.p99 / entry.direct.p99)
                print("  \(entry.read.label.padding(toLength: 40, withPad: " ", startingAt: 0)) \(path.padding(toLength: 8, withPad: " ", startingAt: 0))"
                    + String(format: " %8.0f  %7.2f  %7.2f  %10.0f", run.requestsPerSecond, run.p50, run.p99, run.cpuPerRequest! * 1e6) + hop)
            }
        }
        // The hop's figure comes from the in-memory reads (rank, top 10): their service work is small and steady, so the
        // difference is the hop. A database read's 500-1,000 µs per request varies between runs by more than a hop.
        let inMemory = measured.filter { $0.read.service == .leaderboard }
        let gatewayHop = mean(inMemory.map(\.gatewayHop))
        let nginxHop = mean(inMemory.map(\.nginxHop))
        let gatewayProcess = mean(inMemory.map { ($0.gateway.processCPUSeconds["gateway"] ?? 0) / Double($0.gateway.requests) })
        let nginxProcess = mean(inMemory.map { ($0.nginx.processCPUSeconds["nginx"] ?? 0) / Double($0.nginx.requests) })
        let relayHop = mean(inMemory.compactMap(\.relayHop))
        let relayProcess = mean(inMemory.compactMap { entry in entry.relay.map { ($0.processCPUSeconds["relay"] ?? 0) / Double($0.requests) } })
        let gatewayRate = geometricMean(measured.map(\.gateway.requestsPerSecond))
        let nginxRate = geometricMean(measured.map(\.nginx.requestsPerSecond))
        let directRate = geometricMean(measured.map(\.direct.requestsPerSecond))
        let gatewayP99 = geometricMean(measured.map(\.gateway.p99))
        let directP99 = geometricMean(measured.map(\.direct.p99))
        print(String(format: "  a hop's machine CPU on the in-memory reads: gateway %.0f µs, nginx %.0f µs: %.2f× (target ≤ 2×); the proxy's own process: %.0f µs and %.0f µs",
                     gatewayHop * 1e6, nginxHop * 1e6, gatewayHop / nginxHop, gatewayProcess * 1e6, nginxProcess * 1e6))
        print(String(format: "  the NIO byte relay's hop: %.0f µs, %.2f× nginx's; its own process: %.0f µs (%.2f× nginx's)", relayHop * 1e6, relayHop / nginxHop,
                     relayProcess * 1e6, relayProcess / nginxProcess))
        print(String(format: "  (over all %d reads: gateway %.0f µs, nginx %.0f µs: %.2f×)", measured.count, mean(measured.map(\.gatewayHop)) * 1e6,
                     mean(measured.map(\.nginxHop)) * 1e6, mean(measured.map(\.gatewayHop)) / mean(measured.map(\.nginxHop))))
        if pidDirectory != nil {
            print("  CPU µs per request by process (the rest: wrk, the kernel's own threads, PostgreSQL):")
            for entry in measured {
                for (path, run) in entry.paths {
                    let perRequest = run.processCPUSeconds.mapValues { $0 / Double(run.requests) * 1e6 }
                    let named = perRequest.filter { $0.value >= 1 }.sorted { $0.value > $1.value }
                    let rest = run.cpuPerRequest! * 1e6 - perRequest.values.reduce(0, +)
                    print("  \(entry.read.label.padding(toLength: 40, withPad: " ", startingAt: 0)) \(path.padding(toLength: 8, withPad: " ", startingAt: 0))"
                        + named.map { String(format: " %@ %.0f", $0.key, $0.value) }.joined(separator: ",") + String(format: ", rest %.0f", rest))
                }
            }
        }
        print(String(format: "  req/s, geometric mean over the reads: direct %.0f, gateway %.0f (%.2f× direct, target ≥ 0.5×), nginx %.0f (%.2f×)",
                     directRate, gatewayRate, gatewayRate / directRate, nginxRate, nginxRate / directRate))
        print(String(format: "  p99, geometric mean over the reads: direct %.2f ms, gateway %.2f ms (%.2f× direct, target ≤ 2×)", directP99, gatewayP99,
                     gatewayP99 / directP99))
        print(String(format: "  framework floor (the leaderboard's bare GET /healthz): %.0f req/s, p99 %.2f ms", floor.requestsPerSecond, floor.p99))

        var figures = [
            BenchFigure(
                "gateway", "gateway hop CPU ÷ nginx hop CPU", gatewayHop * 1e6, "µs", yardstick: .init(name: "nginx hop CPU µs", value: nginxHop * 1e6),
                ratio: gatewayHop / nginxHop, target: "≤ 2×", met: gatewayHop <= 2 * nginxHop),
            BenchFigure(
                "gateway", "proxy process CPU per in-memory read, gateway ÷ nginx", gatewayProcess * 1e6, "µs",
                yardstick: .init(name: "nginx process µs", value: nginxProcess * 1e6), ratio: gatewayProcess / nginxProcess),
            BenchFigure(
                "gateway", "through-gateway req/s ÷ direct req/s", gatewayRate, "req/s", yardstick: .init(name: "direct req/s", value: directRate),
                ratio: gatewayRate / directRate, target: "≥ 0.5×", met: gatewayRate >= 0.5 * directRate),
            BenchFigure(
                "gateway", "through-gateway p99 ÷ direct p99", gatewayP99, "ms", yardstick: .init(name: "direct p99", value: directP99),
                ratio: gatewayP99 / directP99, target: "≤ 2×", met: gatewayP99 <= 2 * directP99),
            BenchFigure(
                "gateway", "through-nginx req/s ÷ direct req/s", nginxRate, "req/s", yardstick: .init(name: "direct req/s", value: directRate),
                ratio: nginxRate / directRate),
            BenchFigure(
                "gateway", "NIO byte relay hop CPU ÷ nginx hop CPU", relayHop * 1e6, "µs", yardstick: .init(name: "nginx hop CPU µs", value: nginxHop * 1e6),
                ratio: relayHop / nginxHop),
            BenchFigure(
                "gateway", "NIO byte relay process CPU per in-memory read ÷ nginx", relayProcess * 1e6, "µs",
                yardstick: .init(name: "nginx process µs", value: nginxProcess * 1e6), ratio: relayProcess / nginxProcess),
        ]
        let floorYardstick = BenchFigure.Yardstick(name: "bare GET /healthz p99", value: floor.p99)
        for entry in measured.prefix(2) {
            let name = entry.read.label == "top 10" ? "top-10" : entry.read.label
            for (suffix, run) in [("", entry.direct), (" through the gateway", entry.gateway)] {
                let ratio = run.p99 / floor.p99
                figures.append(BenchFigure(
                    "gateway", "\(name) p99\(suffix) ÷ framework floor p99", run.p99, "ms", yardstick: floorYardstick, ratio: ratio,
                    target: "≤ 1.3×", met: ratio <= 1.3))
            }
        }
        print("  p99 ÷ the floor's: " + figures.suffix(4).map { String(format: "%@ %.2f×", $0.name.replacingOccurrences(of: " ÷ framework floor p99", with: ""), $0.ratio!) }
            .joined(separator: ", ") + " (target ≤ 1.3×)")
        try output.record(figures)
    }

    /// The headers of a GET the gateway would forward for `caller`, and its signature, new for every request.
    static func signed(_ target: String, caller: UUID, signer: InternalCallSigner) -> ([String: String], HTTPLoad.VaryingHeader) {
        let requestID = "bench-\(UUID().uuidString.lowercased())"
        let headers = [InternalHeaders.caller.rawName: caller.uuidString.lowercased(), InternalHeaders.requestID.rawName: requestID]
        return (headers, .init(name: InternalCallSigner.header.rawName) {
            signer.signature(method: "GET", target: target, caller: caller.uuidString.lowercased(), requestID: requestID)
        })
    }

    func expectOK(_ url: String, headers: [String: String]) async throws {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw BenchError("GET \(url): \(response.status.code) \(String(buffer: body))") }
    }

    /// CPU seconds so far of the stack's services (their pid files) and of nginx's processes.
    func processCPU(pidDirectory: String?) -> [String: Double] {
        guard let pidDirectory else { return [:] }
        var seconds = BenchProcess.cpuSeconds(of: StackBench.services + ["broker"], pidDirectory: pidDirectory)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), (try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8))?.hasPrefix("nginx") == true,
                let stat = BenchProcess.stat(of: pid)
            else { continue }
            seconds["nginx", default: 0] += stat.cpu
        }
        return seconds
    }

    func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }
    func geometricMean(_ values: [Double]) -> Double { exp(values.map { log($0) }.reduce(0, +) / Double(values.count)) }
}

/// Debian's nginx (nginx-light) as a plain reverse proxy in front of one service: one worker, HTTP/1.1 keep-alive to the
/// upstream, no access log. Started for one load run and stopped.
struct Nginx {
    var directory: String
    var port: Int
    var executable = "/usr/sbin/nginx"

    var url: String { "http://127.0.0.1:\(port)" }

    func version() throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-v"]
        let output = Pipe()
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "/").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? "?"
    }

    func running<T>(upstream: String, _ body: () async throws -> T) async throws -> T {
        guard let upstreamURL = URL(string: upstream), let host = upstreamURL.host, let upstreamPort = upstreamURL.port else {
            throw BenchError("nginx: upstream \(upstream) is not http://host:port")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let configuration = """
            worker_processes 1;
            daemon off;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 4096; }
            http {
              access_log off;
              client_body_temp_path \(directory)/client-body;
              proxy_temp_path \(directory)/proxy;
              upstream service { server \(host):\(upstreamPort); keepalive 64; }
              server {
                listen 127.0.0.1:\(port);
                location / {
                  proxy_pass http://service;
                  proxy_http_version 1.1;
                  proxy_set_header Connection "";
                }
              }
            }

            """
        if (try? await HTTPClient.shared.execute(HTTPClientRequest(url: url + "/healthz"), timeout: .seconds(1))) != nil {
            throw BenchError("something already answers on \(url) (an nginx left by an interrupted run?)")
        }
        let file = directory + "/nginx.conf"
        try configuration.write(toFile: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-p", directory, "-c", file, "-e", directory + "/error.log"]
        try process.run()
        defer {
            kill(process.processIdentifier, SIGQUIT)
            process.waitUntilExit()
        }
        try await Self.awaitHealthy(url, process: process, name: "nginx", exitHint: "; see \(directory)/error.log")
        return try await body()
    }

    /// Waits until the proxy `process` started answers `GET <url>/healthz` (the service's, passed through), for up to 10 s.
    static func awaitHealthy(_ url: String, process: Process, name: String, exitHint: String = "") async throws {
        let started = ContinuousClock.now
        while (try? await HTTPClient.shared.execute(HTTPClientRequest(url: url + "/healthz"), timeout: .seconds(1)).status) != .ok {
            guard process.isRunning else { throw BenchError("\(name) exited\(exitHint)") }
            guard ContinuousClock.now - started < .seconds(10) else { throw BenchError("\(name) did not answer in 10 s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

extension Array {
    /// The two elements of a two-element array.
    fileprivate var pair: (Element, Element)? { count == 2 ? (self[0], self[1]) : nil }
}
