import Logging
import PostgresNIO
import SurgeMessaging
import SurgeRuntime

/// Identity's stores over its database, as its routes and periodic jobs use them.
struct IdentityStores: Sendable {
    let accounts: AccountStore
    let sessions: SessionStore
    let friends: FriendStore
    let groups: GroupStore
    let exports: ExportStore
    let recovery: RecoveryStore

    init(client: PostgresClient, outbox: Outbox, logger: Logger, clock: ServiceClock, settings: IdentitySettings) {
        accounts = AccountStore(client: client, outbox: outbox, logger: logger, clock: clock)
        sessions = SessionStore(
            client: client, outbox: outbox, logger: logger, clock: clock, refreshTokenLifetime: settings.refreshTokenLifetime,
            throttle: settings.signInThrottle)
        friends = FriendStore(client: client, outbox: outbox, logger: logger, clock: clock)
        groups = GroupStore(client: client, outbox: outbox, logger: logger, clock: clock, inviteLink: settings.inviteLink)
        exports = ExportStore(client: client, logger: logger, clock: clock)
        recovery = RecoveryStore(client: client, outbox: outbox, logger: logger, clock: clock, throttle: settings.mailThrottle)
    }
}
