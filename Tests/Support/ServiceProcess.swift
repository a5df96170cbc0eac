import Foundation
import Synchronization

/// A Surge executable running as its own process, as in production: its own environment and its log in a file.
/// It announces where it listens by writing a file (a service its HTTP port, the broker its bootstrap address).
public final class ServiceProcess: Sendable {
    public let service: String
    public let logFile: URL
    private let executable: URL
    private let arguments: [String]
    private let environment: [String: String]
    private let announcementFile: URL
    private let running = Mutex<Process?>(nil)
    private let announced = Mutex<String?>(nil)

    init(service: String, executable: String, arguments: [String], environment: [String: String], announcementFile: URL, logDirectory: URL) {
        self.service = service
        self.executable = TestEnvironment.binaries.appendingPathComponent(executable)
        self.arguments = arguments
        self.logFile = logDirectory.appendingPathComponent("\(service).log")
        self.announcementFile = announcementFile
        var environment = environment
        environment["PATH"] = ProcessInfo.processInfo.environment["PATH"]
        self.environment = environment
    }

    /// A service (`surge-<name>`) listening on a port the OS picks.
    public static func service(_ name: String, instance: String, environment: [String: String], logDirectory: URL) -> ServiceProcess {
        let portFile = logDirectory.appendingPathComponent("\(instance).port")
        var environment = environment
        environment["SURGE_PORT_FILE"] = portFile.path
        environment["HTTP_PORT"] = environment["HTTP_PORT"] ?? "0"
        return ServiceProcess(
            service: instance, executable: "surge-\(name)", arguments: [], environment: environment,
            announcementFile: portFile, logDirectory: logDirectory)
    }

    /// The development broker (`surge-broker`).
    public static func broker(logDirectory: URL, environment: [String: String] = [:]) -> ServiceProcess {
        let file = logDirectory.appendingPathComponent("broker.bootstrap")
        return ServiceProcess(
            service: "broker", executable: "surge-broker", arguments: ["--bootstrap-file", file.path], environment: environment,
            announcementFile: file, logDirectory: logDirectory)
    }

    /// What the process announced: its port, or the broker's bootstrap address.
    public var announcement: String {
        get throws {
            guard let value = announced.withLock({ $0 }) else { throw ServiceProcessError.notListening(service) }
            return value
        }
    }

    public var port: Int {
        get throws {
            guard let port = Int(try announcement) else { throw ServiceProcessError.notListening(service) }
            return port
        }
    }

    public var baseURL: String {
        get throws { "http://127.0.0.1:\(try port)" }
    }

    public var isRunning: Bool { running.withLock { $0?.isRunning ?? false } }

    /// Starts the process and waits until it listens.
    public func start() async throws {
        try? FileManager.default.removeItem(at: announcementFile)
        if !FileManager.default.fileExists(atPath: logFile.path) {
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        }
        let log = try FileHandle(forWritingTo: logFile)
        try log.seekToEnd()
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = log
        process.standardError = log
        try process.run()
        running.withLock { $0 = process }
        TestEnvironment.recordChild(process.processIdentifier)
        let file = announcementFile
        let listening = try await eventually("\(service) to listen (log: \(logFile.path))", timeout: .seconds(60)) { () -> String?? in
            guard process.isRunning else { return .some(nil) }
            return (try? String(contentsOf: file, encoding: .utf8)).flatMap { $0.isEmpty ? nil : .some($0) }
        }
        guard let value = listening else { throw ServiceProcessError.exited(service, logFile.path) }
        announced.withLock { $0 = value }
    }

    /// Sends `signal` and waits for the process to exit.
    public func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(20)) async {
        guard let process = running.withLock({ $0 }), process.isRunning else { return }
        kill(process.processIdentifier, signal)
        let exited = (try? await waitUntil("\(service) to exit", timeout: timeout) { !process.isRunning }) != nil
        if !exited {
            kill(process.processIdentifier, SIGKILL)
            try? await waitUntil("\(service) to die", timeout: .seconds(5)) { !process.isRunning }
        }
    }

    /// kill -9: no graceful shutdown, no flush.
    public func crash() async {
        await stop(signal: SIGKILL)
    }

    public var exitStatus: Int32? {
        running.withLock { process in
            guard let process, !process.isRunning else { return nil }
            return process.terminationStatus
        }
    }
}

public enum ServiceProcessError: Error, CustomStringConvertible {
    case notListening(String)
    case exited(String, String)

    public var description: String {
        switch self {
        case .notListening(let service): "\(service) is not listening"
        case .exited(let service, let log): "\(service) exited; see \(log)"
        }
    }
}
