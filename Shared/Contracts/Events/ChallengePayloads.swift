import Foundation

/// A new definition exists (version 1): a curated challenge seeded, or a competition, habit, chore or weekly
/// challenge created.
public struct ChallengePublished: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.challenges.definition.published.v1", topic: .challenges,
        summary: "A challenge, competition, habit, chore or weekly challenge was created; carries version 1 whole.",
        emitted: """
            When `POST /v1/challenges` creates a competition, habit, chore or weekly challenge, and when the \
            challenges service starts and seeds a curated definition it does not hold yet.
            """)

    public static let example = CloudEvent<ChallengePublished>.example(id: "7a0e5c3b-9d21-4f68-b4e7-1c9f2a6d8e30", time: "2026-03-02T19:03:11.472Z") {
        ChallengePublished(definition: Example.readingDefinition, publishedAt: $0)
    }

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
        summary: "A definition was edited; carries the new version whole and the local date it applies from.",
        emitted: """
            When `PATCH /v1/challenges/{challengeID}` changes a definition's content (a patch that changes nothing \
            emits nothing), and when the challenges service starts with a curated definition whose content version \
            went up (`changedBy` is then `00000000-0000-0000-0000-000000000000`).
            """)

    public static let example = CloudEvent<ChallengeChanged>.example(id: "e4b91f07-2c6a-4d35-8f0e-a7d3c5b12968", time: "2026-03-19T08:26:40.319Z") {
        var definition = Example.readingDefinition
        definition.version = 2
        definition.effectiveFrom = Example.date("2026-03-20")
        definition.name = "Read 15 pages"
        definition.tasks[0].title = "Read 15 pages"
        definition.tasks[0].target = 15
        return ChallengeChanged(definition: definition, changedBy: Example.giulia, changedAt: $0)
    }

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
        summary: "A definition and its history were deleted after explicit confirmation.",
        emitted: """
            When `DELETE /v1/challenges/{challengeID}` deletes a definition (confirmed), and when the challenges \
            service applies a `user.deleted`: one for each private definition the deleted user owned (`deletedBy` is \
            that user).
            """)

    public static let example = CloudEvent<ChallengeDeleted>.example(id: "0d6c3a9e-f815-4b27-a3c0-5e9b7d2f4a18", time: "2026-03-22T17:48:05.932Z") {
        ChallengeDeleted(
            challengeID: Example.id("e124574f-ed12-450c-af1e-c5e49b83917c"), kind: .habit, ownerID: Example.giulia, groupID: nil,
            deletedBy: Example.giulia, deletedAt: $0)
    }

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
        summary: "A user was invited to a competition or challenge by a friend (one event per invitee).",
        emitted: """
            When `POST /v1/challenges/{challengeID}/invitations` invites friends or a group's members: one event per \
            invitee newly invited (one already invited, or the owner, gets none).
            """)

    public static let example = CloudEvent<ChallengeInvitationSent>.example(id: "b5f2e8d4-1a7c-4e93-9d06-3f8a0c6b2e51", time: "2026-03-07T09:15:44.205Z") {
        ChallengeInvitationSent(
            invitationID: Example.id("f4a2fcdc-7122-41b0-a5ed-3ee0acd8da39"), challengeID: Example.waterCompetition, challengeName: "Hydration March",
            inviterID: Example.giulia, inviteeID: Example.marco, groupID: nil, sentAt: $0)
    }

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
        summary: "A user liked a challenge (`liked` true) or took the like back (false).",
        emitted: """
            When `PUT /v1/challenges/{challengeID}/like` adds a like (`liked` true) or `DELETE \
            /v1/challenges/{challengeID}/like` takes it back (false); repeating either emits nothing.
            """)

    public static let example = CloudEvent<ChallengeLiked>.example(id: "2a8d0f6c-e3b5-4917-8c4a-b0e7f1d93c26", time: "2026-03-08T11:02:37.661Z") {
        ChallengeLiked(challengeID: Example.seventyFiveHard, userID: Example.marco, liked: true, likedAt: $0)
    }

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
