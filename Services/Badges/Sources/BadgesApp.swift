import BadgesDomain
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// Achievements from a declarative rule catalogue (`BadgeCatalogue`): facts kept per user from the event stream,
/// each badge level awarded exactly once per period, `badge.awarded` published through the outbox, and badges added
/// to the catalogue backfilled at start from the facts already kept.
public enum BadgesService {
    public static var api: [APIOperation] { BadgesAPI.all }

    struct Settings {
        var catalogue: BadgeCatalogue

        static func from(_ reader: EnvironmentReader) throws -> Settings {
            Settings(catalogue: try catalogue(at: reader.string("BADGE_CATALOGUE_FILE")))
        }

        /// The built-in catalogue, or the file's; a broken one stops the service with one line naming the badge.
        static func catalogue(at path: String?) throws -> BadgeCatalogue {
            do {
                guard let path else { return try BadgeCatalogue.standard() }
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ConfigurationError(variable: "BADGE_CATALOGUE_FILE", problem: "cannot read \(path)")
                }
                return try BadgeCatalogue.load(data)
            } catch let error as CatalogueError {
                throw ConfigurationError(variable: "BADGE_CATALOGUE_FILE", problem: error.description)
            }
        }
    }

    /// `surge-badges dry-run <catalogue.json>`: what switching to that catalogue would backfill, per new or changed
    /// badge and level, computed by the backfill itself in a transaction that is rolled back (so the counts are what
    /// the backfill then awards).
    public static func dryRun(_ settings: ServiceSettings, catalogueFile: String) async throws -> String {
        let catalogue = try Settings.catalogue(at: catalogueFile)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [BadgesMigrations.set])
        try await infrastructure.migrate()
        let backfill = Backfill(awarder: Awarder(catalogue: catalogue), outbox: infrastructure.outbox)
        let logger = infrastructure.logger
        let report = try await PostgresClient.withRunning(infrastructure.database) { client in
            try await client.withConnection { connection in
                try await connection.rolledBack(logger: logger) {
                    try await backfill.run(on: connection, at: infrastructure.clock.now(), logger: logger)
                }
            }
        }
        return "dry run of catalogue version \(catalogue.version) (\(catalogue.badges.count) badges): it would award\n\(report)"
    }

    /// `surge-badges rebuild`: facts and awards rebuilt from the earliest offsets with the catalogue in force
    /// (`Rebuild`), publishing only awards not held before; the replicas must be stopped. Returns its report.
    public static func rebuild(_ settings: ServiceSettings) async throws -> String {
        let badges = try Settings.from(settings.reader)
        return try await Rebuild.run(settings, catalogue: badges.catalogue).description
    }

    static func handlers(_ awarder: Awarder, outbox: Outbox) -> EventHandlers {
        var routes = ConsumerRoutes { connection, logger in PostgresBadgeStore(connection: connection, logger: logger, outbox: outbox) }
        BadgesEvents.visit(&routes, awarder: awarder)
        return routes.handlers
    }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let badges = try Settings.from(settings.reader)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [BadgesMigrations.set])
        let logger = infrastructure.logger
        let awarder = Awarder(catalogue: badges.catalogue)
        let consumer = try infrastructure.consumer(handlers(awarder, outbox: infrastructure.outbox))
        let router = infrastructure.makeRouter(consumers: [consumer])
        addRoutes(to: router, queries: BadgeQueries(client: infrastructure.database, catalogue: badges.catalogue, logger: logger))
        let clock = infrastructure.clock
        return infrastructure.makeApplication(
            router: router, consumers: [consumer], services: [ReplicaPresence(client: infrastructure.database, lock: Rebuild.replicas, logger: logger)],
            beforeServerStarts: [{ try await Backfill(awarder: awarder, outbox: infrastructure.outbox).runAtStart(client: infrastructure.database, at: clock.now(), logger: logger) }])
    }

    static func addRoutes(to router: Router<SurgeRequestContext>, queries: BadgeQueries) {
        BadgesController(queries: queries).addRoutes(to: router)
    }
}
