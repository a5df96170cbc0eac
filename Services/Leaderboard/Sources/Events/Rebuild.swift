import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgeRuntime

/// `surge-leaderboard rebuild`: the boards and the directory rebuilt from the earliest offset of every topic the
/// leaderboard reads, with the same handlers as the incremental path (`LeaderboardEvents`) on a
/// `MemoryLeaderboardStore`, then written to PostgreSQL, all in one transaction.
///
/// Order: each partition in offset order (as the consumer reads it), partitions merged by event time (ties by topic,
/// partition, offset), which is the order things happened in. Nothing is published: no `rank.changed`, and the
/// windows already closed keep their revision (their standings are the same). Events that cannot be decoded are
/// skipped and counted (the incremental path parked them on the dead-letter topic). Every event applied is recorded
/// as processed by the consumer group in the same transaction, copied while the replay applies it; those rows replace
/// the table's (the schema holds its one group's), since every event the group had processed is among them unless the
/// topic's retention has dropped it, and then it cannot be delivered again either. The group's offsets are left alone,
/// and the replicas, started again, pass over what the rebuild read as duplicates and go on from there. The replicas must be stopped
/// (they would change what the rebuild replaces): each running one holds `ChangeFeed.replicas` shared, and the
/// rebuild takes it exclusively or stops before reading.
enum Rebuild {
    struct Report: CustomStringConvertible {
        var replayed = EventHistory.ReplayedInMemory()
        var boardWindows = 0
        var scores = 0

        var description: String { "rebuilt \(boardWindows) board windows (\(scores) scores) \(replayed.counts) \(replayed.timing)" }
    }

    static func run(_ settings: ServiceSettings, logger: Logger) async throws -> Report {
        let routes = {
            var routes = ReplayRoutes<MemoryLeaderboardStore>()
            LeaderboardEvents.visit(&routes)
            return routes
        }()
        let group = "surge-\(settings.service)"
        let client = settings.database.makeClient(schema: settings.service, logger: logger)
        return try await PostgresClient.withRunning(client) { client in
            try await client.withConnection { connection in
                guard try await ChangeFeed.replicas.takeExclusively(on: connection, logger: logger) else { throw RebuildError.replicasRunning }
                return try await rebuild(routes: routes, group: group, settings: settings, connection: connection, logger: logger)
            }
        }
    }

    enum RebuildError: Error, CustomStringConvertible {
        case replicasRunning

        var description: String { "replicas of the leaderboard are running: stop them (scale to zero) first" }
    }

    private static func rebuild(routes: ReplayRoutes<MemoryLeaderboardStore>, group: String, settings: ServiceSettings, connection: PostgresConnection, logger: Logger)
        async throws -> Report
    {
        var store = MemoryLeaderboardStore()
        var report = Report()
        report.replayed = try await EventHistory.rebuild(
            routes, into: &store, group: group, on: connection, configuration: settings.kafka, logger: logger
        ) { rebuilt in
            (report.boardWindows, report.scores) = try await RebuildWriter(connection: connection, logger: logger).write(rebuilt)
        }
        return report
    }
}
