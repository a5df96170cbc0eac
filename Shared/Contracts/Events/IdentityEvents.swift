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
        summary: "An account was created (guest, e-mail/password or social sign-in).")

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
        summary: "A guest account attached an e-mail/password or a social identity.")

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
        summary: "Display name, avatar, time zone or locale changed; carries the whole new profile.")

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
        summary: "Notification switch, categories switched off, daily reminder time, quiet hours or telemetry opt-out changed; carries all of them.")

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
        summary: "Onboarding answers saved or edited: activity level, capacity, frequency, daily goal, starting series, recovery.")

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
        summary: "A friend request was sent, accepted, declined or cancelled, or a friendship was removed.")

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
        summary: "A group (household, friends, team) was created or its name or time zone changed; carries the whole group.")

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
        summary: "A member joined, left, was removed from or changed role in a group.")

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

/// The account is gone. Every service deletes or anonymises what it keeps about the user.
public struct UserDeleted: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.identity.user.deleted.v1", topic: .identity,
        summary: "An account was deleted at the user's request; every service erases the user's data.")

    public var userID: UUID
    public var deletedAt: Date

    public init(userID: UUID, deletedAt: Date) {
        self.userID = userID
        self.deletedAt = deletedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)" }
}
