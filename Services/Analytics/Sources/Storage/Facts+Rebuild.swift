import Logging
import PostgresNIO

/// `surge-analytics rebuild`'s statements on the facts, in its one transaction (`Rebuild`).
extension Facts {
    /// Every table the consumer's handlers write, its record of processed events included.
    static let tables = "users, activity, attempts, active_days, check_in_days, streak_breaks, telemetry_opt_outs, erased_users, processed_events"

    /// Empties them, which locks them until the transaction ends.
    func removeAll() async throws {
        try await connection.query("TRUNCATE \(unescaped: Self.tables)", logger: logger)
    }

    func userCount() async throws -> Int {
        try await connection.query("SELECT count(*)::bigint FROM users", logger: logger).collect().first?.decode(Int.self) ?? 0
    }
}
