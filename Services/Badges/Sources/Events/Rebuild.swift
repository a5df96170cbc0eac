import BadgesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgeRuntime

/// `surge-badges rebuild`: users, relations, what is kept of each challenge and who joined it, facts and awards rebuilt from the
/// earliest offset of every topic the service reads, through the consumer's own handlers (`BadgesEvents`), in one transaction.
///
/// Order: each partition in offset order, partitions merged by event time. Each event is recorded as processed by
/// the consumer group as it is applied (a duplicate is applied once, as the inbox does), so the replicas, started
/// again, pass over what the rebuild read. Nothing is published while replaying; at the end the awards are compared
/// with those held before:
/// - held before and derived again: kept with the date the user first saw;
/// - derived but not held before (the incremental path missed them): stored and published, as backfilled;
/// - held before but not derived (their events are past the topics' retention): kept, since awards are never taken
///   back, and counted.
/// So a rebuild publishes nothing twice. The replicas must be stopped: each running one holds `ReplicaPresence.lock`
/// shared, and the rebuild takes it exclusively or stops before reading.
enum Rebuild {
    struct Report: CustomStringConvertible {
        var events = 0
        var applied = 0
        var duplicates = 0
        var skipped = 0
        var awards = 0
        var published = 0
        var keptWithoutEvents = 0
        var readSeconds = 0.0
        var applySeconds = 0.0

        var eventsPerSecond: Double { readSeconds + applySeconds > 0 ? Double(events) / (readSeconds + applySeconds) : 0 }

        var description: String {
            "rebuilt \(awards) awards from \(events) events (\(applied) applied, \(duplicates) duplicates, \(skipped) skipped): "
                + "\(published) new awards published, \(keptWithoutEvents) kept without events behind them; "
                + String(format: "in %.2f s: %.0f events/s (read %.2f s, apply %.2f s)", readSeconds + applySeconds, eventsPerSecond, readSeconds, applySeconds)
        }
    }

    enum RebuildError: Error, CustomStringConvertible {
        case replicasRunning

        var description: String { "replicas of the badge service are running: stop them (scale to zero) first" }
    }

    static func run(_ settings: ServiceSettings, catalogue: BadgeCatalogue, handlers: (Awarder) -> EventHandlers) async throws -> Report {
        let infrastructure = try ServiceInfrastructure(settings, migrations: [BadgesMigrations.set])
        try await infrastructure.migrate()
        let logger = infrastructure.logger
        let publishing = Awarder(catalogue: catalogue, outbox: infrastructure.outbox)
        let replaying = handlers(Awarder(catalogue: catalogue, outbox: nil))
        let group = "surge-\(settings.service)"
        return try await PostgresClient.withRunning(infrastructure.database) { client in
            try await client.withConnection { connection in
                let locked = try await connection.query(
                    "SELECT pg_try_advisory_lock(hashtext(\(ReplicaPresence.lock)))", logger: logger
                ).collect().first?.decode(Bool.self) ?? false
                guard locked else { throw RebuildError.replicasRunning }
                let reading = ContinuousClock.now
                let records = try await EventHistory.read(replaying.topics.sorted(), configuration: settings.kafka, logger: logger)
                let applying = ContinuousClock.now
                try await connection.query("BEGIN", logger: logger)
                do {
                    var report = try await replay(
                        records, through: replaying, publishing: publishing, group: group, at: infrastructure.clock.now(), on: connection,
                        logger: logger)
                    try await connection.query("COMMIT", logger: logger)
                    report.readSeconds = (applying - reading) / .seconds(1)
                    report.applySeconds = (ContinuousClock.now - applying) / .seconds(1)
                    return report
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        }
    }

    private static func replay(
        _ records: [EventRecord?], through handlers: EventHandlers, publishing awarder: Awarder, group: String, at time: Date,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> Report {
        var report = Report()
        try await connection.query("CREATE TEMPORARY TABLE previous_awards ON COMMIT DROP AS SELECT * FROM awards", logger: logger)
        try await connection.query(
            "TRUNCATE users, erased_users, friendships, group_members, facts, awards, challenges, participants, processed_events", logger: logger)
        let replayed = try await EventHistory.replay(records, through: handlers, group: group, on: connection, logger: logger)
        (report.events, report.applied, report.duplicates, report.skipped) = (replayed.events, replayed.applied, replayed.duplicates, replayed.skipped)

        try await connection.query(
            """
            UPDATE awards a SET awarded_at = p.awarded_at, backfilled = p.backfilled FROM previous_awards p
            WHERE (a.user_id, a.badge_id, a.level, a.period) = (p.user_id, p.badge_id, p.level, p.period)
            """, logger: logger)
        let store = BadgeStore(connection: connection, logger: logger)
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
                Award(badgeID: badgeID, level: level, period: period, title: title), to: userID, at: time, backfilled: true, trace: nil, store: store)
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
        _ = try await Backfill(awarder: awarder).run(on: connection, at: time, logger: logger)
        report.awards = try await connection.query("SELECT count(*)::bigint FROM awards", logger: logger).collect().first?.decode(Int.self) ?? 0
        return report
    }
}
