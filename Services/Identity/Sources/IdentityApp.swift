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
        let stores = IdentityStores(client: database, outbox: infrastructure.outbox, logger: logger, clock: clock, settings: identity)
        let issuer = AccessTokenIssuerSlot()
        let router = infrastructure.makeRouter()
        addRoutes(
            to: router, stores: stores, issuer: issuer, passwords: try await PasswordHasher(cost: identity.bcryptCost),
            social: SocialTokenVerifier(configurations: identity.social, logger: logger, fetch: SocialTokenVerifier.httpFetch), clock: clock)
        let mailClient = NotificationsMailClient(baseURL: identity.notificationsURL, signer: settings.internalCalls)
        let relay = AccountMailRelay(
            client: database, logger: logger, clock: clock, lifetimes: identity.tokenLifetimes, links: identity.mailLinks,
            handOver: mailClient.handOver)
        let (sessions, recovery) = (stores.sessions, stores.recovery)
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

    /// Every route identity answers, over its stores; a deleted account's caller is refused on all of them.
    static func addRoutes(
        to router: Router<SurgeRequestContext>, stores: IdentityStores, issuer: AccessTokenIssuerSlot, passwords: PasswordHasher,
        social: SocialTokenVerifier, clock: ServiceClock
    ) {
        let accounts = stores.accounts
        router.add(middleware: AccountExistsMiddleware(accounts: accounts))
        let auth = AuthController(
            accounts: accounts, sessions: stores.sessions, issuer: issuer, passwords: passwords, social: social, clock: clock)
        auth.addRoutes(to: router)
        RecoveryController(accounts: accounts, recovery: stores.recovery, sessions: stores.sessions, passwords: passwords, auth: auth)
            .addRoutes(to: router)
        AccountController(accounts: accounts, exports: stores.exports, passwords: passwords).addRoutes(to: router)
        FriendsController(friends: stores.friends).addRoutes(to: router)
        GroupsController(groups: stores.groups).addRoutes(to: router)
    }
}
