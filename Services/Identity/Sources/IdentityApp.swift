import Hummingbird
import SurgeRuntime

public enum IdentityService {
    public static let name = "identity"
    public static let defaultPort = 8081
    public static var api: [APIOperation] { IdentityAPI.all }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let infrastructure = try await ServiceInfrastructure.start(settings, migrations: [IdentityMigrations.set])
        let accounts = PostgresAccountRepository(
            client: infrastructure.database, outbox: infrastructure.outbox, logger: infrastructure.logger)
        let tokens = try await TokenSettings.issuer(settings)
        let router = infrastructure.makeRouter()
        AuthController(accounts: accounts, tokens: tokens).addRoutes(to: router)
        AccountController(accounts: accounts).addRoutes(to: router)
        return infrastructure.makeApplication(router: router)
    }
}
