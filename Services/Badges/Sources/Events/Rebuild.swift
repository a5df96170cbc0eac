import BadgesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
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
/// So a rebuild publishes nothing twice. The replicas must be stopped: each running one holds `Rebuild.replicas`
/// shared, and the rebuild takes it exclusively or stops before reading.
enum Rebuild {
    /// Held shared by every running replica (`ReplicaPresence`).
    static let replicas = ReplicaLock("surge-badges-replicas")

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
                guard try await replicas.takeExclusively(on: connection, logger: logger) else { throw RebuildError.replicasRunning }
                var store = MemoryBadgeStore()
                var report = Report()
                report.replayed = try await EventHistory.rebuild(
                    routes, into: &store, group: group, on: connection, configuration: settings.kafka, logger: logger
                ) { rebuilt in
                    try await RebuildStore(connection: connection, logger: logger).replaceTables(with: rebuilt)
                    let held = PostgresBadgeStore(connection: connection, logger: logger, outbox: infrastructure.outbox)
                    try await reconcile(&report, publishing: awarder, store: held, at: infrastructure.clock.now())
                }
                return report
            }
        }
    }

    /// Compares the awards derived with those held before (see the type's comment), publishing what is new.
    private static func reconcile(_ report: inout Report, publishing awarder: Awarder, store: PostgresBadgeStore, at time: Date) async throws {
        var store = store
        let rebuildStore = RebuildStore(connection: store.connection, logger: store.logger)
        try await rebuildStore.keepDatesHeldBefore()
        for (userID, award) in try await rebuildStore.awardsNotHeldBefore() {
            try await rebuildStore.markBackfilled(award, of: userID, at: time)
            try await awarder.publish(award, to: userID, at: time, backfilled: true, trace: nil, store: &store)
            report.published += 1
        }
        report.keptWithoutEvents = try await rebuildStore.keepAwardsNotDerived()
        // The replay judged every event by the current catalogue: record it as backfilled (this awards nothing more).
        _ = try await Backfill(awarder: awarder, outbox: store.outbox).run(on: store.connection, at: time, logger: store.logger)
        report.awards = try await rebuildStore.awardCount()
    }
}
