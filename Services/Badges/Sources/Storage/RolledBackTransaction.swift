import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs `body` in a transaction that is rolled back whatever it does (`surge-badges dry-run`), then returns what
    /// it returned or throws what it threw.
    func rolledBack<Value: Sendable>(logger: Logger, _ body: () async throws -> Value) async throws -> Value {
        try await query("BEGIN", logger: logger)
        let result: Result<Value, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        try await query("ROLLBACK", logger: logger)
        return try result.get()
    }
}
