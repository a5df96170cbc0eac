import Foundation
import Logging

/// Where `make test` put the things tests need.
public enum TestEnvironment {
    static let variables = ProcessInfo.processInfo.environment

    /// The administrator URL of the PostgreSQL cluster `make test` started.
    public static var adminDatabaseURL: String {
        get throws {
            guard let url = variables["SURGE_TEST_DATABASE_URL"], !url.isEmpty else {
                throw MissingTestEnvironment(
                    "SURGE_TEST_DATABASE_URL is not set: run the suite with `make test`, which starts PostgreSQL")
            }
            return url
        }
    }

    /// The repository root, found from this file's path.
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Where the built executables are.
    public static var binaries: URL {
        if let path = variables["SURGE_TEST_BINARIES"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return repositoryRoot.appendingPathComponent(".build/debug")
    }

    /// Where service processes started by tests write their logs.
    public static var logDirectory: URL {
        let url = URL(fileURLWithPath: variables["SURGE_TEST_LOGS"] ?? repositoryRoot.appendingPathComponent(".surge/test-logs").path)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Appends a child's pid to the run's pid file, so `make test` can stop it even if the test process dies.
    static func recordChild(_ pid: Int32) {
        guard let path = variables["SURGE_TEST_PIDS"],
            let handle = FileHandle(forWritingAtPath: path) ?? {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
                return FileHandle(forWritingAtPath: path)
            }()
        else { return }
        handle.seekToEndOfFile()
        handle.write(Data("\(pid)\n".utf8))
        handle.closeFile()
    }

    static var logLevel: Logger.Level {
        variables["SURGE_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
    }
}

public struct MissingTestEnvironment: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
