import ChallengesDomain
import Foundation
import SurgeContracts
import SurgeRuntime

/// A challenge and the caller's relation to it.
struct ChallengeRecord: Sendable, Equatable {
    var challengeID: UUID
    var kind: ChallengeKind
    var visibility: Visibility
    var ownerID: UUID?
    var groupID: UUID?
    var latestVersion: Int
    var name: String
    var likes: Int
    var createdAt: Date
    var updatedAt: Date
    var isOwner: Bool
    var isInvited: Bool
    var isGroupMember: Bool
    var likedByMe: Bool

    var facts: AccessFacts {
        AccessFacts(kind: kind, visibility: visibility, isOwner: isOwner, isInvited: isInvited, isGroupMember: isGroupMember)
    }
}

/// A definition in a list: its latest version and counters.
struct ListedChallenge: Codable, Sendable, Equatable {
    var latest: ChallengeVersion
    var likes: Int
    /// Joins and likes in the last seven days.
    var trendingScore: Int
    var createdAt: Date
    /// What the list is ordered by: the creation sequence, likes, trending score or search relevance.
    var sortKey: Double
    /// Search relevance (`ts_rank`), when the list is sorted by it.
    var relevance: Double?
}
