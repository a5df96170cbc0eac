import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import PostgresNIO
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// A challenge board of `members` entries seeded straight into the leaderboard's tables, and the same members in a
/// Redis sorted set (the yardstick, measured in the same run): rank-of-user and top-10 through the service's own HTTP
/// API and through the gateway against `ZREVRANK` / `ZREVRANGE 0 9` at the same concurrency, memory per entry
/// against Redis's `used_memory`, and the time a restarted replica takes to be ready with the board loaded.
///
/// Load: `wrk` (one thread, `connections` connections, a Lua script for the headers) for HTTP and `redis-benchmark`
/// (one thread, the same connections) for Redis; both closed-loop, one request in flight per connection.
struct LeaderboardBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leaderboard", abstract: "Leaderboard reads, memory and warm start on a 1,000,000-member board, beside Redis.")

    @Option(help: "Gateway base URL.") var gateway = "http://127.0.0.1:8080"
    @Option(help: "The leaderboard's own base URL (calls are signed with INTERNAL_AUTH_SECRET from the environment).")
    var leaderboard = "http://127.0.0.1:8084"
    @Option(help: "An administrator's URL of the database holding the leaderboard's schema (the board is seeded straight into it).")
    var database: String
    @Option(help: "Port of the private redis-server.") var redisPort = 6379
    @Option(help: "File holding the running leaderboard's process id (rewritten after the restart).") var pidFile: String
    @Option(help: "Shell command that starts the leaderboard again (it must exec the process, so its id is the command's).")
    var startCommand: String
    @Option(help: "The leaderboard's log file (for its \"Boards loaded\" line).") var logFile: String
    @Option(help: "Members on the board.") var members = 1_000_000
    @Option(help: "Concurrent connections for every load run.") var connections = 32
    @Option(help: "Seconds per HTTP load run (signatures are valid for 60 s).") var seconds = 10
    @Option(help: "Load-generator threads for wrk.") var threads = 1
    @Option(help: "Kafka bootstrap servers (the rebuild's events are published there).") var kafka: String
    @Option(help: "Shell command that runs `surge-leaderboard rebuild` with the leaderboard's environment.") var rebuildCommand: String
    @Option(help: "Events to publish before timing the rebuild.") var rebuildEvents = 500_000
    @Option(help: "File holding the process id of another service, paused while the rebuild is timed (repeat for every one).")
    var pausePidFile: [String] = []
    @OptionGroup var output: ResultsOption

    func run() async throws {
        guard let secret = ProcessInfo.processInfo.environment[InternalCallSigner.secretVariable] else {
            throw BenchError("\(InternalCallSigner.secretVariable) must be set (the bench signs its calls to the leaderboard)")
        }
        let signer = try InternalCallSigner(secret: secret)
        let http = HTTPClient.shared
        let logger = Logger(label: "bench")
        let redis = Redis(port: redisPort)
        guard seconds < 55 else { throw BenchError("--seconds must stay under the signature's 60 s validity") }
        let load = HTTPLoad(connections: connections, seconds: seconds, threads: threads)

        // The caller: a real guest, signed up through the gateway.
        let (token, caller) = try await GatewayClient(gateway: gateway).guestAccount("Bench caller", zone: "UTC")
        let challengeID = UUID()
        let board = "challenge:\(challengeID.uuidString.lowercased())"
        let slot = members / 2
        let modulusScore = Int(Self.score(0).advanced(by: Double((Self.modulus - 1) / Self.tie)))
        let callerScore = Self.score(slot)
        let me = "/v1/leaderboards/challenges/\(challengeID.uuidString.lowercased())/me?window=all-time"
        let top = "/v1/leaderboards/challenges/\(challengeID.uuidString.lowercased())?window=all-time&limit=10"

        let admin = try DatabaseConfiguration(url: database, maximumConnections: 2)
        var figures: [BenchFigure] = try await PostgresClient.withRunning(admin.makeClient(logger: logger)) { client in
            // 1. A board holding only the caller: warm the service on it, then take the baseline RSS.
            try await client.withConnection { connection in
                try await Self.createBoard(challengeID, caller: caller, score: callerScore, on: connection, logger: logger)
            }
            // A fresh replica, as after the restart below (the one running may have grown through other benchmarks).
            let pid = try await restart(http).pid
            for _ in 0..<50 { _ = try await signedGet(me, caller: caller, signer: signer, http) }
            let rssBefore = try rss(of: pid)

            // 2. The other members, straight into PostgreSQL (one statement each) and into Redis (pipelined ZADDs).
            print("Seeding \(members) members (scores 0 to \(modulusScore), about \(Self.tie) members per score; names \"Player <i>\") into PostgreSQL and Redis...")
            var started = ContinuousClock.now
            try await client.withConnection { connection in
                try await Self.addMembers(members, to: challengeID, except: slot, on: connection, logger: logger)
            }
            let seededPostgres = ContinuousClock.now - started
            started = ContinuousClock.now
            let redisBefore = try redis.usedMemory()
            try redis.seed(key: board, members: members) { $0 == slot ? caller.uuidString.lowercased() : Self.member($0) }
            let redisAfter = try redis.usedMemory()
            print("  PostgreSQL \(format(seededPostgres)), Redis \(format(ContinuousClock.now - started))")

            // 3. The first read catches up with the new rows: the whole board enters memory.
            started = ContinuousClock.now
            let first = try await signedGet(me, caller: caller, signer: signer, http)
            let catchUp = ContinuousClock.now - started
            let rssAfter = try rss(of: pid)

            // The service and Redis agree. Ties are ordered differently (by name here, by member in Redis), so compare the
            // competition rank with the members scoring strictly more, and the top 10's scores.
            let rank = first["rank"] as? Int
            let above = try redis.command("ZCOUNT", board, "(\(Int(callerScore))", "+inf")
            let page = try await signedGet(top, caller: caller, signer: signer, http)
            let topScores = ((page["items"] as? [[String: Any]]) ?? []).compactMap { ($0["score"] as? NSNumber)?.intValue }
            let redisTop = try redis.command("ZREVRANGE", board, "0", "9", "WITHSCORES").split(separator: "\n").enumerated()
                .compactMap { $0.offset % 2 == 1 ? Int($0.element) : nil }
            guard let rank, Int(above).map({ $0 + 1 }) == rank, topScores == redisTop, (first["participants"] as? Int) == members else {
                throw BenchError("the service and Redis disagree: rank \(String(describing: rank)) vs ZCOUNT above \(above); top \(topScores) vs \(redisTop)")
            }
            print("  the service and Redis agree: the caller is rank \(rank) of \(members); the top 10's scores match")

            // 4. Reads under load.
            print("")
            print("Reads on a \(members)-member board, \(connections) connections, closed loop (wrk -t\(threads), redis-benchmark):")
            let rankRedis = try redis.benchmark(connections: connections, seconds: seconds, "ZREVRANK", board, caller.uuidString.lowercased())
            let (meHeaders, meSignature) = GatewayBench.signed(me, caller: caller, signer: signer)
            let (topHeaders, topSignature) = GatewayBench.signed(top, caller: caller, signer: signer)
            let rankService = try load.run(leaderboard + me, headers: meHeaders, varying: meSignature)
            let rankGateway = try load.run(gateway + me, varying: .init(name: "Authorization") { "Bearer \(token)" })
            let topRedis = try redis.benchmark(connections: connections, seconds: seconds, "ZREVRANGE", board, "0", "9")
            let topService = try load.run(leaderboard + top, headers: topHeaders, varying: topSignature)
            let topGateway = try load.run(gateway + top, varying: .init(name: "Authorization") { "Bearer \(token)" })
            print("  read         path                     req/s    p50 ms   p99 ms   Redis req/s ÷   p99 ÷ Redis p99")
            for (label, redisRun, runs) in [
                ("rank of user", rankRedis, [("Redis ZREVRANK", rankRedis), ("service HTTP", rankService), ("gateway HTTP", rankGateway)]),
                ("top 10", topRedis, [("Redis ZREVRANGE 0 9", topRedis), ("service HTTP", topService), ("gateway HTTP", topGateway)]),
            ] {
                for (path, run) in runs {
                    let ratios =
                        path.hasPrefix("Redis")
                        ? "" : String(format: "  %10.1f×  %10.1f×", redisRun.requestsPerSecond / run.requestsPerSecond, run.p99 / redisRun.p99)
                    print(
                        "  \(label.padding(toLength: 12, withPad: " ", startingAt: 0)) \(path.padding(toLength: 20, withPad: " ", startingAt: 0))"
                            + String(format: " %9.0f  %7.2f  %7.2f", run.requestsPerSecond, run.p50, run.p99) + ratios
                            + (run.failures > 0 ? "  (\(run.failures) failed)" : ""))
                }
            }
            let ceiling = try load.run(leaderboard + "/healthz", headers: [:])
            print(String(format: "  the service's HTTP stack alone (GET /healthz: no signature, no PostgreSQL): %.0f req/s, p99 %.2f ms (%.1f× Redis's ZREVRANK req/s)",
                         ceiling.requestsPerSecond, ceiling.p99, rankRedis.requestsPerSecond / ceiling.requestsPerSecond))
            print("  target: within 3× of Redis's req/s through the service's own HTTP API (the p99s' target is against the framework's floor: the gateway benchmark)")

            // 6. Warm start: stop the replica, start it again, time until /readyz answers 200.
            print("")
            print("Warm start of the leaderboard with the \(members)-member board:")
            let (restarted, stopped, ready, logOffset) = try await restart(http)
            let rssRestarted = try rss(of: restarted)
            let loaded = boardsLoaded(logFile, from: logOffset)
            let again = try await signedGet(me, caller: caller, signer: signer, http)
            guard (again["rank"] as? Int) == rank else { throw BenchError("after the restart the caller's rank is \(again["rank"] ?? "nil"), not \(rank)") }
            print("  stopped in \(format(stopped)); started again: /readyz 200 after \(format(ready)) (target ≤ 10 s)")
            print("  \"Boards loaded\" logged \(loaded ?? "nothing"); the caller's rank is \(rank) again")

            // Memory per entry: the replica's RSS above what it was with the board holding only the caller.
            print("")
            print("Memory for \(members) members:")
            let loadedBytes = Double(rssRestarted - rssBefore) / Double(members - 1)
            let caughtUpBytes = Double(rssAfter - rssBefore) / Double(members - 1)
            let redisBytes = Double(redisAfter - redisBefore) / Double(members)
            print(String(format: "  leaderboard, board loaded at start:  RSS %.1f MB → %.1f MB: %.1f bytes per entry", Double(rssBefore) / 1e6,
                         Double(rssRestarted) / 1e6, loadedBytes))
            print(String(format: "  leaderboard, caught up while running: RSS %.1f MB → %.1f MB: %.1f bytes per entry (%d rows in one catch-up, %@)",
                         Double(rssBefore) / 1e6, Double(rssAfter) / 1e6, caughtUpBytes, members - 1, format(catchUp)))
            print(String(format: "  Redis used_memory %.1f MB → %.1f MB: %.1f bytes per entry", Double(redisBefore) / 1e6, Double(redisAfter) / 1e6, redisBytes))
            print(String(format: "  ratio to Redis: %.2f loaded at start, %.2f caught up (target ≤ 1)", loadedBytes / redisBytes, caughtUpBytes / redisBytes))

            var figures: [BenchFigure] = []
            for (label, redisRun, serviceRun, gatewayRun) in [
                ("rank of user", rankRedis, rankService, rankGateway), ("top 10", topRedis, topService, topGateway),
            ] {
                let redisName = label == "top 10" ? "Redis ZREVRANGE 0 9" : "Redis ZREVRANK"
                for (path, run) in [("service", serviceRun), ("gateway", gatewayRun)] {
                    let slower = redisRun.requestsPerSecond / run.requestsPerSecond
                    figures.append(BenchFigure(
                        "leaderboard", "\(label) on \(members) members, req/s through the \(path)", run.requestsPerSecond, "req/s",
                        yardstick: .init(name: "\(redisName) req/s", value: redisRun.requestsPerSecond), ratio: slower,
                        target: path == "service" ? "≤ 3× slower than Redis" : nil, met: path == "service" ? slower <= 3 : nil))
                    // The reads' tails are held to the framework's floor (bare GET /healthz) in the gateway benchmark.
                    figures.append(BenchFigure(
                        "leaderboard", "\(label) on \(members) members, p99 through the \(path)", run.p99, "ms",
                        yardstick: .init(name: "\(redisName) p99", value: redisRun.p99), ratio: run.p99 / redisRun.p99))
                }
            }
            figures.append(BenchFigure(
                "leaderboard", "memory per entry, board loaded at start", loadedBytes, "bytes", yardstick: .init(name: "Redis used_memory per entry", value: redisBytes),
                ratio: loadedBytes / redisBytes, target: "≤ 1× Redis", met: loadedBytes <= redisBytes))
            let readySeconds = ready / .seconds(1)
            figures.append(BenchFigure(
                "leaderboard", "restarted replica ready with the board", readySeconds, "s", target: "≤ 10 s", met: readySeconds <= 10))
            return figures
        }

        // 7. Rebuild: a stream of directory events and points, the replica stopped, `surge-leaderboard rebuild`.
        print("")
        print("Rebuild from the earliest offsets (\(rebuildEvents) events published, plus whatever the topics already hold):")
        try await RebuildBench.publishStream(events: rebuildEvents, kafka: kafka, logger: logger)
        try stop(try readPID())
        figures.append(try RebuildBench.rebuild("leaderboard", command: rebuildCommand, pausing: pausePidFile))
        let (restartedAfterRebuild, _) = try await startAgain(http)
        try "\(restartedAfterRebuild)\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
        try output.record(figures)
    }

    // MARK: The board

    /// A public habit challenge's all-time board holding only `caller`, straight in the leaderboard's tables.
    static func createBoard(_ challengeID: UUID, caller: UUID, score: Double, on connection: PostgresConnection, logger: Logger) async throws {
        let board = "challenge:\(challengeID.uuidString.lowercased())"
        for query: PostgresQuery in [
            """
            INSERT INTO leaderboard.challenges (challenge_id, name, kind, visibility)
            VALUES (\(challengeID), 'Benchmark board', 'habit', 'public')
            """,
            """
            INSERT INTO leaderboard.profiles (user_id, display_name, time_zone) VALUES (\(caller), 'Bench caller', 'UTC')
            ON CONFLICT (user_id) DO NOTHING
            """,
            "INSERT INTO leaderboard.scores (board, window_key, user_id, score, version) VALUES (\(board), 'all-time', \(caller), \(score), 1)",
            "INSERT INTO leaderboard.boards (board, window_key, version) VALUES (\(board), 'all-time', 1)",
        ] {
            try await connection.query(query, logger: logger)
        }
    }

    /// Members 0..<`members` but `slot` (the caller's place) on the board, in one transaction of two statements, and
    /// the change announced on the feed the replicas listen to, as the service's own writers do.
    static func addMembers(_ members: Int, to challengeID: UUID, except slot: Int, on connection: PostgresConnection, logger: Logger) async throws {
        let board = "challenge:\(challengeID.uuidString.lowercased())"
        try await connection.transaction(logger: logger) {
            try await connection.query(
                """
                INSERT INTO leaderboard.profiles (user_id, display_name, time_zone)
                SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, 'Player ' || i, 'UTC'
                FROM generate_series(0, \(members - 1)) AS i WHERE i <> \(slot)
                ON CONFLICT (user_id) DO NOTHING
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO leaderboard.scores (board, window_key, user_id, score, version)
                SELECT \(board), 'all-time', ('00000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid,
                       ((i::bigint * \(Self.multiplier)) % \(Self.modulus)) / \(Self.tie), 2
                FROM generate_series(0, \(members - 1)) AS i WHERE i <> \(slot)
                """, logger: logger)
            try await connection.query("UPDATE leaderboard.boards SET version = 2 WHERE board = \(board) AND window_key = 'all-time'", logger: logger)
            try await connection.query("SELECT pg_notify('leaderboard_changes', \("board \(board) all-time"))", logger: logger)
        }
        try await connection.query("ANALYZE leaderboard.scores", logger: logger)
        try await connection.query("ANALYZE leaderboard.profiles", logger: logger)
    }

    static let multiplier = 7919
    /// A prime above any member count used here: `i × multiplier mod modulus` spreads the members evenly.
    static let modulus = 1_000_003
    /// About this many members share each score, as on real boards (ties are ordered by name).
    static let tie = 100

    static func score(_ i: Int) -> Double { Double((i * multiplier) % modulus / tie) }

    /// The member's user ID, as the seeding SQL makes it: `00000000-0000-4000-8000-` and `i` in 12 hex digits.
    static func member(_ i: Int) -> String {
        let hex = String(i, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    // MARK: HTTP

    func signedGet(_ target: String, caller: UUID, signer: InternalCallSigner, _ http: HTTPClient) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: leaderboard + target)
        let (headers, signature) = GatewayBench.signed(target, caller: caller, signer: signer)
        for (name, value) in headers.merging([signature.name: signature.value()], uniquingKeysWith: { $1 }) { request.headers.add(name: name, value: value) }
        let response = try await http.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]) ?? [:]
        guard response.status == .ok else { throw BenchError("GET \(target): \(response.status.code) \(object)") }
        return object
    }

    func status(_ url: String, _ http: HTTPClient) async throws -> UInt {
        let response = try await http.execute(HTTPClientRequest(url: url), timeout: .seconds(1))
        _ = try await response.body.collect(upTo: 1 << 16)
        return response.status.code
    }

    // MARK: The process

    /// Stops the running leaderboard and starts it again: its new process id, how long it took to stop and to
    /// answer /readyz with 200, and where its log stood when it started.
    func restart(_ http: HTTPClient) async throws -> (pid: Int32, stopped: Duration, ready: Duration, logOffset: Int) {
        let started = ContinuousClock.now
        try stop(try readPID())
        let stopped = ContinuousClock.now - started
        let logOffset = (try? FileManager.default.attributesOfItem(atPath: logFile)[.size] as? Int) ?? 0
        let (pid, ready) = try await startAgain(http)
        return (pid, stopped, ready, logOffset)
    }

    /// Starts the (stopped) leaderboard with the start command; returns its process id and the time to `/readyz` 200.
    func startAgain(_ http: HTTPClient) async throws -> (pid: Int32, ready: Duration) {
        let started = ContinuousClock.now
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", startCommand]
        try process.run()
        try "\(process.processIdentifier)\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
        while true {
            if (try? await status(leaderboard + "/readyz", http)) == 200 { break }
            guard process.isRunning else { throw BenchError("the restarted leaderboard exited; see \(logFile)") }
            guard ContinuousClock.now - started < .seconds(120) else { throw BenchError("the restarted leaderboard was not ready in 120 s") }
            try await Task.sleep(for: .milliseconds(10))
        }
        return (process.processIdentifier, ContinuousClock.now - started)
    }

    func readPID() throws -> Int32 { try BenchProcess.pid(inFile: pidFile) }

    /// Resident set size in bytes.
    func rss(of pid: Int32) throws -> Int { try BenchProcess.residentKiB(of: pid) * 1024 }

    func stop(_ pid: Int32) throws { try BenchProcess.stop(pid, name: "the leaderboard") }

    /// The duration on the "Boards loaded" line the service logged after `offset`.
    func boardsLoaded(_ path: String, from offset: Int) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(offset))
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        guard let line = text.split(separator: "\n").last(where: { $0.contains("Boards loaded") }) else { return nil }
        var details: [String] = []
        for key in ["duration", "entries", "windows"] {
            if let range = line.range(of: "\"\(key)\":\"[^\"]*\"", options: .regularExpression) ?? line.range(of: "\(key)=[^ ]*", options: .regularExpression) {
                details.append(String(line[range]).replacingOccurrences(of: "\"", with: ""))
            }
        }
        return details.isEmpty ? String(line) : details.joined(separator: ", ")
    }
}

/// The yardstick: Debian's redis-server on a private port, driven with its own redis-cli and redis-benchmark.
struct Redis {
    var port: Int

    func command(_ arguments: String...) throws -> String {
        try BenchProcess.run("/usr/bin/redis-cli", ["-p", "\(port)"] + arguments).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `used_memory` of INFO memory, in bytes.
    func usedMemory() throws -> Int {
        let info = try command("INFO", "memory")
        guard let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("used_memory:") }), let bytes = Int(line.dropFirst(12))
        else { throw BenchError("no used_memory in INFO memory") }
        return bytes
    }

    /// The members with the board's scores, as ZADDs of 1,000 members each through `redis-cli --pipe`.
    func seed(key: String, members: Int, member: (Int) -> String) throws {
        _ = try command("DEL", key)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        process.arguments = ["-p", "\(port)", "--pipe"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        func bulk(_ text: String) -> String { "$\(text.utf8.count)\r\n\(text)\r\n" }
        var start = 0
        while start < members {
            let end = min(members, start + 1000)
            var batch = "*\(2 + 2 * (end - start))\r\n" + bulk("ZADD") + bulk(key)
            for i in start..<end { batch += bulk(String(Int(LeaderboardBench.score(i)))) + bulk(member(i)) }
            input.fileHandleForWriting.write(Data(batch.utf8))
            start = end
        }
        try input.fileHandleForWriting.close()
        let reply = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, reply.contains("errors: 0") else { throw BenchError("redis-cli --pipe: \(reply)") }
    }

    /// redis-benchmark at the given concurrency, sized to run about `seconds` after a calibration run.
    func benchmark(connections: Int, seconds: Int, _ command: String...) throws -> LoadRun {
        func once(_ requests: Int) throws -> LoadRun {
            let csv = try BenchProcess.run(
                "/usr/bin/redis-benchmark", ["-p", "\(port)", "-c", "\(connections)", "-n", "\(requests)", "--csv"] + command)
            // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
            guard let row = csv.split(whereSeparator: \.isNewline).last?.split(separator: ",").map({ $0.replacingOccurrences(of: "\"", with: "") }),
                row.count >= 7, let rps = Double(row[row.count - 7]), let p50 = Double(row[row.count - 4]), let p99 = Double(row[row.count - 2])
            else { throw BenchError("redis-benchmark: \(csv)") }
            return LoadRun(requests: requests, requestsPerSecond: rps, p50: p50, p99: p99, failures: 0)
        }
        let calibration = try once(50_000)
        return try once(max(50_000, Int(calibration.requestsPerSecond) * seconds))
    }
}

func format(_ duration: Duration) -> String {
    let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    return seconds < 1 ? String(format: "%.0f ms", seconds * 1000) : String(format: "%.2f s", seconds)
}
