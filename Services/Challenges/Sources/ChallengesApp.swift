import Hummingbird
import Logging
import PostgresNIO
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

public enum ChallengesService {
    public static var api: [APIOperation] { ChallengesAPI.all }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let trendingRefresh = try settings.reader.int("TRENDING_REFRESH_SECONDS", default: 600, range: 1...86_400)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [ChallengesMigrations.set])
        let logger = infrastructure.logger

        var handlers = EventHandlers()
        IdentityEventHandlers.register(in: &handlers, outbox: infrastructure.outbox)
        ProgressEventHandlers.register(in: &handlers, clock: infrastructure.clock)
        let consumer = try infrastructure.consumer(handlers)

        let repository = PostgresChallengeRepository(
            client: infrastructure.database, outbox: infrastructure.outbox, clock: infrastructure.clock, logger: logger)
        // Writes refresh the trending score of the challenge they touch; this lets days older than the window drop
        // out for challenges nobody touches (idempotent, so every replica may run it).
        let database = infrastructure.database
        let clock = infrastructure.clock
        let refresher = PeriodicService(
            "trending-refresh", every: .seconds(trendingRefresh),
            logger: logger
        ) {
            _ = try await Trending.refreshAll(today: Trending.day(at: clock.now()), client: database, logger: logger)
        }

        let router = infrastructure.makeRouter(consumers: [consumer])
        ChallengesController(challenges: repository).addRoutes(to: router)
        router.get("/internal/export") { _, context in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: try await UserExport.json(for: try context.caller(), client: database, logger: logger))))
        }
        let outbox = infrastructure.outbox
        return infrastructure.makeApplication(
            router: router, consumers: [consumer], services: [refresher],
            beforeServerStarts: [{
                let report = try await ContentSeeder.seed(client: database, outbox: outbox, now: clock.now(), logger: logger)
                logger.info("Curated content ready", metadata: ["published": "\(report.published.count)", "upgraded": "\(report.upgraded.count)"])
            }])
    }
}
