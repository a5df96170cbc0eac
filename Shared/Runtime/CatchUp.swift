import Foundation

/// What a service knows of other services' data (its projections) trails their writes by the event pipeline: the
/// outbox relay is woken by `LISTEN`, so usually by a few milliseconds, but never by zero. A request that depends on
/// something the caller has only just done elsewhere (signed up, created a household, accepted a friend, published a
/// challenge) waits for it here, so that a new user's first tap succeeds without retries. Only a wait that runs out
/// is answered, with the one retryable problem `catching-up`.
public struct CatchUp: Sendable {
    /// Longer than the pipeline's worst case under load, short enough that a request for something that does not
    /// exist is not held long.
    public static let standard = CatchUp(timeout: .seconds(3))

    public var timeout: Duration

    public init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Re-evaluates `check` until it returns a value or the timeout has passed; nil then.
    public func value<T>(
        isolation: isolated (any Actor)? = #isolation, _ check: () async throws -> T?
    ) async throws -> T? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause = Duration.milliseconds(5)
        while true {
            if let value = try await check() { return value }
            let now = clock.now
            guard now < deadline else { return nil }
            try await Task.sleep(until: min(now.advanced(by: pause), deadline), clock: clock)
            pause = min(pause * 2, .milliseconds(100))
        }
    }

    /// Re-evaluates `condition` until it holds or the timeout has passed; whether it held.
    public func until(isolation: isolated (any Actor)? = #isolation, _ condition: () async throws -> Bool) async throws -> Bool {
        try await value { try await condition() ? true : nil } ?? false
    }

    /// The answer when a wait ran out: the same retryable problem wherever it happens.
    public static func problem(_ detail: String) -> Problem {
        Problem(slug: "catching-up", title: "Still catching up", status: .serviceUnavailable, detail: detail, retryAfter: 1)
    }
}
