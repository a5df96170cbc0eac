import ArgumentParser
import AsyncHTTPClient
import Foundation
import SurgeContracts

/// The daily check-in under load, beside `pgbench -N` on the same PostgreSQL in the same run (issue 45).
///
/// `users` guests sign up through the gateway and start a habit of two checkbox tasks and a quantity task. `wrk` then
/// drives authenticated check-ins through the gateway, each user in turn: tick, tick, log, untick, untick, log (two
/// thirds ticks and unticks, one third quantity logs). Each run starts on a settled stack (every consumer caught up):
/// one connection alone (the idle p50), closed-loop saturation (the cost: machine-wide CPU until the consumers have
/// caught up, per check-in), the sustained-rate search (open loop, every consumer's and outbox's lag under 2 s for
/// `sustainSeconds`), half the sustained rate (the tail), then `pgbench -N` at the same client count, its CPU
/// measured machine-wide too. The CPU each process spent shows where the time goes. Across the saturated run it also
/// measures what a check-in leaves on disk in each service's schema and the Kafka records it brings (the capacity model
/// in docs/deployment.md is derived from them).
struct CheckInThroughputBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkin-throughput", abstract: "Check-ins per second through the gateway beside pgbench -N on the same PostgreSQL.")

    @Option(help: "Gateway base URL.") var gateway = "http://127.0.0.1:8080"
    @Option(help: "Progress base URL (its simulated clock is moved through /internal/clock).") var progress = "http://127.0.0.1:8083"
    @Option(help: "Kafka bootstrap servers (the benchmark publishes its habit definition).") var kafka = "127.0.0.1:9092"
    @Option(help: "An administrator's URL of the PostgreSQL server (pgbench runs in its own database there).") var database: String
    @Option(help: "Directory of <process>.pid files whose CPU time is reported (the services and the broker).") var pidDirectory: String
    @Option(help: "PostgreSQL's data directory (its postmaster.pid names the server whose CPU time is reported).") var pgdata: String
    @Option(help: "The database of the services' schemas, on the server of --database (the storage each check-in adds is reported).")
    var servicesDatabase = "surge"
    @Option(help: "Guests checking in.") var users = 256
    @Option(help: "Concurrent connections, for wrk and for pgbench.") var connections = 16
    @Option(help: "Seconds per measured run.") var seconds = 20
    @Option(help: "Seconds each step of the sustained-rate search runs (every consumer's lag under 2 s throughout).") var sustainSeconds = 60
    @Option(help: "Load-generator threads (wrk -t, pgbench -j).") var threads = 2
    @Option(help: "A service's /metrics URL: the stack settles after seeding and after each run (repeat for every service).")
    var settleURL: [String] = []
    @OptionGroup var output: ResultsOption

    static let processes = StackBench.services + ["broker"]

    func run() async throws {
        let idleMemory = Dictionary(uniqueKeysWithValues: Self.processes.compactMap { name in
            (try? pid(of: name)).flatMap { pid in (try? Self.memory(of: pid)).map { (name, $0) } }
        })
        let api = GatewayClient(gateway: gateway)
        let zone = "Europe/Rome"
        let habit = try await BenchHabit.publish(
            kafka: kafka,
            tasks: [
                ChallengeTask(taskID: "t", title: "Tick", kind: .checkbox),
                ChallengeTask(taskID: "u", title: "Another tick", kind: .checkbox),
                ChallengeTask(taskID: "q", title: "Water", kind: .quantity, target: 1_000_000, unit: "ml"),
            ])
        // Progress's clock stands still at the start, so no day ends during the runs; the check-ins are today's, as a
        // real user's are. (A fixed past date put every score in weeks the leaderboard had closed and let go of: each
        // change reloaded the whole window and republished its final standings.)
        try await BenchHabit.setClock(Date(), progress: progress)

        print("Seeding \(users) guests, each with an attempt at a habit of two checkbox tasks and a quantity task...")
        let seeded = try await withThrowingTaskGroup(of: String.self) { group in
            var lines: [String] = []
            for index in 0..<users {
                if index >= connections, let line = try await group.next() { lines.append(line) }
                group.addTask {
                    let token = try await api.guest("Bench \(index)", zone: zone)
                    let attempt = try await api.retrying { try await api.startAttempt(habit, token: token) }
                    return "\(token) \(attempt)"
                }
            }
            for try await line in group { lines.append(line) }
            return lines
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("surge-checkin-throughput-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let usersFile = directory.appendingPathComponent("users.txt")
        try seeded.joined(separator: "\n").appending("\n").write(to: usersFile, atomically: true, encoding: .utf8)

        _ = try wrk(usersFile: usersFile, in: directory, seconds: 3, delayMilliseconds: nil)
        // Each run starts on a settled stack: what the seeding or the run before left to the consumers would otherwise
        // take the CPU from this one.
        _ = try await SettleBench.settle(settleURL, timeout: .seconds(900))
        // The tail's yardstick: one connection, one check-in at a time, on an idle stack.
        let idle = try wrk(usersFile: usersFile, in: directory, seconds: 5, delayMilliseconds: nil, connections: 1, threads: 1)
        _ = try await SettleBench.settle(settleURL, timeout: .seconds(900))

        // Storage and records are read outside the CPU's window, so that reading them is not a check-in's cost.
        let storageBefore = try Self.schemaBytes(server: database, database: servicesDatabase)
        let recordsBefore = try await Self.recordsProduced(settleURL)
        let before = try cpuSeconds()
        let machineBefore = try MachineCPU.busySeconds()
        let saturated = try wrk(usersFile: usersFile, in: directory, seconds: seconds, delayMilliseconds: nil)
        let after = try cpuSeconds()
        // At saturation the consumers fall behind: the time they take to catch up, and the CPU they spend doing it,
        // belong to the check-ins of the run.
        let backlog = try await SettleBench.settle(settleURL, timeout: .seconds(900))
        let settled = try cpuSeconds()
        let machineSettled = try MachineCPU.busySeconds()
        let storageAfter = try Self.schemaBytes(server: database, database: servicesDatabase)
        let recordsAfter = try await Self.recordsProduced(settleURL)
        let served = saturated.requestsPerSecond * saturated.duration
        let checkInCPU = (machineSettled - machineBefore) / served

        // The sustained rate: the highest open-loop rate at which no consumer and no outbox falls 2 s behind for a
        // whole run. Closed-loop saturation lets the consumers fall behind, so the search starts below it.
        var probes: [(asked: Double, run: LoadRun, passed: Bool)] = []
        func probe(_ rate: Double) async throws -> Bool {
            let (run, worstLag) = try await paced(rate: rate, seconds: sustainSeconds, usersFile: usersFile, in: directory)
            let passed = worstLag.seconds < Self.lagBound && run.failures == 0 && run.requestsPerSecond >= rate * 0.9
            probes.append((rate, run, passed))
            print(String(format: "  open loop at %.0f check-ins/s asked: %.0f reached, p99 %.1f ms, %d failed, worst lag %.2f s ",
                rate, run.requestsPerSecond, run.p99, run.failures, worstLag.seconds) + "(\(worstLag.series))")
            _ = try await SettleBench.settle(settleURL, timeout: .seconds(900))
            return passed
        }
        print("Consumers' transactions after the saturated run (records applied together, batches, batches rolled back):")
        for url in settleURL {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
            for line in text.split(separator: "\n") where line.hasPrefix("surge_event_batches") || line.hasPrefix("surge_events_batched") {
                print("  \(line)")
            }
        }
        print("Searching the sustained rate (\(sustainSeconds) s a step, every consumer's and outbox's lag under 2 s):")
        var rate = saturated.requestsPerSecond * 0.6
        var sustained: LoadRun?
        if sustainSeconds == 0 {
            print("(the sustained-rate search is skipped: --sustain-seconds 0)")
        } else if try await probe(rate) {
            sustained = probes.last?.run
            for _ in 0..<3 {
                rate *= 1.2
                guard try await probe(rate) else { break }
                sustained = probes.last?.run
            }
        } else {
            for _ in 0..<4 {
                rate *= 0.7
                if try await probe(rate) {
                    sustained = probes.last?.run
                    break
                }
            }
        }
        // One step between the highest rate sustained and the lowest missed, when they are far apart.
        if let passed = probes.filter(\.passed).map(\.asked).max(),
            let missed = probes.map(\.asked).filter({ $0 > passed }).min(), missed / passed > 1.1
        {
            if try await probe((passed + missed) / 2) { sustained = probes.last?.run }
        }
        let sustainedRate = sustained?.requestsPerSecond ?? 0
        let (halfSustained, _) = try await paced(rate: max(sustainedRate, saturated.requestsPerSecond * 0.3) / 2, seconds: seconds, usersFile: usersFile, in: directory)
        _ = try await SettleBench.settle(settleURL, timeout: .seconds(900))

        let pgbenchBefore = try cpuSeconds()
        let pgbenchMachineBefore = try MachineCPU.busySeconds()
        let pgbench = try PgBench(url: database, clients: connections, threads: threads).run(seconds: seconds)
        let pgbenchMachineAfter = try MachineCPU.busySeconds()
        let pgbenchAfter = try cpuSeconds()
        let transactionCPU = (pgbenchMachineAfter - pgbenchMachineBefore) / (pgbench.tps * pgbench.duration)

        print("")
        print("Check-ins through the gateway, \(users) users, \(connections) connections (wrk -t\(threads)), \(seconds) s per run;")
        print("mix per user: tick, tick, log, untick, untick, log (PUT …/tasks/{taskID} and POST …/tasks/q/logs):")
        print("  run                                 req/s    p50 ms   p99 ms p99.9 ms   failed")
        for (label, run) in [("idle (one connection)", idle), ("saturation (closed loop)", saturated), ("sustained (open loop)", sustained), ("half sustained rate", halfSustained)] {
            guard let run else { continue }
            print("  \(label.padding(toLength: 32, withPad: " ", startingAt: 0))"
                + String(format: "%9.0f  %7.2f  %7.2f  %7.2f  %7d", run.requestsPerSecond, run.p50, run.p99, run.p999, run.failures))
        }
        print("  " + "pgbench -N (simple update) tps".padding(toLength: 32, withPad: " ", startingAt: 0) + String(format: "%9.0f  %7.2f", pgbench.tps, pgbench.latency))
        let costRatio = checkInCPU / transactionCPU
        let sustainedRatio = sustainedRate / pgbench.tps
        let tailRatio = halfSustained.p99 / idle.p50
        print(String(format: "  machine-wide CPU per check-in (consumers caught up) %.3f ms ÷ per pgbench -N transaction %.3f ms = %.2f (target ≤ 4)",
            checkInCPU * 1000, transactionCPU * 1000, costRatio))
        print(String(format: "  sustained check-ins/s ÷ pgbench -N tps: %.3f (target ≥ 0.25)", sustainedRatio))
        print(String(format: "  check-in p99 at half the sustained rate %.2f ms ÷ idle p50 %.2f ms = %.2f (target ≤ 3)", halfSustained.p99, idle.p50, tailRatio))
        print("")
        print("CPU per check-in of the saturated run (\(Int(served)) check-ins; user + system time of each process), during the run")
        print(String(format: "and until the consumers had caught up with it (%.1f s after it ended):", milliseconds(backlog) / 1000))
        print("  process       during   with backlog")
        var total = 0.0
        var totalWithBacklog = 0.0
        for name in Self.processes + ["postgres"] {
            guard let start = before[name], let end = after[name], let caughtUp = settled[name] else { continue }
            total += end - start
            totalWithBacklog += caughtUp - start
            print("  " + name.padding(toLength: 12, withPad: " ", startingAt: 0)
                + String(format: "%7.3f ms  %10.3f ms", (end - start) * 1000 / served, (caughtUp - start) * 1000 / served))
        }
        print("  " + "all".padding(toLength: 12, withPad: " ", startingAt: 0)
            + String(format: "%7.3f ms  %10.3f ms", total * 1000 / served, totalWithBacklog * 1000 / served))
        print(String(format: "  machine     %21.3f ms  (/proc/stat: every process, exited ones included)", checkInCPU * 1000))
        if let start = pgbenchBefore["postgres"], let end = pgbenchAfter["postgres"] {
            print(String(format: "  (per pgbench -N transaction: machine-wide %.3f ms, of it the live PostgreSQL processes %.3f ms; pgbench's own backends exit before they can be read)",
                transactionCPU * 1000, (end - start) * 1000 / (pgbench.tps * pgbench.duration)))
        }
        print("")
        print("Memory before the load (target ≤ 40 MiB per service). RSS counts the Swift runtime and Foundation libraries in full in")
        print("every process; PSS shares them among the processes that map them, which is what a node running them all pays:")
        print("  process       RSS MiB   PSS MiB   anonymous MiB")
        for name in Self.processes {
            guard let memory = idleMemory[name] else { continue }
            print("  " + name.padding(toLength: 12, withPad: " ", startingAt: 0)
                + String(format: "%8.1f  %8.1f  %14.1f", memory.rss / 1024, memory.pss / 1024, memory.anonymous / 1024))
        }
        print("")
        print("Sizing (deploy/k8s takes its requests and limits from these): CPU cores each process kept busy during the")
        print(String(format: "saturated run (%.0f check-ins/s), and its peak RSS since it started:", saturated.requestsPerSecond))
        print("  process       cores   peak RSS MiB")
        for name in Self.processes + ["postgres"] {
            guard let start = before[name], let end = after[name] else { continue }
            let peak = (try? pid(of: name)).flatMap { Self.peakResidentKibibytes(of: $0) }.map { String(format: "%14.1f", $0 / 1024) } ?? "             —"
            print("  " + name.padding(toLength: 12, withPad: " ", startingAt: 0) + String(format: "%6.2f", (end - start) / saturated.duration) + peak)
        }
        print("")
        print("PostgreSQL storage per check-in of the saturated run: pg_total_relation_size (heap, indexes, TOAST) of every table")
        print("of each schema before the run and once the consumers had caught up, without a VACUUM (what a deployment sees).")
        print("Published events stay in the outbox for OUTBOX_RETENTION_HOURS and processed-event ids in the inbox for")
        print("INBOX_RETENTION_HOURS, then are purged; outbox_pending rows are deleted once published and their space is reused:")
        print("  schema          bytes   of it outbox   of it inbox")
        var storageFigures: [BenchFigure] = []
        var storageTotal = Storage()
        for schema in StackBench.services {
            let start = storageBefore[schema] ?? Storage(), end = storageAfter[schema] ?? Storage()
            let growth = Storage(all: (end.all - start.all) / served, outbox: (end.outbox - start.outbox) / served, inbox: (end.inbox - start.inbox) / served)
            storageTotal = Storage(all: storageTotal.all + growth.all, outbox: storageTotal.outbox + growth.outbox, inbox: storageTotal.inbox + growth.inbox)
            print("  " + schema.padding(toLength: 13, withPad: " ", startingAt: 0) + String(format: "%8.0f  %13.0f  %12.0f", growth.all, growth.outbox, growth.inbox))
            storageFigures.append(BenchFigure("checkin-throughput", "PostgreSQL storage per check-in, \(schema)", growth.all, "bytes"))
        }
        print("  " + "all".padding(toLength: 13, withPad: " ", startingAt: 0)
            + String(format: "%8.0f  %13.0f  %12.0f", storageTotal.all, storageTotal.outbox, storageTotal.inbox))
        storageFigures += [
            BenchFigure("checkin-throughput", "PostgreSQL storage per check-in, all schemas", storageTotal.all, "bytes"),
            BenchFigure("checkin-throughput", "PostgreSQL storage per check-in, of it the outboxes", storageTotal.outbox, "bytes"),
            BenchFigure("checkin-throughput", "PostgreSQL storage per check-in, of it the inboxes", storageTotal.inbox, "bytes"),
        ]
        let records = recordsAfter.merging(recordsBefore.mapValues { -$0 }, uniquingKeysWith: +).filter { $0.value > 0 }
        let recordsPerCheckIn = records.values.reduce(0, +) / served
        print("")
        print(String(format: "Kafka records per check-in of the saturated run (surge_kafka_produced_total of every service): %.2f", recordsPerCheckIn))
        for (topic, count) in records.sorted(by: { $0.key < $1.key }) {
            print("  " + topic.padding(toLength: 32, withPad: " ", startingAt: 0) + String(format: "%6.2f", count / served))
        }
        print("(Their bytes are not measured: the development broker keeps its log in memory and reports no sizes.)")

        try output.record([
            BenchFigure(
                "checkin-throughput", "check-in CPU ÷ pgbench -N transaction CPU", checkInCPU * 1000, "ms",
                yardstick: .init(name: "pgbench -N transaction, machine-wide CPU ms", value: transactionCPU * 1000), ratio: costRatio,
                target: "≤ 4× pgbench -N transaction", met: costRatio <= 4),
            BenchFigure(
                "checkin-throughput", "sustained check-ins/s ÷ pgbench -N tps", sustainedRate, "req/s",
                yardstick: .init(name: "pgbench -N tps", value: pgbench.tps), ratio: sustainedRatio, target: "≥ 0.25× pgbench -N",
                met: sustainedRatio >= 0.25),
            BenchFigure(
                "checkin-throughput", "check-in p99 at half sustained rate ÷ idle p50", halfSustained.p99, "ms",
                yardstick: .init(name: "idle check-in p50 ms", value: idle.p50), ratio: tailRatio, target: "≤ 3× idle p50", met: tailRatio <= 3),
            BenchFigure("checkin-throughput", "check-ins/s at saturation (closed loop, \(users) users, \(connections) connections)", saturated.requestsPerSecond, "req/s"),
            BenchFigure("checkin-throughput", "CPU per check-in, all processes, the consumers' backlog included", totalWithBacklog * 1000 / served, "ms"),
            BenchFigure("checkin-throughput", "consumers caught up after the saturated run", milliseconds(backlog) / 1000, "s"),
            BenchFigure("checkin-throughput", "check-in p50 at half sustained rate", halfSustained.p50, "ms"),
        ] + storageFigures + [
            BenchFigure("checkin-throughput", "Kafka records per check-in, every topic", recordsPerCheckIn, "records"),
        ])
    }

    /// Bytes on disk of one schema's tables, and of them the outbox's (`outbox`, `outbox_pending`) and the inbox's
    /// (`processed_events`).
    struct Storage {
        var all = 0.0
        var outbox = 0.0
        var inbox = 0.0
    }

    /// Each service schema's bytes in `database` on the server of `server` (an administrator's URL): the sum of
    /// `pg_total_relation_size` (heap, indexes, TOAST) over its tables.
    static func schemaBytes(server: String, database: String) throws -> [String: Storage] {
        guard let components = URLComponents(string: server), let host = components.host, let user = components.user else {
            throw BenchError("--database must be postgres://user:password@host:port/database")
        }
        let size = "pg_total_relation_size(c.oid)"
        let schemas = StackBench.services.map { "'\($0)'" }.joined(separator: ", ")
        let output = try BenchProcess.run(
            "/usr/bin/psql",
            ["-h", host, "-p", "\(components.port ?? 5432)", "-U", user, "-d", database, "-X", "-q", "-A", "-t", "-F", " ", "-c", """
                SELECT n.nspname, sum(\(size)), coalesce(sum(\(size)) FILTER (WHERE c.relname IN ('outbox', 'outbox_pending')), 0),
                    coalesce(sum(\(size)) FILTER (WHERE c.relname = 'processed_events'), 0)
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relkind IN ('r', 'm') AND n.nspname IN (\(schemas)) GROUP BY n.nspname
                """],
            environment: ["PGPASSWORD": components.password ?? ""])
        var bytes: [String: Storage] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 4, let all = Double(fields[1]), let outbox = Double(fields[2]), let inbox = Double(fields[3]) else { continue }
            bytes[String(fields[0])] = Storage(all: all, outbox: outbox, inbox: inbox)
        }
        return bytes
    }

    /// Records the services' producers have had acknowledged so far (`surge_kafka_produced_total`, result ok), per topic,
    /// from each service's `/metrics`.
    static func recordsProduced(_ metricsURLs: [String]) async throws -> [String: Double] {
        var records: [String: Double] = [:]
        for url in metricsURLs {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            let text = String(buffer: try await response.body.collect(upTo: 16 << 20))
            for line in text.split(separator: "\n") where line.hasPrefix("surge_kafka_produced_total{") && line.contains("result=\"ok\"") {
                guard let start = line.range(of: "topic=\"")?.upperBound, let end = line[start...].firstIndex(of: "\""),
                    let value = line.split(separator: " ").last.flatMap({ Double($0) })
                else { continue }
                records[String(line[start..<end]), default: 0] += value
            }
        }
        return records
    }

    static let lagBound = 2.0

    /// `rate` check-ins a second, spread over the connections, each connection waiting between requests (wrk's
    /// `delay`; a short calibration run measures what a request itself takes at that pace). A connection sends its next
    /// request only after the last one's answer, so a rate is open-loop only while a request takes well under a
    /// connection's interval: above `connections` × 4 a second, a connection is added for every 4 check-ins a second
    /// (intervals of 250 ms, several times the p99). While it runs, every service's `/metrics` is read each second for
    /// the worst consumer lag (`surge_kafka_consumer_lag_seconds`) and outbox lag (`surge_outbox_lag_seconds`).
    func paced(rate: Double, seconds: Int, usersFile: URL, in directory: URL) async throws -> (LoadRun, worstLag: (seconds: Double, series: String)) {
        let connections = max(self.connections, Int((rate / 4).rounded(.up)))
        let interval = Double(connections) * 1000 / rate
        let calibration = try wrk(usersFile: usersFile, in: directory, seconds: 3, delayMilliseconds: interval, connections: connections)
        let requestTime = max(0, Double(connections) * 1000 / calibration.requestsPerSecond - interval)
        _ = try await SettleBench.settle(settleURL, timeout: .seconds(900))
        let urls = settleURL
        let watcher = Task {
            var worst = (seconds: 0.0, series: "")
            while !Task.isCancelled {
                for url in urls {
                    if let lag = try? await SettleBench.worstLag(url), lag.seconds > worst.seconds { worst = lag }
                }
                try? await Task.sleep(for: .seconds(1))
            }
            return worst
        }
        let delay = max(0, interval - requestTime)
        let run = try await Task.detached { [self] in
            try wrk(usersFile: usersFile, in: directory, seconds: seconds, delayMilliseconds: delay, connections: connections)
        }.value
        watcher.cancel()
        return (run, await watcher.value)
    }
    /// The process's high-water mark of resident memory (VmHWM), in KiB.
    static func peakResidentKibibytes(of pid: Int32) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first }.flatMap { Double($0) }
    }

    struct LoadRun {
        var requestsPerSecond: Double
        var duration: Double
        var p50: Double
        var p99: Double
        var p999: Double
        var failures: Int
    }

    /// One wrk run over the users in `usersFile`: each wrk thread takes its own share of the users, and each user
    /// goes through the six-step mix in order. A delay paces every connection that many milliseconds between requests,
    /// on average.
    func wrk(
        usersFile: URL, in directory: URL, seconds: Int, delayMilliseconds: Double?, connections: Int? = nil, threads: Int? = nil
    ) throws -> LoadRun {
        let connections = connections ?? self.connections
        let threads = threads ?? self.threads
        let script = directory.appendingPathComponent("checkin-\(UUID().uuidString).lua")
        var lua = """
            local threadCount = 0
            setup = function(thread)
              thread:set("threadIndex", threadCount)
              thread:set("threadTotal", \(threads))
              threadCount = threadCount + 1
            end

            local mine = {}
            local turn = 0
            local steps = {
              { "PUT", "/tasks/t", '{"done":true}' }, { "PUT", "/tasks/u", '{"done":true}' }, { "POST", "/tasks/q/logs", '{"quantity":250}' },
              { "PUT", "/tasks/t", '{"done":false}' }, { "PUT", "/tasks/u", '{"done":false}' }, { "POST", "/tasks/q/logs", '{"quantity":250}' },
            }
            init = function(args)
              local index = 0
              for line in io.lines("\(usersFile.path)") do
                if index % threadTotal == threadIndex then
                  local token, attempt = line:match("(%S+) (%S+)")
                  mine[#mine + 1] = { token = token, attempt = attempt }
                end
                index = index + 1
              end
            end

            request = function()
              local user = mine[(turn % #mine) + 1]
              local step = steps[(math.floor(turn / #mine) % #steps) + 1]
              turn = turn + 1
              return wrk.format(step[1], "/v1/attempts/" .. user.attempt .. step[2],
                { ["Authorization"] = "Bearer " .. user.token, ["Content-Type"] = "application/json" }, step[3])
            end

            done = function(summary, latency, requests)
              local e = summary.errors
              io.write(string.format("SURGE-RESULT %d %d %d %d %d %d %d\\n", summary.requests, summary.duration,
                latency:percentile(50.0), latency:percentile(99.0), latency:percentile(99.9), e.status, e.connect + e.read + e.write + e.timeout))
            end

            """
        // Each wait drawn from an exponential distribution of that mean: requests arrive as a Poisson stream, not in
        // bursts of every connection at once (each thread's connections start together and would keep in step).
        if let delayMilliseconds {
            lua += """
                local seeded = false
                delay = function()
                  if not seeded then math.randomseed(os.time() * 1000 + threadIndex); seeded = true end
                  return math.floor(-\(delayMilliseconds) * math.log(1 - math.random()))
                end

                """
        }
        try lua.write(to: script, atomically: true, encoding: .utf8)
        let output = try BenchProcess.run(
            "/usr/bin/wrk", ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--timeout", "10s", "-s", script.path, gateway])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("SURGE-RESULT") }) else {
            throw BenchError("wrk printed no result: \(output)")
        }
        let numbers = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard numbers.count == 7, numbers[0] > 0 else { throw BenchError("wrk: \(line)") }
        let duration = numbers[1] / 1e6
        return LoadRun(
            requestsPerSecond: numbers[0] / duration, duration: duration, p50: numbers[2] / 1000, p99: numbers[3] / 1000,
            p999: numbers[4] / 1000, failures: Int(numbers[5] + numbers[6]))
    }

    // MARK: Processes

    func pid(of name: String) throws -> Int32 { try BenchProcess.pid(inFile: "\(pidDirectory)/\(name).pid") }

    /// CPU seconds (user + system) so far of each named process, and of the PostgreSQL server with all its backends.
    func cpuSeconds() throws -> [String: Double] {
        var seconds = BenchProcess.cpuSeconds(of: Self.processes, pidDirectory: pidDirectory)
        seconds["postgres"] = try BenchProcess.postgresCPUSeconds(pgdata: pgdata)
        return seconds
    }

    /// Resident, proportional and anonymous memory in KiB, from /proc/<pid>/smaps_rollup.
    static func memory(of pid: Int32) throws -> (rss: Double, pss: Double, anonymous: Double) {
        let rollup = try String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)
        func kibibytes(_ field: String) -> Double? {
            rollup.split(separator: "\n").first { $0.hasPrefix(field + ":") }
                .flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first }.flatMap { Double($0) }
        }
        guard let rss = kibibytes("Rss"), let pss = kibibytes("Pss"), let anonymous = kibibytes("Anonymous") else {
            throw BenchError("no memory figures for process \(pid)")
        }
        return (rss, pss, anonymous)
    }
}

/// The yardstick: Debian's pgbench, `-N` (simple update: three statements and an insert in a transaction), in its own
/// database on the same server.
struct PgBench {
    var url: String
    var clients: Int
    var threads: Int

    func run(seconds: Int) throws -> (tps: Double, latency: Double, duration: Double) {
        guard let components = URLComponents(string: url), let host = components.host, let user = components.user else {
            throw BenchError("--database must be postgres://user:password@host:port/database")
        }
        let connection = ["-h", host, "-p", "\(components.port ?? 5432)", "-U", user]
        let environment = ["PGPASSWORD": components.password ?? ""]
        _ = try? BenchProcess.run("/usr/bin/psql", connection + ["-d", "postgres", "-q", "-c", "CREATE DATABASE surge_pgbench"], environment: environment, includingErrors: true)
        _ = try BenchProcess.run("/usr/bin/pgbench", connection + ["-i", "-q", "-s", "\(max(clients, 1))", "surge_pgbench"], environment: environment, includingErrors: true)
        // A count of transactions, not `-T`: pgbench ends a timed run with SIGALRM, which a child of this process may
        // inherit blocked. A short run sizes the measured one.
        func measure(transactionsPerClient: Int) throws -> (tps: Double, latency: Double, duration: Double) {
            let output = try BenchProcess.run(
                "/usr/bin/pgbench",
                connection + ["-N", "-c", "\(clients)", "-j", "\(threads)", "-t", "\(transactionsPerClient)", "surge_pgbench"], environment: environment, includingErrors: true)
            func number(after prefix: String) -> Double? {
                output.split(separator: "\n").first { $0.hasPrefix(prefix) }
                    .flatMap { $0.dropFirst(prefix.count).split(separator: " ").first }.flatMap { Double($0) }
            }
            guard let tps = number(after: "tps = "), let latency = number(after: "latency average = ") else { throw BenchError("pgbench: \(output)") }
            return (tps, latency, Double(transactionsPerClient * clients) / tps)
        }
        let calibration = try measure(transactionsPerClient: 200)
        return try measure(transactionsPerClient: max(200, Int(calibration.tps * Double(seconds)) / clients))
    }
}
