import Foundation
import SurgeContracts

/// A friend, as the caller sees them.
public struct Friend: Codable, Sendable, Equatable {
    public var user: PublicProfile
    public var since: Date

    public init(user: PublicProfile, since: Date) {
        self.user = user
        self.since = since
    }
}

/// A pending friend request. Answered requests are gone: an accepted one became a friendship.
public struct FriendRequest: Codable, Sendable, Equatable {
    public var id: UUID
    public var requester: PublicProfile
    public var addressee: PublicProfile
    public var createdAt: Date

    public init(id: UUID, requester: PublicProfile, addressee: PublicProfile, createdAt: Date) {
        self.id = id
        self.requester = requester
        self.addressee = addressee
        self.createdAt = createdAt
    }
}

public enum FriendRequestDirection: String, Codable, Sendable, CaseIterable, JSONSchemaEnum {
    /// Requests others sent to the caller.
    case incoming
    /// Requests the caller sent.
    case outgoing
}
