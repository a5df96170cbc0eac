import Foundation
import Logging
import SurgeContracts
import SurgeRuntime
import Synchronization

/// A whole Surge system for one test: a fresh database, a broker, and services as separate processes.
public final class TestStack: Sendable {
    public enum Broker: Sendable {
        /// A mock cluster inside the test process, so the test can take brokers down.
        case inProcess
        /// The `surge-broker` executable, as `make run` uses it.
        case executable
    }

    public let database: TestDatabase
    public let kafka: TestKafka?
    public let bootstrapServers: String
    public let logDirectory: URL
    /// The `INTERNAL_AUTH_SECRET` every service of this stack shares.
    public let internalSecret = "test-" + UUID().uuidString + UUID().uuidString
    private let brokerProcess: ServiceProcess?
    private let processes = Mutex<[String: ServiceProcess]>([:])

    private init(database: TestDatabase, kafka: TestKafka?, brokerProcess: ServiceProcess?, bootstrapServers: String, logDirectory: URL) {
        self.database = database
        self.kafka = kafka
        self.brokerProcess = brokerProcess
        self.bootstrapServers = bootstrapServers
        self.logDirectory = logDirectory
    }

    public static func create(name: String, broker: Broker = .inProcess) async throws -> TestStack {
        let logDirectory = TestEnvironment.logDirectory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        let database = try await TestDatabase.create()
        switch broker {
        case .inProcess:
            let kafka = try TestKafka(partitions: 4)
            return TestStack(database: database, kafka: kafka, brokerProcess: nil, bootstrapServers: kafka.bootstrapServers, logDirectory: logDirectory)
        case .executable:
            let process = ServiceProcess.broker(logDirectory: logDirectory)
            try await process.start()
            return TestStack(
                database: database, kafka: nil, brokerProcess: process, bootstrapServers: try process.announcement,
                logDirectory: logDirectory)
        }
    }

    /// Environment shared by every service process of this stack.
    public func environment(for service: String) -> [String: String] {
        [
            "SURGE_ENV": "test",
            "LOG_FORMAT": "text",
            "LOG_LEVEL": "info",
            "HTTP_HOST": "127.0.0.1",
            "DATABASE_URL": database.configuration(for: service).url,
            "KAFKA_BOOTSTRAP_SERVERS": bootstrapServers,
            "KAFKA_CONSUMER_PROPERTIES": "fetch.wait.max.ms=10,session.timeout.ms=6000,heartbeat.interval.ms=500",
            "KAFKA_PRODUCER_PROPERTIES": "message.timeout.ms=60000",
            "OUTBOX_POLL_INTERVAL_MS": "200",
            "CONSUMER_RETRY_BACKOFF_MS": "20",
            "INTERNAL_AUTH_SECRET": internalSecret,
        ]
    }

    /// Starts `surge-<service>` (as `instance`, for a second replica) and waits until it listens. The gateway is
    /// pointed at every service already running.
    @discardableResult
    public func start(_ service: String, instance: String? = nil, environment extra: [String: String] = [:]) async throws -> ServiceProcess {
        let instance = instance ?? service
        var environment = environment(for: service)
        if service == "gateway" {
            // Tests drive many requests from one address; the rate-limit test sets its own budgets.
            environment["RATE_LIMIT_PER_IP_PER_MINUTE"] = "1000000"
            environment["RATE_LIMIT_PER_USER_PER_MINUTE"] = "1000000"
            environment["RATE_LIMIT_CREDENTIALS_PER_MINUTE"] = "1000000"
            for (name, process) in processes.withLock({ $0 }) where process.isRunning {
                if let url = try? process.baseURL, SurgeService(rawValue: name) != nil {
                    environment["UPSTREAM_\(name.uppercased())_URL"] = url
                }
            }
        }
        if service == "identity" {
            // Account mails go to the stack's notification service when it runs first; otherwise to a port where
            // nothing listens (they are retried, and no test waits for them).
            let notifications = processes.withLock { $0["notifications"] }.flatMap { $0.isRunning ? try? $0.baseURL : nil }
            environment["NOTIFICATIONS_URL"] = notifications ?? "http://127.0.0.1:9"
        }
        environment.merge(extra) { _, new in new }
        let process = ServiceProcess.service(service, instance: instance, environment: environment, logDirectory: logDirectory)
        // Recorded before it starts, so a test can read the log and exit status of a process that refused to start.
        processes.withLock { $0[instance] = process }
        try await process.start()
        return process
    }

    /// Runs `surge-<service> <arguments>` (a one-off command, such as a rebuild) to its end with the service's
    /// environment; returns its exit status and what it printed.
    public func runCommand(_ service: String, _ arguments: [String], timeout: Duration = .seconds(120)) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = TestEnvironment.binaries.appendingPathComponent("surge-\(service)")
        process.arguments = arguments
        process.environment = environment(for: service)
        let name = "\(service) \(arguments.joined(separator: " "))".map { $0.isLetter || $0.isNumber ? $0 : "-" }
        let log = logDirectory.appendingPathComponent(String(name.prefix(80)) + ".log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                process.terminate()
                throw ServiceProcessError.exited("surge-\(service) \(arguments.joined(separator: " "))", "did not finish within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return (process.terminationStatus, try String(contentsOf: log, encoding: .utf8))
    }

    public func process(_ instance: String) throws -> ServiceProcess {
        guard let process = processes.withLock({ $0[instance] }) else { throw ServiceProcessError.notListening(instance) }
        return process
    }

    /// An HTTP client for the gateway (or any started instance).
    public func http(_ instance: String = "gateway") throws -> TestHTTP {
        TestHTTP(baseURL: try process(instance).baseURL)
    }

    /// Moves the simulated clock of every running service that has one to `instant`, as `surge-admin clock set` does
    /// for a stack started by `make run`: one clock for the whole system. Unlike the tool it may move the clock back
    /// (`rewind`): a test starts its stack's timeline wherever it needs, often before the real now.
    public func setClock(_ instant: Date) async throws {
        let running = processes.withLock { $0.values.filter(\.isRunning) }
        var moved = 0
        for process in running {
            let response = try await TestHTTP(baseURL: try process.baseURL).put(
                "/internal/clock", json: ["now": Timestamp.format(instant), "rewind": true])
            if response.status == 200 { moved += 1 } else if response.status != 404 { throw ClockRefused(detail: response.text) }
        }
        if moved == 0 { throw ClockRefused(detail: "no running service has a simulated clock") }
    }

    struct ClockRefused: Error { let detail: String }

    /// A client for a service called directly as the gateway calls it, on behalf of `caller`.
    public func signedHTTP(_ instance: String, caller: String?) throws -> TestHTTP {
        try http(instance).signedAsGateway(InternalCallSigner(secret: internalSecret), caller: caller)
    }

    /// The warnings and errors each process logged, the last few of each, on standard error: CI keeps the test run's
    /// output but not the processes' logs, and a failed system test is diagnosed from these lines.
    func printProblemsLogged(last count: Int = 12) {
        let files = (try? FileManager.default.contentsOfDirectory(at: logDirectory, includingPropertiesForKeys: nil)) ?? []
        var report = ""
        for file in files.filter({ $0.pathExtension == "log" }).sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            // Test stacks log as text: `<time> <level> <label>: <message>`.
            let problems = text.split(separator: "\n").filter { line in
                let fields = line.split(separator: " ", maxSplits: 2)
                return fields.count == 3 && ["warning", "error", "critical"].contains(fields[1])
            }
            guard !problems.isEmpty else { continue }
            report += "\(file.lastPathComponent): \(problems.count) warnings or errors, the last \(min(count, problems.count)):\n"
            for line in problems.suffix(count) { report += "  \(line.prefix(600))\n" }
        }
        guard !report.isEmpty else { return }
        FileHandle.standardError.write(Data("stack \(logDirectory.lastPathComponent) failed; its processes logged:\n\(report)".utf8))
    }

    /// Stops every process and drops the database.
    public func tearDown() async {
        let all = processes.withLock { $0.values }
        await withTaskGroup(of: Void.self) { group in
            for process in all { group.addTask { await process.stop() } }
        }
        await brokerProcess?.stop()
        await database.drop()
    }
}

/// Runs `body` with a stack that is torn down afterwards, pass or fail.
public func withTestStack<Result>(
    _ name: String, broker: TestStack.Broker = .inProcess, _ body: (TestStack) async throws -> Result
) async throws -> Result {
    let stack = try await TestStack.create(name: name, broker: broker)
    do {
        let result = try await body(stack)
        await stack.tearDown()
        return result
    } catch {
        stack.printProblemsLogged()
        await stack.tearDown()
        throw error
    }
}
