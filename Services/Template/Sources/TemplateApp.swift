import Foundation
import Hummingbird
import Logging
import SurgeMessaging
import SurgeRuntime

/// The template every new service starts from: copy `Services/Template`, rename, and follow the recipe in
/// docs/architecture.md. `buildApplication` only wires, with no I/O: settings are read first, the migrations run as
/// the application's first lifecycle step, and `addRoutes` builds the routes so tests can build them without I/O.
public enum TemplateService {
    public static var api: [APIOperation] { TemplateAPI.all }

    /// The template's own settings, read once, before anything connects.
    struct Settings {
        var milestoneEvery: Int

        static func from(_ reader: EnvironmentReader) throws -> Settings {
            Settings(milestoneEvery: try reader.int("TALLY_MILESTONE_EVERY", default: 10, range: 1...1000))
        }
    }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let template = try Settings.from(settings.reader)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [TemplateMigrations.set])
        var routes = ConsumerRoutes { TallyRecorder(connection: $0, logger: $1) }
        TemplateEvents.register(in: &routes, outbox: infrastructure.outbox, milestoneEvery: template.milestoneEvery)
        let consumer = try infrastructure.consumer(routes.handlers)
        let router = infrastructure.makeRouter(consumers: [consumer])
        let clock = infrastructure.clock
        addRoutes(to: router, tallies: PostgresTallyStore(client: infrastructure.database, logger: infrastructure.logger), now: { clock.now() })
        return infrastructure.makeApplication(router: router, consumers: [consumer])
    }

    static func addRoutes(to router: Router<SurgeRequestContext>, tallies: any TallyStore, now: @escaping @Sendable () -> Date) {
        TallyController(tallies: tallies, now: now).addRoutes(to: router)
    }
}
