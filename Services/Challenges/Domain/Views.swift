import Foundation
import SurgeContracts

/// A definition as the detail view shows it (000 CL-02, CL-03, CL-06, CL-07): the version in force today (or the
/// one asked for), its history, its rules in plain words, and the social counters.
public struct ChallengeDetail: Codable, Sendable, Equatable {
    public var definition: ChallengeDefinition
    public var latestVersion: Int
    public var versions: [VersionSummary]
    /// The rules in one paragraph, generated from them ("Miss any task and the challenge restarts at day 1. ...").
    public var ruleSummary: String
    /// What fails an attempt, one condition per line; empty when nothing can.
    public var failureConditions: [String]
    public var estimatedDailyMinutes: Int?
    public var likes: Int
    public var likedByMe: Bool
    /// The caller was invited to it.
    public var invited: Bool
    /// The caller may edit and delete it.
    public var canEdit: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        definition: ChallengeDefinition, latestVersion: Int, versions: [VersionSummary], likes: Int, likedByMe: Bool, invited: Bool,
        canEdit: Bool, createdAt: Date, updatedAt: Date
    ) {
        self.definition = definition
        self.latestVersion = latestVersion
        self.versions = versions
        self.ruleSummary = RuleDescription.summary(definition)
        self.failureConditions = RuleDescription.failureConditions(definition)
        self.estimatedDailyMinutes = definition.estimatedDailyMinutes
        self.likes = likes
        self.likedByMe = likedByMe
        self.invited = invited
        self.canEdit = canEdit
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A definition in a list: its latest version, without the task details.
public struct ChallengeSummary: Codable, Sendable, Equatable {
    public var challengeID: UUID
    public var kind: ChallengeKind
    public var name: String
    public var description: String
    public var category: String
    public var difficulty: Difficulty
    public var visibility: Visibility
    public var ownerID: UUID?
    public var groupID: UUID?
    public var durationDays: Int?
    public var estimatedDailyMinutes: Int?
    public var latestVersion: Int
    public var taskCount: Int
    public var likes: Int
    /// Joins and likes in the last seven days.
    public var trendingScore: Int
    public var createdAt: Date
    public var chore: ChoreDetails?
    public var habit: HabitDetails?
    public var competition: CompetitionDetails?
    /// Search relevance (`ts_rank`), when searching.
    public var relevance: Double?

    public init(
        definition: ChallengeDefinition, latestVersion: Int, likes: Int, trendingScore: Int, createdAt: Date, relevance: Double?
    ) {
        self.challengeID = definition.challengeID
        self.kind = definition.kind
        self.name = definition.name
        self.description = definition.description
        self.category = definition.category
        self.difficulty = definition.difficulty
        self.visibility = definition.visibility
        self.ownerID = definition.ownerID
        self.groupID = definition.groupID
        self.durationDays = definition.durationDays
        self.estimatedDailyMinutes = definition.estimatedDailyMinutes
        self.latestVersion = latestVersion
        self.taskCount = definition.tasks.count
        self.likes = likes
        self.trendingScore = trendingScore
        self.createdAt = createdAt
        self.chore = definition.chore
        self.habit = definition.habit
        self.competition = definition.competition
        self.relevance = relevance
    }
}

public struct LikeState: Codable, Sendable, Equatable {
    public var challengeID: UUID
    public var likes: Int
    public var likedByMe: Bool

    public init(challengeID: UUID, likes: Int, likedByMe: Bool) {
        self.challengeID = challengeID
        self.likes = likes
        self.likedByMe = likedByMe
    }
}

/// Whom to invite: friends by id, or every member of a group the inviter belongs to.
public struct InvitationRequest: Codable, Sendable, Equatable {
    public var userIDs: [UUID]?
    public var groupID: UUID?

    public init(userIDs: [UUID]? = nil, groupID: UUID? = nil) {
        self.userIDs = userIDs
        self.groupID = groupID
    }

    public static let maxUsers = 50
}

public struct Invitation: Codable, Sendable, Equatable {
    public var invitationID: UUID
    public var challengeID: UUID
    public var inviteeID: UUID
    /// The group through which the invitee was invited.
    public var groupID: UUID?
    public var sentAt: Date

    public init(invitationID: UUID, challengeID: UUID, inviteeID: UUID, groupID: UUID?, sentAt: Date) {
        self.invitationID = invitationID
        self.challengeID = challengeID
        self.inviteeID = inviteeID
        self.groupID = groupID
        self.sentAt = sentAt
    }
}

public struct InvitationResult: Codable, Sendable, Equatable {
    /// The invitations sent now, one `ChallengeInvitationSent` each.
    public var invitations: [Invitation]
    /// Invitees who had been invited before (or own the challenge): nothing was sent to them again.
    public var alreadyInvited: [UUID]

    public init(invitations: [Invitation], alreadyInvited: [UUID]) {
        self.invitations = invitations
        self.alreadyInvited = alreadyInvited
    }
}
