import Hummingbird
import SurgeMessaging
import SurgeRuntime

public enum ProgressService {
    public static let name = "progress"
    public static let api: [APIOperation] = []
    public static let defaultPort = 8083

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let infrastructure = try await ServiceInfrastructure.start(settings, migrations: [ProgressMigrations.set])
        var handlers = EventHandlers()
        IdentityEventHandlers.register(in: &handlers)
        let consumer = try infrastructure.consumer(handlers)
        let router = infrastructure.makeRouter(consumers: [consumer])
        return infrastructure.makeApplication(router: router, consumers: [consumer])
    }
}
