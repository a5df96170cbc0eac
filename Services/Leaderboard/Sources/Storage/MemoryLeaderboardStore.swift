import Foundation
import LeaderboardDomain
import SurgeContracts

/// The rebuild's store: the same effects as `PostgresLeaderboardStore`, on dictionaries, written to PostgreSQL once
/// at the end (`Rebuild.write`). Scores of removed users are dropped rather than kept as tombstones; every board
/// window ever changed is remembered, as the incremental path keeps a `boards` row for it.
struct MemoryLeaderboardStore: LeaderboardStore, Sendable {
    struct Pair: Hashable, Sendable {
        var first: UUID
        var second: UUID
    }

    struct ChallengeRow: Sendable {
        var name: String
        var kind: ChallengeKind
        var visibility: Visibility
        var ownerID: UUID?
        var groupID: UUID?
        var unit: String?
    }

    var profiles: [UUID: DirectoryStore.Profile] = [:]
    var erased: Set<UUID> = []
    var groups: [UUID: (name: String, zone: GroupZone)] = [:]
    /// (group, user)
    var members: Set<Pair> = []
    /// (lower, higher) as `UUID.key` orders them
    var friendships: Set<Pair> = []
    var challenges: [UUID: ChallengeRow] = [:]
    /// (challenge, user)
    var invitations: Set<Pair> = []
    /// (challenge, user)
    var participants: Set<Pair> = []
    var scores: [BoardWindow: [UUID: Double]] = [:]
    var windows: [Board: Set<WindowKey>] = [:]

    func profile(_ userID: UUID) async throws -> DirectoryStore.Profile? { profiles[userID] }
    func groupZone(_ groupID: UUID) async throws -> GroupZone? { groups[groupID]?.zone }

    mutating func saveProfile(_ profile: DirectoryStore.Profile) async throws {
        guard !erased.contains(profile.userID) else { return }
        profiles[profile.userID] = profile
    }

    mutating func touchScores(of userID: UUID) async throws {}

    mutating func erase(_ userID: UUID) async throws {
        erased.insert(userID)
        profiles[userID] = nil
        members = members.filter { $0.second != userID }
        friendships = friendships.filter { $0.first != userID && $0.second != userID }
        participants = participants.filter { $0.second != userID }
        invitations = invitations.filter { $0.second != userID }
        for key in Array(scores.keys) where scores[key]?[userID] != nil { scores[key]?[userID] = nil }
    }

    mutating func saveGroup(_ groupID: UUID, name: String, timeZone: String, at instant: Date) async throws {
        groups[groupID] = (name, groups[groupID]?.zone.changing(to: timeZone, at: instant) ?? GroupZone(zone: timeZone))
    }

    mutating func setMembership(_ groupID: UUID, _ userID: UUID, member: Bool) async throws {
        if member {
            guard !erased.contains(userID) else { return }
            members.insert(Pair(first: groupID, second: userID))
        } else {
            members.remove(Pair(first: groupID, second: userID))
        }
    }

    mutating func setFriendship(_ a: UUID, _ b: UUID, friends: Bool) async throws {
        let pair = a.key < b.key ? Pair(first: a, second: b) : Pair(first: b, second: a)
        if friends { friendships.insert(pair) } else { friendships.remove(pair) }
    }

    mutating func saveChallenge(_ definition: ChallengeDefinition) async throws {
        challenges[definition.challengeID] = ChallengeRow(
            name: definition.name, kind: definition.kind, visibility: definition.visibility, ownerID: definition.ownerID,
            groupID: definition.groupID, unit: definition.competition?.unit)
    }

    mutating func deleteChallenge(_ challengeID: UUID) async throws {
        challenges[challengeID] = nil
        participants = participants.filter { $0.first != challengeID }
        invitations = invitations.filter { $0.first != challengeID }
    }

    mutating func invite(_ userID: UUID, to challengeID: UUID) async throws { invitations.insert(Pair(first: challengeID, second: userID)) }

    mutating func addParticipant(_ userID: UUID, to challengeID: UUID) async throws {
        guard !erased.contains(userID) else { return }
        participants.insert(Pair(first: challengeID, second: userID))
    }

    mutating func addScore(_ delta: Double, for userID: UUID, on board: Board, windows keys: [WindowKey], at time: Date, trace: TraceContext?)
        async throws
    {
        guard !erased.contains(userID) else { return }
        for window in keys {
            windows[board, default: []].insert(window)
            scores[BoardWindow(board: board, window: window), default: [:]][userID, default: 0] += delta
        }
    }

    mutating func removeScores(of userID: UUID, from board: Board, windows keys: [WindowKey]) async throws {
        for window in keys {
            windows[board, default: []].insert(window)
            scores[BoardWindow(board: board, window: window)]?[userID] = nil
        }
    }
}
