import Logging
import PostgresNIO
import SurgeMessaging
import SurgeRuntime

/// Identity's repositories over its database, as its routes and periodic jobs use them.
struct IdentityRepositories: Sendable {
    let accounts: AccountRepository
    let sessions: SessionRepository
    let friends: FriendRepository
    let groups: GroupRepository
    let exports: ExportRepository
    let recovery: RecoveryRepository

    init(client: PostgresClient, outbox: Outbox, logger: Logger, clock: ServiceClock, settings: IdentitySettings) {
        accounts = AccountRepository(client: client, outbox: outbox, logger: logger, clock: clock)
        sessions = SessionRepository(
            client: client, outbox: outbox, logger: logger, clock: clock, refreshTokenLifetime: settings.refreshTokenLifetime,
            throttle: settings.signInThrottle)
        friends = FriendRepository(client: client, outbox: outbox, logger: logger, clock: clock)
        groups = GroupRepository(client: client, outbox: outbox, logger: logger, clock: clock, inviteLink: settings.inviteLink)
        exports = ExportRepository(client: client, logger: logger, clock: clock)
        recovery = RecoveryRepository(client: client, outbox: outbox, logger: logger, clock: clock, throttle: settings.mailThrottle)
    }
}
