import Foundation
import SurgeContracts

/// Whom to invite: friends by id, or every member of a group the inviter belongs to.
public struct InvitationRequest: Codable, Sendable, Equatable {
    public var userIDs: [UUID]?
    public var groupID: UUID?

    public static let maxUsers = 50
}

/// An invitation sent: the invitee may see the challenge from now on.
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
