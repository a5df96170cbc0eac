import ChallengesDomain
import Foundation
import SurgeContracts
import SurgeRuntime

/// Opens a `ChallengeStore` for one unit of work. `PostgresChallengeStorage` is the implementation.
protocol ChallengeStorage: Sendable {
    /// `body` in one transaction: what it changes and the events it publishes commit together, or not at all.
    func transaction<Result: Sendable>(_ body: (any ChallengeStore) async throws -> Result) async throws -> Result
    /// `body` on one connection, for reads.
    func reading<Result: Sendable>(_ body: (any ChallengeStore) async throws -> Result) async throws -> Result
}

/// Definitions, their versions, likes and invitations, what challenges knows of identity (users' zones, friendships,
/// groups and members), and the outbox, as one unit of work sees them. The use cases decide; this reads and writes.
protocol ChallengeStore: Sendable {
    // MARK: Definitions and versions

    /// The challenge and the caller's relation to it; `locking` holds its row until the transaction ends.
    func challenge(_ challengeID: UUID, as caller: UUID, locking: Bool) async throws -> ChallengeRecord?
    func version(_ number: Int, of challengeID: UUID) async throws -> ChallengeVersion?
    func history(of challengeID: UUID) async throws -> [VersionSummary]
    /// A new challenge with `first` as its version 1. `contentVersion` is a curated definition's.
    func insert(_ first: ChallengeVersion, contentVersion: Int?, createdBy: UUID?, at time: Date) async throws
    /// The next version, which becomes the latest (what lists and search show).
    func add(_ next: ChallengeVersion, contentVersion: Int?, createdBy: UUID?, at time: Date) async throws
    /// Deletes the challenge with its whole history, likes and invitations.
    func delete(_ challengeID: UUID) async throws
    /// The content version a curated definition was last seeded at, and its latest version; nil if it is not stored.
    func seeded(_ challengeID: UUID) async throws -> (contentVersion: Int?, latestVersion: Int)?
    /// Makes replicas that seed the curated content at the same time take turns, until the transaction ends.
    func lockContent() async throws

    // MARK: Likes and invitations

    /// Whether the like is new; a new one counts towards today's trending activity.
    func like(_ challengeID: UUID, by userID: UUID, at time: Date) async throws -> Bool
    /// When the like taken back was given (its day's trending activity drops); nil if there was none.
    func unlike(_ challengeID: UUID, by userID: UUID) async throws -> Date?
    /// Stores the like count and refreshes the trending score as of `today`.
    func setLikes(_ count: Int, of challengeID: UUID, today: LocalDate) async throws
    /// Whether the invitation is new: nothing is stored for an invitee invited before.
    func invite(_ invitation: Invitation, from inviterID: UUID) async throws -> Bool

    // MARK: The directory

    /// A group's current members; nil without a group or if the group has none we know of.
    func members(of groupID: UUID?) async throws -> Set<UUID>?
    func isMember(_ userID: UUID, of groupID: UUID) async throws -> Bool
    /// Which of `others` are accepted friends of `userID`.
    func friends(of userID: UUID, among others: [UUID]) async throws -> Set<UUID>
    func timeZone(ofUser userID: UUID) async throws -> TimeZone?
    func timeZone(ofGroup groupID: UUID) async throws -> TimeZone?

    // MARK: Events

    /// Writes `event` to the outbox, with the changes of this transaction.
    func publish<Event: EventPayload>(_ event: Event, at time: Date, trace: TraceContext?) async throws
}

/// The library and the lists, each one page of what the caller may see, filtered and ordered.
protocol ChallengeListStore: Sendable {
    func browse(_ query: BrowseQuery, page: PageRequest<BrowsePosition>, caller: UUID) async throws -> Page<ListedChallenge>
    /// What the caller owns or was invited to, newest first.
    func mine(kind: ChallengeKind?, page: PageRequest<SequencePosition>, caller: UUID) async throws -> Page<ListedChallenge>
    /// A group's chores, newest first.
    func chores(groupID: UUID, page: PageRequest<SequencePosition>, caller: UUID) async throws -> Page<ListedChallenge>
}

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
