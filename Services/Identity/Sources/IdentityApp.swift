import Hummingbird
import SurgeRuntime

/// `buildApplication` only wires, with no I/O: identity's settings are read first, the migrations run as the
/// application's first lifecycle step, the signing key is loaded after them, before the server starts, and the router
/// is built by `addRoutes` so tests can build it without I/O.
public enum IdentityService {
    public static var api: [APIOperation] { IdentityAPI.all }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let identity = try IdentitySettings.from(settings.reader, environment: settings.environment)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [IdentityMigrations.set])
        let (database, logger, clock) = (infrastructure.database, infrastructure.logger, infrastructure.clock)
        let storage = IdentityStorage(client: database, outbox: infrastructure.outbox, logger: logger)
        let useCases = IdentityUseCases(storage: storage, clock: clock, settings: identity)
        let issuer = AccessTokenIssuerSlot()
        let router = infrastructure.makeRouter()
        addRoutes(
            to: router, useCases: useCases, issuer: issuer, passwords: try await PasswordHasher(cost: identity.bcryptCost),
            social: SocialTokenVerifier(configurations: identity.social, logger: logger, fetch: SocialTokenVerifier.httpFetch), clock: clock)
        let mailClient = NotificationsMailClient(baseURL: identity.notificationsURL, signer: settings.internalCalls)
        let relay = AccountMailRelay(
            storage: storage, clock: clock, lifetimes: identity.tokenLifetimes, links: identity.mailLinks,
            handOver: mailClient.handOver)
        let (sessions, recovery) = (useCases.sessions, useCases.recovery)
        return infrastructure.makeApplication(
            router: router,
            services: [
                PeriodicService("refresh-token-pruning", every: .seconds(3600), logger: logger) { try await sessions.pruneDeadFamilies() },
                PeriodicService("sign-in-failure-pruning", every: .seconds(3600), logger: logger) { try await sessions.pruneSignInFailures() },
                PeriodicService("account-mail-relay", every: identity.mailRelayInterval, logger: logger) { try await relay.sendDue() },
                PeriodicService("account-token-pruning", every: .seconds(3600), logger: logger) { try await recovery.prune() },
            ],
            // Only outside production without JWT_SIGNING_KEY does this read the database (the development key).
            beforeServerStarts: [{
                try await issuer.load(identity.tokens) { try await SigningKeyStore(client: database, logger: logger).developmentKey() }
            }])
    }

    /// Every route identity answers, over its use cases; a deleted account's caller is refused on all of them.
    static func addRoutes(
        to router: Router<SurgeRequestContext>, useCases: IdentityUseCases, issuer: AccessTokenIssuerSlot, passwords: PasswordHasher,
        social: SocialTokenVerifier, clock: ServiceClock
    ) {
        let accounts = useCases.accounts
        router.add(middleware: AccountExistsMiddleware(accounts: accounts))
        let auth = AuthController(
            accounts: accounts, sessions: useCases.sessions, issuer: issuer, passwords: passwords, social: social, clock: clock)
        auth.addRoutes(to: router)
        RecoveryController(accounts: accounts, recovery: useCases.recovery, sessions: useCases.sessions, passwords: passwords, auth: auth)
            .addRoutes(to: router)
        AccountController(accounts: accounts, exports: useCases.exports, passwords: passwords).addRoutes(to: router)
        FriendsController(friends: useCases.friends).addRoutes(to: router)
        GroupsController(groups: useCases.groups).addRoutes(to: router)
    }
}
