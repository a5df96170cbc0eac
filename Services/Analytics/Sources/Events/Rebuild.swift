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
        var replayed: EventHistory.Replayed
        var users: Int
        var seconds = 0.0

        var description: String {
            String(
                format: "rebuilt the facts of %d users from %d events (%d applied, %d duplicates, %d skipped) in %.2f s", users, replayed.events,
                replayed.applied, replayed.duplicates, replayed.skipped, seconds)
        }
    }

    static func run(_ settings: ServiceSettings, handlers: EventHandlers) async throws -> Report {
        let started = ContinuousClock.now
        let infrastructure = try ServiceInfrastructure(settings, migrations: [AnalyticsMigrations.set])
        try await infrastructure.migrate()
        let logger = infrastructure.logger
        let group = SurgeService.analytics.consumerGroup
        var report = try await PostgresClient.withRunning(infrastructure.database) { client in
            try await client.withConnection { connection in
                try await connection.transaction(logger: logger) {
                    let facts = Facts(connection: connection, logger: logger)
                    try await facts.removeAll()
                    let records = try await EventHistory.read(handlers.topics.sorted(), configuration: settings.kafka, logger: logger)
                    let replayed = try await EventHistory.replay(records, through: handlers, group: group, on: connection, logger: logger)
                    return Report(replayed: replayed, users: try await facts.userCount())
                }
            }
        }
        let elapsed = ContinuousClock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }
}
