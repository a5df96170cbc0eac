import Foundation
import Hummingbird
import Logging
import SurgeMessaging
import SurgeRuntime

/// Analytics: an ordinary consumer of the public topics, with its own consumer group and schema, that keeps the
/// facts behind the product KPIs and answers them to admins. `surge-analytics rebuild` replays the topics from the
/// earliest offset into the same facts.
public enum AnalyticsService {
    public static var api: [APIOperation] { AnalyticsAPI.all }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let infrastructure = try ServiceInfrastructure(settings, migrations: [AnalyticsMigrations.set])
        let consumer = try infrastructure.consumer(handlers)
        let router = infrastructure.makeRouter(consumers: [consumer])
        let clock = infrastructure.clock
        addRoutes(to: router, queries: PostgresKPIQueries(client: infrastructure.database, logger: infrastructure.logger), now: { clock.now() })
        return infrastructure.makeApplication(router: router, consumers: [consumer])
    }

    static var handlers: EventHandlers {
        var routes = ConsumerRoutes { Facts(connection: $0, logger: $1) }
        AnalyticsEvents.register(in: &routes)
        return routes.handlers
    }

    static func addRoutes(to router: Router<SurgeRequestContext>, queries: any KPIQueries, now: @escaping @Sendable () -> Date) {
        KPIController(queries: queries, now: now).addRoutes(to: router)
    }

    /// `surge-analytics rebuild`: the facts replayed from the earliest offset of every topic analytics reads.
    public static func rebuild(_ settings: ServiceSettings) async throws -> String {
        try await Rebuild.run(settings, handlers: handlers).description
    }
}
