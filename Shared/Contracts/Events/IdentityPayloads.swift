import Foundation

public enum AccountKind: String, Codable, Sendable, JSONSchemaEnum {
    /// Created on a device with a display name only; may attach credentials later.
    case guest
    /// E-mail and password.
    case password
    /// Apple or Google sign-in.
    case social
}

/// A person got an account. Every service that keeps per-user state learns the user's time zone from here.
public struct UserRegistered: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.user.registered.v1", topic: .identity,
        summary: "An account was created (guest, e-mail/password or social sign-in).",
        emitted: """
            When `POST /v1/auth/guest` or `POST /v1/auth/register` creates an account, and when `POST \
            /v1/auth/social` signs in with a provider identity that matches no account (a new `social` account). The \
            account's first event.
            """)

    public static let example = CloudEvent<UserRegistered>.example(id: "495ef4a8-0c3b-4f8e-9d7a-31c6a2b8e915", time: "2026-03-02T07:41:18.327Z") {
        UserRegistered(userID: Example.giulia, displayName: "Giulia", timeZone: "Europe/Rome", locale: "it-IT", kind: .guest, registeredAt: $0)
    }

    public var userID: UUID
    public var displayName: String
    public var timeZone: String
    public var locale: String?
    public var kind: AccountKind
    public var registeredAt: Date

    public init(userID: UUID, displayName: String, timeZone: String, locale: String?, kind: AccountKind, registeredAt: Date) {
        self.userID = userID
        self.displayName = displayName
        self.timeZone = timeZone
        self.locale = locale
        self.kind = kind
        self.registeredAt = registeredAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)" }
}

/// A guest attached credentials (e-mail/password or a social identity); nothing else about the account changed.
public struct UserUpgraded: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.user.upgraded.v1", topic: .identity,
        summary: "A guest account attached an e-mail/password or a social identity.",
        emitted: """
            When `POST /v1/me/credentials` attaches an e-mail and a password to a guest account (`kind` is then \
            `password`).
            """)

    public static let example = CloudEvent<UserUpgraded>.example(id: "c2f1d7a0-5b84-4f0e-8e51-0a9d3f6b7c24", time: "2026-03-03T18:12:09.552Z") {
        UserUpgraded(userID: Example.giulia, kind: .password, upgradedAt: $0)
    }

    public var userID: UUID
    public var kind: AccountKind
    public var upgradedAt: Date

    public init(userID: UUID, kind: AccountKind, upgradedAt: Date) {
        self.userID = userID
        self.kind = kind
        self.upgradedAt = upgradedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)" }
}

/// The public profile changed. `timeZone` matters to every service that judges days: a move applies from the user's
/// next local day.
public struct ProfileChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.profile.changed.v1", topic: .identity,
        summary: "Display name, avatar, time zone or locale changed; carries the whole new profile.",
        emitted: """
            When `PATCH /v1/me` changes the display name, avatar, time zone or locale; a request that changes \
            nothing emits nothing.
            """)

    public static let example = CloudEvent<ProfileChanged>.example(id: "8b3e6f21-94d7-4c0a-b5f8-2e7a1d9c4f63", time: "2026-03-04T21:03:47.090Z") {
        ProfileChanged(
            userID: Example.marco, displayName: "Marco", avatarURL: "https://images.surge.example/avatars/marco.jpg", timeZone: "Europe/Rome",
            previousTimeZone: "Europe/London", locale: "it-IT", changedAt: $0)
    }

    public var userID: UUID
    public var displayName: String
    public var avatarURL: String?
    public var timeZone: String
    public var previousTimeZone: String
    public var locale: String?
    public var changedAt: Date

    public init(userID: UUID, displayName: String, avatarURL: String?, timeZone: String, previousTimeZone: String, locale: String?, changedAt: Date) {
        self.userID = userID
        self.displayName = displayName
        self.avatarURL = avatarURL
        self.timeZone = timeZone
        self.previousTimeZone = previousTimeZone
        self.locale = locale
        self.changedAt = changedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)" }
}

/// Quiet hours in the user's own time zone; `end` before `start` wraps past midnight.
public struct QuietHours: Codable, Sendable, Equatable {
    public var start: LocalTime
    public var end: LocalTime

    public init(start: LocalTime, end: LocalTime) {
        self.start = start
        self.end = end
    }
}

/// What a user can switch off one kind at a time, beside the global switch. Each notification kind belongs to one
/// category (docs/notifications.md has the table).
public enum NotificationCategory: String, Codable, Sendable, JSONSchemaEnum {
    /// The daily reminder, the re-engagement nudge and close to the daily goal.
    case reminders
    /// Streak milestones and a streak at risk.
    case streaks
    /// Friend requests, challenge invitations, being overtaken on a board.
    case social
    /// Badges earned.
    case badges
    /// The Sunday weekly summary and new weekly challenge.
    case digest
    /// A household chore due now (to its assignee).
    case chores
}

/// The user's preferences, whole. Consumers apply it immediately (telemetry opt-out takes effect at once).
public struct PreferencesChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.preferences.changed.v1", topic: .identity,
        summary: "Notification switch, categories switched off, daily reminder time, quiet hours or telemetry opt-out changed; carries all of them.",
        emitted: """
            When `PUT /v1/me/preferences` saves preferences that differ from the stored ones; saving the same values \
            again emits nothing.
            """)

    public static let example = CloudEvent<PreferencesChanged>.example(id: "1f9c0e7d-3a52-4b86-a4d1-6c8e2f0b9a37", time: "2026-03-03T18:14:52.613Z") {
        PreferencesChanged(
            userID: Example.giulia, notificationsEnabled: true, dailyReminderTime: Example.time("21:00"),
            quietHours: QuietHours(start: Example.time("23:00"), end: Example.time("07:30")), disabledCategories: [.digest],
            telemetryOptOut: false, changedAt: $0)
    }

    public var userID: UUID
    public var notificationsEnabled: Bool
    public var dailyReminderTime: LocalTime?
    public var quietHours: QuietHours?
    /// The categories switched off, each at most once; absent in events from before per-kind switches (none off).
    public var disabledCategories: [NotificationCategory]?
    public var telemetryOptOut: Bool
    public var changedAt: Date

    public init(
        userID: UUID, notificationsEnabled: Bool, dailyReminderTime: LocalTime?, quietHours: QuietHours?,
        disabledCategories: [NotificationCategory], telemetryOptOut: Bool, changedAt: Date
    ) {
        self.userID = userID
        self.notificationsEnabled = notificationsEnabled
        self.dailyReminderTime = dailyReminderTime
        self.quietHours = quietHours
        self.disabledCategories = disabledCategories
        self.telemetryOptOut = telemetryOptOut
        self.changedAt = changedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)" }
}

public enum ActivityLevel: String, Codable, Sendable, JSONSchemaEnum {
    case beginner, intermediate, advanced
}

/// The training plan from onboarding (001 ONBD-01..04): the answers and the values the user accepted. Progress uses
/// the daily goal for weekly targets and anti-cheat caps.
public struct TrainingPlanChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.training-plan.changed.v1", topic: .identity,
        summary: "Onboarding answers saved or edited: activity level, capacity, frequency, daily goal, starting series, recovery.",
        emitted: """
            When `PUT /v1/me/training-plan` saves the onboarding answers: on every save, also of an unchanged plan.
            """)

    public static let example = CloudEvent<TrainingPlanChanged>.example(id: "a7d4b9e2-6f13-4c58-9e0b-d3f1a8c62e75", time: "2026-03-02T07:44:02.179Z") {
        TrainingPlanChanged(
            userID: Example.giulia, activityLevel: .beginner, maxPushUpsInOneSet: 12, daysPerWeek: 4, dailyGoal: 30, startingSeries: 3,
            recoverySeconds: 90, changedAt: $0)
    }

    public var userID: UUID
    public var activityLevel: ActivityLevel
    public var maxPushUpsInOneSet: Int
    public var daysPerWeek: Int
    public var dailyGoal: Int
    public var startingSeries: Int
    public var recoverySeconds: Int
    public var changedAt: Date

    public init(userID: UUID, activityLevel: ActivityLevel, maxPushUpsInOneSet: Int, daysPerWeek: Int, dailyGoal: Int, startingSeries: Int, recoverySeconds: Int, changedAt: Date) {
        self.userID = userID
        self.activityLevel = activityLevel
        self.maxPushUpsInOneSet = maxPushUpsInOneSet
        self.daysPerWeek = daysPerWeek
        self.dailyGoal = dailyGoal
        self.startingSeries = startingSeries
        self.recoverySeconds = recoverySeconds
        self.changedAt = changedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)" }
}

public enum FriendshipStatus: String, Codable, Sendable, JSONSchemaEnum {
    case requested, accepted, declined, cancelled, removed
}

/// A friendship between two users changed. Keyed by the smaller of the two ids, so one pair's changes stay in order.
public struct FriendshipChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.friendship.changed.v1", topic: .identity,
        summary: "A friend request was sent, accepted, declined or cancelled, or a friendship was removed.",
        emitted: """
            When `POST /v1/friend-requests` sends a request (`requested`), `POST \
            /v1/friend-requests/{requestID}/accept` or `.../decline` answers it (`accepted`, `declined`), `DELETE \
            /v1/friend-requests/{requestID}` withdraws it (`cancelled`) and `DELETE /v1/friends/{userID}` ends a \
            friendship (`removed`); and when `DELETE /v1/me` deletes an account, for each of its friendships \
            (`removed`) and pending requests (`cancelled` or `declined`), before its `user.deleted`.
            """)

    public static let example = CloudEvent<FriendshipChanged>.example(id: "5e0a2c94-d7b1-4f36-8a9e-0b4c7d21f5e8", time: "2026-03-05T12:30:26.745Z") {
        FriendshipChanged(requesterID: Example.giulia, addresseeID: Example.marco, status: .accepted, actorID: Example.marco, changedAt: $0)
    }

    public var requesterID: UUID
    public var addresseeID: UUID
    public var status: FriendshipStatus
    public var actorID: UUID
    public var changedAt: Date

    public init(requesterID: UUID, addresseeID: UUID, status: FriendshipStatus, actorID: UUID, changedAt: Date) {
        self.requesterID = requesterID
        self.addresseeID = addresseeID
        self.status = status
        self.actorID = actorID
        self.changedAt = changedAt
    }

    public var partitionKey: String { min(requesterID.key, addresseeID.key) }
    public var subject: String { "friendships/\(min(requesterID.key, addresseeID.key))/\(max(requesterID.key, addresseeID.key))" }
}

public enum GroupKind: String, Codable, Sendable, JSONSchemaEnum {
    case household, friends, team
}

/// A group was created or renamed or moved time zone; carries the whole group. The group's time zone decides its
/// weeks and months (household leaderboards).
public struct GroupChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.group.changed.v1", topic: .identity,
        summary: "A group (household, friends, team) was created or its name or time zone changed; carries the whole group.",
        emitted: """
            When `POST /v1/groups` creates a group (`created` true, before the owner's `group.membership.changed`) \
            and `PATCH /v1/groups/{groupID}` renames it or moves its time zone; and when ownership passes to the \
            longest-standing member because the owner left or deleted the account (after the membership events). A \
            group whose last member goes is deleted with no event of its own: the last `group.membership.changed` \
            says it.
            """)

    public static let example = CloudEvent<GroupChanged>.example(id: "d1b8f3a6-2e47-4c90-b6d5-8f0a3e9c1b42", time: "2026-03-06T19:22:13.406Z") {
        GroupChanged(
            groupID: Example.flat, name: "Via Mazzini flat", kind: .household, timeZone: "Europe/Rome", ownerID: Example.giulia, created: true,
            changedAt: $0)
    }

    public var groupID: UUID
    public var name: String
    public var kind: GroupKind
    public var timeZone: String
    public var ownerID: UUID
    public var created: Bool
    public var changedAt: Date

    public init(groupID: UUID, name: String, kind: GroupKind, timeZone: String, ownerID: UUID, created: Bool, changedAt: Date) {
        self.groupID = groupID
        self.name = name
        self.kind = kind
        self.timeZone = timeZone
        self.ownerID = ownerID
        self.created = created
        self.changedAt = changedAt
    }

    public var partitionKey: String { groupID.key }
    public var subject: String { "groups/\(groupID.key)" }
}

public enum GroupRole: String, Codable, Sendable, JSONSchemaEnum {
    case owner, member
}

public enum MembershipChange: String, Codable, Sendable, JSONSchemaEnum {
    case joined, left, removed, roleChanged
}

/// Someone joined or left a group, was removed, or changed role. Services that show group data to members only keep
/// their own membership list from these.
public struct GroupMembershipChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.group.membership.changed.v1", topic: .identity,
        summary: "A member joined, left, was removed from or changed role in a group.",
        emitted: """
            When `POST /v1/groups` creates a group (its owner `joined`), `POST /v1/groups/join` redeems an invite \
            (`joined`), `POST /v1/groups/{groupID}/leave` (`left`) or `DELETE /v1/groups/{groupID}/members/{userID}` \
            (`removed`) takes a member out, and `DELETE /v1/me` deletes an account (`left`, for each of its groups). \
            When the owner goes, the successor's `roleChanged` follows, then `group.changed`.
            """)

    public static let example = CloudEvent<GroupMembershipChanged>.example(id: "3c7e9a05-b1f4-4d28-9c63-e2a0d5b8f714", time: "2026-03-06T19:40:58.029Z") {
        GroupMembershipChanged(groupID: Example.flat, userID: Example.marco, displayName: "Marco", role: .member, change: .joined, changedAt: $0)
    }

    public var groupID: UUID
    public var userID: UUID
    public var displayName: String
    public var role: GroupRole
    public var change: MembershipChange
    public var changedAt: Date

    public init(groupID: UUID, userID: UUID, displayName: String, role: GroupRole, change: MembershipChange, changedAt: Date) {
        self.groupID = groupID
        self.userID = userID
        self.displayName = displayName
        self.role = role
        self.change = change
        self.changedAt = changedAt
    }

    public var partitionKey: String { groupID.key }
    public var subject: String { "groups/\(groupID.key)/members/\(userID.key)" }
}

/// Why identity revoked refresh-token families (sessions).
public enum SessionRevocationReason: String, Codable, Sendable, JSONSchemaEnum {
    /// `POST /v1/auth/reset-password`: every session of the account.
    case passwordReset = "password-reset"
    /// `POST /v1/me/password`: every session of the account (the answer is a new one).
    case passwordChanged = "password-changed"
    /// `DELETE /v1/me/sessions/{sessionID}`: that session.
    case sessionEnded = "session-ended"
    /// `POST /v1/me/sessions/end-others`: every session but the caller's.
    case otherSessionsEnded = "other-sessions-ended"
    /// `POST /v1/auth/sign-out`: the session of the refresh token presented.
    case signedOut = "signed-out"
    /// `POST /v1/auth/refresh` with a refresh token already used: its whole session, as a stolen one.
    case refreshTokenReused = "refresh-token-reused"
}

/// Sessions (refresh-token families) were revoked: their refresh tokens are refused from now on, and the gateway
/// refuses the access tokens that name them (`sid`) instead of letting them live out their minutes.
public struct SessionsRevoked: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.sessions.revoked.v1", topic: .identity,
        summary: "Sessions of an account were revoked; access tokens naming them (`sid`) are refused by the gateway.",
        emitted: """
            In the same transaction as the revocation, whenever sessions not revoked before are revoked: \
            `POST /v1/auth/reset-password` and `POST /v1/me/password` (every session of the account), `DELETE \
            /v1/me/sessions/{sessionID}`, `POST /v1/me/sessions/end-others`, `POST /v1/auth/sign-out`, and `POST \
            /v1/auth/refresh` presenting an already used refresh token (its session). Revoking nothing emits \
            nothing. Carries session ids only, never a token.
            """)

    public static let example = CloudEvent<SessionsRevoked>.example(id: "3d7b9e14-6a2f-4c85-b0d3-8e1f5a7c2b96", time: "2026-03-12T22:47:05.118Z") {
        SessionsRevoked(
            userID: Example.giulia,
            sessionIDs: [Example.id("0b6c1f3e-8d24-4a97-9e5b-2c7a4d1f6e38"), Example.id("a4e29d75-1c6b-4f08-8b3a-5d9e7f2c1a64")],
            reason: .passwordReset, revokedAt: $0)
    }

    public var userID: UUID
    /// The revoked sessions: refresh-token family ids, as `GET /v1/me/sessions` and the access token's `sid` name them.
    public var sessionIDs: [UUID]
    public var reason: SessionRevocationReason
    public var revokedAt: Date

    public init(userID: UUID, sessionIDs: [UUID], reason: SessionRevocationReason, revokedAt: Date) {
        self.userID = userID
        self.sessionIDs = sessionIDs
        self.reason = reason
        self.revokedAt = revokedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)" }
}

/// The account is gone. Every service deletes or anonymises what it keeps about the user.
public struct UserDeleted: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.user.deleted.v1", topic: .identity,
        summary: "An account was deleted at the user's request; every service erases the user's data.",
        emitted: """
            When `DELETE /v1/me` deletes the account: in the same transaction as, and after, the account's \
            `group.membership.changed` and `friendship.changed` events; its last event.
            """)

    public static let example = CloudEvent<UserDeleted>.example(id: "f6a2d8c1-4b93-4e07-a5f9-7c1e0b3d2a86", time: "2026-03-21T10:05:31.863Z") {
        UserDeleted(userID: Example.id("fdd97019-baf1-425e-84bf-16974d0c0f82"), deletedAt: $0)
    }

    public var userID: UUID
    public var deletedAt: Date

    public init(userID: UUID, deletedAt: Date) {
        self.userID = userID
        self.deletedAt = deletedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)" }
}
