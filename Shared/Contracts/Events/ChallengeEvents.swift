import Foundation

/// A new definition exists (version 1): a curated challenge seeded, or a competition, habit, chore or weekly
/// challenge created.
public struct ChallengePublished: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.challenges.definition.published.v1", topic: .challenges,
        summary: "A challenge, competition, habit, chore or weekly challenge was created; carries version 1 whole.")

    public var definition: ChallengeDefinition
    public var publishedAt: Date

    public init(definition: ChallengeDefinition, publishedAt: Date) {
        self.definition = definition
        self.publishedAt = publishedAt
    }

    public var partitionKey: String { definition.partitionKey }
    public var subject: String { "challenges/\(definition.challengeID.key)/versions/\(definition.version)" }
}

/// A definition was edited: a new version, in force from `definition.effectiveFrom`. Earlier versions stay valid
/// for the days they judged.
public struct ChallengeChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.challenges.definition.changed.v1", topic: .challenges,
        summary: "A definition was edited; carries the new version whole and the local date it applies from.")

    public var definition: ChallengeDefinition
    public var changedBy: UUID
    public var changedAt: Date

    public init(definition: ChallengeDefinition, changedBy: UUID, changedAt: Date) {
        self.definition = definition
        self.changedBy = changedBy
        self.changedAt = changedAt
    }

    public var partitionKey: String { definition.partitionKey }
    public var subject: String { "challenges/\(definition.challengeID.key)/versions/\(definition.version)" }
}

/// A definition was deleted, with its history, after the owner confirmed.
public struct ChallengeDeleted: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.challenges.definition.deleted.v1", topic: .challenges,
        summary: "A definition and its history were deleted after explicit confirmation.")

    public var challengeID: UUID
    public var kind: ChallengeKind
    public var ownerID: UUID?
    public var groupID: UUID?
    public var deletedBy: UUID
    public var deletedAt: Date

    public init(challengeID: UUID, kind: ChallengeKind, ownerID: UUID?, groupID: UUID?, deletedBy: UUID, deletedAt: Date) {
        self.challengeID = challengeID
        self.kind = kind
        self.ownerID = ownerID
        self.groupID = groupID
        self.deletedBy = deletedBy
        self.deletedAt = deletedAt
    }

    public var partitionKey: String { (groupID ?? ownerID ?? challengeID).key }
    public var subject: String { "challenges/\(challengeID.key)" }
}

/// Someone was invited to a challenge (directly, or as a member of an invited group).
public struct ChallengeInvitationSent: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.challenges.invitation.sent.v1", topic: .challenges,
        summary: "A user was invited to a competition or challenge by a friend (one event per invitee).")

    public var invitationID: UUID
    public var challengeID: UUID
    public var challengeName: String
    public var inviterID: UUID
    public var inviteeID: UUID
    public var groupID: UUID?
    public var sentAt: Date

    public init(invitationID: UUID, challengeID: UUID, challengeName: String, inviterID: UUID, inviteeID: UUID, groupID: UUID?, sentAt: Date) {
        self.invitationID = invitationID
        self.challengeID = challengeID
        self.challengeName = challengeName
        self.inviterID = inviterID
        self.inviteeID = inviteeID
        self.groupID = groupID
        self.sentAt = sentAt
    }

    public var partitionKey: String { inviteeID.key }
    public var subject: String { "challenges/\(challengeID.key)/invitations/\(invitationID.key)" }
}

/// A like was added or taken back.
public struct ChallengeLiked: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.challenges.definition.liked.v1", topic: .challenges,
        summary: "A user liked a challenge (`liked` true) or took the like back (false).")

    public var challengeID: UUID
    public var userID: UUID
    public var liked: Bool
    public var likedAt: Date

    public init(challengeID: UUID, userID: UUID, liked: Bool, likedAt: Date) {
        self.challengeID = challengeID
        self.userID = userID
        self.liked = liked
        self.likedAt = likedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "challenges/\(challengeID.key)/likes/\(userID.key)" }
}
