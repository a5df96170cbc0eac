import Foundation

public struct TimeoutError: Error, CustomStringConvertible {
    public let what: String
    public var description: String { "timed out waiting for \(what)" }
}

/// Polls `condition` until it returns a value or the deadline passes: tests wait on conditions, never on sleeps.
public func eventually<T>(
    _ what: String, timeout: Duration = .seconds(20), every interval: Duration = .milliseconds(50),
    _ condition: () async throws -> T?
) async throws -> T {
    let deadline = ContinuousClock.now + timeout
    var lastError: (any Error)?
    while ContinuousClock.now < deadline {
        do {
            if let value = try await condition() { return value }
        } catch {
            lastError = error
        }
        try await Task.sleep(for: interval)
    }
    throw TimeoutError(what: lastError.map { "\(what) (last error: \($0))" } ?? what)
}

/// Polls until `condition` is true.
public func waitUntil(
    _ what: String, timeout: Duration = .seconds(20), every interval: Duration = .milliseconds(50),
    _ condition: () async throws -> Bool
) async throws {
    _ = try await eventually(what, timeout: timeout, every: interval) { try await condition() ? true : nil }
}

/// Polls until `value` equals `expected`; on timeout the error tells the last value seen (slow, or stuck short?).
public func waitUntil<Value: Equatable & Sendable>(
    _ what: String, reaches expected: Value, timeout: Duration = .seconds(20), every interval: Duration = .milliseconds(50),
    _ value: () async throws -> Value
) async throws {
    var last: Value?
    do {
        try await waitUntil(what, timeout: timeout, every: interval) {
            last = try await value()
            return last == expected
        }
    } catch let timeout as TimeoutError {
        throw TimeoutError(what: "\(timeout.what) (last seen: \(last.map { "\($0)" } ?? "nothing") of \(expected))")
    }
}
