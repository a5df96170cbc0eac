import Foundation

/// Runs a program to its end: its exit status and its output (standard output and error together). The output is read
/// while the program runs: a pipe holds 64 KiB, and a program that fills it would wait for a reader forever.
public func runProgram(
    _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, input: Data? = nil
) async throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let inputPipe = input.map { _ in Pipe() }
    if let inputPipe { process.standardInput = inputPipe }
    let finished = AsyncStream<Void> { continuation in
        process.terminationHandler = { _ in continuation.yield(); continuation.finish() }
    }
    try process.run()
    if let input, let inputPipe {
        DispatchQueue.global().async {
            try? inputPipe.fileHandleForWriting.write(contentsOf: input)
            try? inputPipe.fileHandleForWriting.close()
        }
    }
    // Blocking reads stay off Swift's cooperative threads.
    let said = await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: output.fileHandleForReading.readDataToEndOfFile()) }
    }
    for await _ in finished {}
    return (process.terminationStatus, String(decoding: said, as: UTF8.self))
}

/// Runs the built `surge-admin` with the test cluster's administrator URL (as `provision` connects); its exit status
/// and output.
public func runSurgeAdmin(_ arguments: [String]) async throws -> (status: Int32, output: String) {
    var environment = ProcessInfo.processInfo.environment
    environment["SURGE_ADMIN_DATABASE_URL"] = try TestEnvironment.adminDatabaseURL
    return try await runProgram(TestEnvironment.binaries.appendingPathComponent("surge-admin"), arguments, environment: environment)
}
