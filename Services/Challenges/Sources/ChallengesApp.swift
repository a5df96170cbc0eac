import Foundation
import Hummingbird
import Logging
import SurgeMessaging
import SurgeRuntime

/// Challenges' own settings, read once, before anything connects.
struct ChallengesSettings {
    /// How often every trending score is recomputed.
    var trendingRefresh: Duration

    static func from(_ reader: EnvironmentReader) throws -> ChallengesSettings {
        ChallengesSettings(trendingRefresh: .seconds(try reader.int("TRENDING_REFRESH_SECONDS", default: 600, range: 1...86_400)))
    }
}

/// The catalogue: curated challenges, competitions, habits, chores and weekly challenges, their versions, likes,
/// invitations and search. `buildApplication` only wires; the curated content is seeded before the server starts.
public enum ChallengesService {
    public static var api: [APIOperation] { ChallengesAPI.all }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let challenges = try ChallengesSettings.from(settings.reader)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [ChallengesMigrations.set])
        let logger = infrastructure.logger
        let database = infrastructure.database
        let clock = infrastructure.clock
        var routes = ConsumerRoutes { ChallengeStore(connection: $0, outbox: infrastructure.outbox, logger: $1) }
        ChallengesEvents.register(in: &routes, clock: clock)
        let consumer = try infrastructure.consumer(routes.handlers)
        let storage = ChallengeStorage(client: database, outbox: infrastructure.outbox, logger: logger)
        let router = infrastructure.makeRouter(consumers: [consumer])
        addRoutes(
            to: router, storage: storage, lists: ChallengeListStore(client: database, logger: logger),
            export: UserExport(client: database, logger: logger), now: { clock.now() })
        // Writes refresh the trending score of the challenge they touch; this lets days older than the window drop
        // out for challenges nobody touches (idempotent, so every replica may run it).
        let trendingRefresher = PeriodicService("trending-refresh", every: challenges.trendingRefresh, logger: logger) {
            _ = try await database.withConnection { try await TrendingStore(connection: $0, logger: logger).refreshAll(today: Trending.day(at: clock.now())) }
        }
        return infrastructure.makeApplication(
            router: router, consumers: [consumer], services: [trendingRefresher],
            beforeServerStarts: [{
                let report = try await ContentSeeder(storage: storage).seed(now: clock.now())
                logger.info("Curated content ready", metadata: ["published": "\(report.published.count)", "upgraded": "\(report.upgraded.count)"])
            }])
    }

    static func addRoutes(
        to router: Router<SurgeRequestContext>, storage: ChallengeStorage, lists: ChallengeListStore, export: UserExport,
        now: @escaping @Sendable () -> Date
    ) {
        ChallengesController(
            reading: ChallengeReading(storage: storage, now: now), authoring: ChallengeAuthoring(storage: storage, now: now),
            invitations: ChallengeInvitations(storage: storage, now: now), likes: ChallengeLikes(storage: storage, now: now),
            browsing: ChallengeBrowsing(lists: lists, storage: storage), export: export
        ).addRoutes(to: router)
    }
}
