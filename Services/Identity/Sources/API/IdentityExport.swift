import Foundation
import IdentityDomain
import SurgeContracts

/// Identity's part of a user's data export (003 FR-020, GDPR art. 15/20): everything identity keeps about the user,
/// except secrets (password hashes, refresh-token hashes).
public struct IdentityExport: Codable, Sendable {
    public struct PasswordCredential: Codable, Sendable {
        public var createdAt: Date
        public var updatedAt: Date
    }

    public struct LinkedIdentity: Codable, Sendable {
        public var provider: String
        public var subject: String
        public var email: String?
        public var linkedAt: Date
    }

    public struct Credentials: Codable, Sendable {
        public var password: PasswordCredential?
        public var socialIdentities: [LinkedIdentity]
    }

    public struct PreferencesRecord: Codable, Sendable {
        public var notificationsEnabled: Bool
        public var dailyReminderTime: LocalTime?
        public var quietHours: QuietHours?
        public var disabledCategories: [NotificationCategory]
        public var telemetryOptOut: Bool
        public var updatedAt: Date?
    }

    public struct TrainingPlanRecord: Codable, Sendable {
        public var activityLevel: ActivityLevel
        public var maxPushUpsInOneSet: Int
        public var daysPerWeek: Int
        public var dailyGoal: Int
        public var startingSeries: Int
        public var recoverySeconds: Int
        public var updatedAt: Date
    }

    public struct FriendRequests: Codable, Sendable {
        public var incoming: [FriendRequest]
        public var outgoing: [FriendRequest]
    }

    public struct Membership: Codable, Sendable {
        public var group: GroupSummary
        public var joinedAt: Date
    }

    public struct Session: Codable, Sendable {
        public var id: UUID
        public var startedAt: Date
        public var lastRefreshedAt: Date
        public var expiresAt: Date
    }

    public var service: String
    public var exportedAt: Date
    public var account: Account
    public var credentials: Credentials
    public var preferences: PreferencesRecord
    public var trainingPlan: TrainingPlanRecord?
    public var friends: [Friend]
    public var friendRequests: FriendRequests
    public var groups: [Membership]
    public var sessions: [Session]
}
