import Hummingbird
import SurgeRuntime

public enum LeaderboardService {
    public static let api: [APIOperation] = []

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let infrastructure = try await ServiceInfrastructure.start(settings, migrations: [])
        let router = infrastructure.makeRouter()
        return infrastructure.makeApplication(router: router)
    }
}
