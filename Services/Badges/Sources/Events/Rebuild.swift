import BadgesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgeRuntime

/// `surge-badges rebuild`: users, relations, what is kept of each challenge and who joined it, facts and awards rebuilt from the
/// earliest offset of every topic the service reads, through the consumer's own handlers (`BadgesEvents`) on a
/// `MemoryBadgeStore`, then written to the tables, all in one transaction.
///
/// Order: each partition in offset order, partitions merged by event time; a duplicate is applied once, as the inbox
/// does. Every event that had an effect is recorded as processed by the consumer group (copied while the replay
/// applies it), so the replicas, started again, pass over what the rebuild read. Nothing is published while replaying; at the end the awards are compared with those held
/// before:
/// - held before and derived again: kept with the date the user first saw;
/// - derived but not held before (the incremental path missed them): stored and published, as backfilled;
/// - held before but not derived (their events are past the topics' retention): kept, since awards are never taken
///   back, and counted.
/// So a rebuild publishes nothing twice. The replicas must be stopped: each running one holds `ReplicaPresence.lock`
/// shared, and the rebuild takes it exclusively or stops before reading.
enum Rebuild {
    struct Report: CustomStringConvertible {
        var replayed = EventHistory.ReplayedInMemory()
        var awards = 0
        var published = 0
        var keptWithoutEvents = 0

        var description: String {
            "rebuilt \(awards) awards \(replayed.counts): \(published) new awards published, \(keptWithoutEvents) kept without events behind them; "
                + replayed.timing
        }
    }

    enum RebuildError: Error, CustomStringConvertible {
        case replicasRunning

        var description: String { "replicas of the badge service are running: stop them (scale to zero) first" }
    }

    static func run(_ settings: ServiceSettings, catalogue: BadgeCatalogue) async throws -> Report {
        let infrastructure = try ServiceInfrastructure(settings, migrations: [BadgesMigrations.set])
        try await infrastructure.migrate()
        let logger = infrastructure.logger
        let awarder = Awarder(catalogue: catalogue)
        let routes = {
            var routes = ReplayRoutes<MemoryBadgeStore>()
            BadgesEvents.visit(&routes, awarder: awarder)
            return routes
        }()
        let group = "surge-\(settings.service)"
        return try await PostgresClient.withRunning(infrastructure.database) { client in
            try await client.withConnection { connection in
                let locked = try await connection.query(
                    "SELECT pg_try_advisory_lock(hashtext(\(ReplicaPresence.lock)))", logger: logger
                ).collect().first?.decode(Bool.self) ?? false
                guard locked else { throw RebuildError.replicasRunning }
                var store = MemoryBadgeStore()
                var report = Report()
                report.replayed = try await EventHistory.rebuild(
                    routes, into: &store, group: group, on: connection, configuration: settings.kafka, logger: logger
                ) { rebuilt in
                    try await replace(with: rebuilt, on: connection, logger: logger)
                    let held = PostgresBadgeStore(connection: connection, logger: logger, outbox: infrastructure.outbox)
                    try await reconcile(&report, publishing: awarder, store: held, at: infrastructure.clock.now())
                }
                return report
            }
        }
    }

    /// Keeps the awards held now aside, and replaces every table the replay derives with what it derived.
    private static func replace(with rebuilt: MemoryBadgeStore, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("CREATE TEMPORARY TABLE previous_awards ON COMMIT DROP AS SELECT * FROM awards", logger: logger)
        try await connection.query(
            "TRUNCATE users, erased_users, friendships, group_members, facts, awards, challenges, participants", logger: logger)
        try await RebuildWriter.write(rebuilt, on: connection, logger: logger)
        // Statistics for what was just written: without them the planner takes the emptied tables for empty and joins
        // the awards with those held before one row at a time (seconds for ten thousand awards).
        try await connection.query("ANALYZE awards, previous_awards", logger: logger)
    }

    /// Compares the awards derived with those held before (see the type's comment), publishing what is new.
    private static func reconcile(_ report: inout Report, publishing awarder: Awarder, store: PostgresBadgeStore, at time: Date) async throws {
        var store = store
        let (connection, logger) = (store.connection, store.logger)
        try await connection.query(
            """
            UPDATE awards a SET awarded_at = p.awarded_at, backfilled = p.backfilled FROM previous_awards p
            WHERE (a.user_id, a.badge_id, a.level, a.period) = (p.user_id, p.badge_id, p.level, p.period)
            """, logger: logger)
        for row in try await connection.query(
            """
            SELECT user_id, badge_id, level, period, title FROM awards a WHERE NOT EXISTS (
                SELECT 1 FROM previous_awards p WHERE (a.user_id, a.badge_id, a.level, a.period) = (p.user_id, p.badge_id, p.level, p.period))
            ORDER BY awarded_at, user_id, badge_id, level
            """, logger: logger
        ).collect() {
            let (userID, badgeID, level, period, title) = try row.decode((UUID, String, Int, String, String).self)
            try await connection.query(
                """
                UPDATE awards SET backfilled = true, awarded_at = \(time)
                WHERE user_id = \(userID) AND badge_id = \(badgeID) AND level = \(level) AND period = \(period)
                """, logger: logger)
            try await awarder.publish(
                Award(badgeID: badgeID, level: level, period: period, title: title), to: userID, at: time, backfilled: true, trace: nil, store: &store)
            report.published += 1
        }
        report.keptWithoutEvents = try await connection.query(
            """
            WITH kept AS (
                INSERT INTO awards SELECT p.* FROM previous_awards p
                WHERE NOT EXISTS (SELECT 1 FROM erased_users e WHERE e.user_id = p.user_id)
                ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*)::bigint FROM kept
            """, logger: logger
        ).collect().first?.decode(Int.self) ?? 0
        // The replay judged every event by the current catalogue: record it as backfilled (this awards nothing more).
        _ = try await Backfill(awarder: awarder, outbox: store.outbox).run(on: connection, at: time, logger: logger)
        report.awards = try await connection.query("SELECT count(*)::bigint FROM awards", logger: logger).collect().first?.decode(Int.self) ?? 0
    }
}
