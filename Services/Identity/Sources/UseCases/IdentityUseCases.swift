import SurgeRuntime

/// Identity's use cases over its storage, as its routes, periodic jobs and tests use them.
struct IdentityUseCases: Sendable {
    let accounts: Accounts
    let sessions: Sessions
    let friends: Friendships
    let groups: Groups
    let exports: AccountExport
    let recovery: Recovery

    init(storage: IdentityStorage, clock: ServiceClock, settings: IdentitySettings) {
        accounts = Accounts(storage: storage, clock: clock)
        sessions = Sessions(storage: storage, clock: clock, refreshTokenLifetime: settings.refreshTokenLifetime, throttle: settings.signInThrottle)
        friends = Friendships(storage: storage, clock: clock)
        groups = Groups(storage: storage, clock: clock, inviteLink: settings.inviteLink)
        exports = AccountExport(storage: storage, clock: clock)
        recovery = Recovery(storage: storage, clock: clock, throttle: settings.mailThrottle)
    }
}
