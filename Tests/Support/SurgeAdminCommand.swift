import Foundation

/// Runs the built `surge-admin` with the test cluster's administrator URL (as `provision` connects); its exit status
/// and output.
public func runSurgeAdmin(_ arguments: [String]) async throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = TestEnvironment.binaries.appendingPathComponent("surge-admin")
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["SURGE_ADMIN_DATABASE_URL"] = try TestEnvironment.adminDatabaseURL
    process.environment = environment
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    let finished = AsyncStream<Void> { continuation in
        process.terminationHandler = { _ in continuation.yield(); continuation.finish() }
    }
    try process.run()
    for await _ in finished {}
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return (process.terminationStatus, output)
}
