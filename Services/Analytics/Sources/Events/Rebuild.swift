import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgeRuntime

/// `surge-analytics rebuild`: the facts rebuilt from the earliest offset of every topic analytics reads, through the
/// consumer's own handlers, in one transaction. The figures come out the same as the incremental path's, since every
/// fact is either order-free or keyed by its own time.
///
/// The transaction empties the tables first, which locks them: running replicas wait on their next event until the
/// rebuild commits, then pass over what it replayed (it records each event as processed by the consumer group) and
/// go on. So nothing published while the rebuild reads is lost, and the replicas need not be stopped.
enum Rebuild {
    struct Report: CustomStringConvertible {
        var events = 0
        var applied = 0
        var duplicates = 0
        var skipped = 0
        var users = 0
        var seconds = 0.0

        var description: String {
            String(
                format: "rebuilt the facts of %d users from %d events (%d applied, %d duplicates, %d skipped) in %.2f s", users, events, applied,
                duplicates, skipped, seconds)
        }
    }

    static let tables = "users, activity, attempts, active_days, check_in_days, streak_breaks, telemetry_opt_outs, erased_users, processed_events"

    static func run(_ settings: ServiceSettings, handlers: EventHandlers) async throws -> Report {
        let started = ContinuousClock.now
        let infrastructure = try await ServiceInfrastructure.start(settings, migrations: [AnalyticsMigrations.set])
        let logger = infrastructure.logger
        let group = SurgeService.analytics.consumerGroup
        var report = try await PostgresClient.withRunning(infrastructure.database) { client in
            try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                do {
                    try await connection.query("TRUNCATE \(unescaped: tables)", logger: logger)
                    let records = try await EventHistory.read(handlers.topics.sorted(), configuration: settings.kafka, logger: logger)
                    let report = try await replay(records, through: handlers, group: group, on: connection, logger: logger)
                    try await connection.query("COMMIT", logger: logger)
                    return report
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        }
        let elapsed = ContinuousClock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }

    private static func replay(
        _ records: [EventRecord?], through handlers: EventHandlers, group: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> Report {
        var report = Report()
        for record in records {
            report.events += 1
            guard let record else {
                report.skipped += 1
                continue
            }
            try await connection.query("SAVEPOINT event", logger: logger)
            do {
                let first = try await connection.query(
                    """
                    INSERT INTO processed_events (consumer, event_id, event_type) VALUES (\(group), \(record.id), \(record.type))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger
                ).collect().isEmpty == false
                if !first {
                    report.duplicates += 1
                } else if try await handlers.apply(record, on: connection, logger: logger) {
                    report.applied += 1
                }
                try await connection.query("RELEASE SAVEPOINT event", logger: logger)
            } catch {
                // The incremental path would have parked it on the dead-letter topic.
                try await connection.query("ROLLBACK TO SAVEPOINT event", logger: logger)
                report.skipped += 1
                logger.warning("Event skipped by the rebuild", metadata: ["event.type": "\(record.type)", "event.id": "\(record.id)", "error": "\(error)"])
            }
        }
        report.users = try await connection.query("SELECT count(*)::bigint FROM users", logger: logger).collect().first?.decode(Int.self) ?? 0
        return report
    }
}
