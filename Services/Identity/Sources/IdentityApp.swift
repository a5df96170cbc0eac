import Hummingbird
import PostgresNIO
import SurgePostgres
import SurgeRuntime

public enum IdentityService {
    public static var api: [APIOperation] { IdentityAPI.all }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let infrastructure = try ServiceInfrastructure(settings, migrations: [IdentityMigrations.set])
        let identity = try IdentitySettings.from(settings.reader)
        let (database, outbox, logger, clock) = (infrastructure.database, infrastructure.outbox, infrastructure.logger, infrastructure.clock)
        let accounts = AccountRepository(client: database, outbox: outbox, logger: logger, clock: clock)
        let sessions = SessionRepository(
            client: database, outbox: outbox, logger: logger, clock: clock, refreshTokenLifetime: identity.refreshTokenLifetime, throttle: identity.signInThrottle)
        let friends = FriendRepository(client: database, outbox: outbox, logger: logger, clock: clock)
        let groups = GroupRepository(client: database, outbox: outbox, logger: logger, clock: clock, inviteLink: identity.inviteLink)
        let exports = ExportRepository(client: database, logger: logger, clock: clock)
        let recovery = RecoveryRepository(client: database, outbox: outbox, logger: logger, clock: clock, throttle: identity.mailThrottle)
        let mailClient = NotificationsMailClient(baseURL: identity.notificationsURL, signer: settings.internalCalls)
        let relay = AccountMailRelay(
            client: database, logger: logger, clock: clock, lifetimes: identity.tokenLifetimes, links: identity.mailLinks,
            handOver: mailClient.handOver)
        let passwords = try await PasswordHasher(cost: identity.bcryptCost)
        let social = SocialTokenVerifier(configurations: identity.social, logger: logger, fetch: SocialTokenVerifier.httpFetch)

        let issuer = IssuerSlot()
        let router = infrastructure.makeRouter()
        router.add(middleware: AccountExistsMiddleware(accounts: accounts))
        let auth = AuthController(
            accounts: accounts, sessions: sessions,
            issuer: issuer,
            passwords: passwords, social: social, clock: clock)
        auth.addRoutes(to: router)
        RecoveryController(accounts: accounts, recovery: recovery, sessions: sessions, passwords: passwords, auth: auth).addRoutes(to: router)
        AccountController(accounts: accounts, exports: exports, passwords: passwords).addRoutes(to: router)
        FriendsController(friends: friends).addRoutes(to: router)
        GroupsController(groups: groups).addRoutes(to: router)
        let pruning = PeriodicService("refresh-token-pruning", every: .seconds(3600), logger: logger) {
            try await sessions.pruneDeadFamilies()
        }
        let failurePruning = PeriodicService("sign-in-failure-pruning", every: .seconds(3600), logger: logger) {
            try await sessions.pruneSignInFailures()
        }
        let mailRelay = PeriodicService("account-mail-relay", every: identity.mailRelayInterval, logger: logger) {
            try await relay.sendDue()
        }
        let recoveryPruning = PeriodicService("account-token-pruning", every: .seconds(3600), logger: logger) {
            try await recovery.prune()
        }
        return infrastructure.makeApplication(
            router: router, services: [pruning, failurePruning, mailRelay, recoveryPruning],
            beforeServerStarts: [{
                issuer.fill(
                    try await TokenSettings.issuer(settings.reader, environment: settings.environment) {
                        try await SigningKeyRepository(client: database, logger: logger).developmentKey()
                    })
            }])
    }
}
