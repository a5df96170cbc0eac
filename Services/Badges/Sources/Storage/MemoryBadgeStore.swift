import BadgesDomain
import Foundation
import SurgeContracts

/// The rebuild's store: the same effects as `PostgresBadgeStore`, on dictionaries, written to the tables once at the
/// end (`RebuildWriter`). It publishes nothing.
struct MemoryBadgeStore: BadgeStore {
    struct Pair: Hashable, Sendable {
        var first: UUID
        var second: UUID
    }

    struct FactKey: Hashable, Sendable {
        var userID: UUID
        var fact: Fact
    }

    struct AwardKey: Hashable, Sendable {
        var userID: UUID
        var badgeID: String
        var level: Int
        var period: String
    }

    struct AwardRow: Sendable {
        var title: String
        var awardedAt: Date
        var backfilled: Bool
    }

    struct ChallengeRow: Sendable {
        var version: Int
        var kind: ChallengeKind
        var badges: [ChallengeBadge]
        var visibility: Visibility
        var ownerID: UUID?
        var groupID: UUID?
        var deleted = false
    }

    var users: Set<UUID> = []
    var erased: Set<UUID> = []
    /// (lower, higher) as `UUID.key` orders them
    var friendships: Set<Pair> = []
    /// (group, user)
    var members: Set<Pair> = []
    var facts: [FactKey: Int] = [:]
    var awards: [AwardKey: AwardRow] = [:]
    /// Per user, the badges held at any level.
    var held: [UUID: Set<String>] = [:]
    var challenges: [UUID: ChallengeRow] = [:]
    /// (challenge, user)
    var participants: Set<Pair> = []

    func isErased(_ userID: UUID) async throws -> Bool { erased.contains(userID) }

    mutating func saveUser(_ userID: UUID) async throws {
        guard !erased.contains(userID) else { return }
        users.insert(userID)
    }

    mutating func erase(_ userID: UUID) async throws {
        erased.insert(userID)
        users.remove(userID)
        facts = facts.filter { $0.key.userID != userID }
        if held.removeValue(forKey: userID) != nil { awards = awards.filter { $0.key.userID != userID } }
        friendships = friendships.filter { $0.first != userID && $0.second != userID }
        members = members.filter { $0.second != userID }
        participants = participants.filter { $0.second != userID }
    }

    mutating func setFriendship(_ a: UUID, _ b: UUID, friends: Bool) async throws {
        let pair = a.key < b.key ? Pair(first: a, second: b) : Pair(first: b, second: a)
        if friends { friendships.insert(pair) } else { friendships.remove(pair) }
    }

    mutating func setMembership(_ groupID: UUID, _ userID: UUID, member: Bool) async throws {
        if member { members.insert(Pair(first: groupID, second: userID)) } else { members.remove(Pair(first: groupID, second: userID)) }
    }

    /// Held levels are not looked up: a replay's award finds them held in its own dictionary.
    mutating func change(_ changed: [Fact], _ change: FactChange, of userID: UUID, heldAmong badgeIDs: [String]) async throws -> ChangedFacts? {
        guard !erased.contains(userID) else { return nil }
        var values: [Int] = []
        for fact in changed {
            let key = FactKey(userID: userID, fact: fact)
            switch change {
            case .add(let delta): facts[key, default: 0] += delta
            case .raise(let value): facts[key] = max(facts[key] ?? value, value)
            }
            values.append(facts[key] ?? 0)
        }
        return ChangedFacts(values: values)
    }

    mutating func award(_ award: Award, to userID: UUID, at time: Date, backfilled: Bool) async throws -> Bool {
        let key = AwardKey(userID: userID, badgeID: award.badgeID, level: award.level, period: award.period)
        guard awards[key] == nil else { return false }
        awards[key] = AwardRow(title: award.title, awardedAt: time, backfilled: backfilled)
        held[userID, default: []].insert(award.badgeID)
        return true
    }

    func heldBadges(of userID: UUID) async throws -> Set<String> { held[userID] ?? [] }

    mutating func saveChallenge(_ definition: ChallengeDefinition) async throws -> Bool {
        if let kept = challenges[definition.challengeID], kept.version >= definition.version { return false }
        challenges[definition.challengeID] = ChallengeRow(
            version: definition.version, kind: definition.kind, badges: definition.badges ?? [], visibility: definition.visibility,
            ownerID: definition.ownerID, groupID: definition.groupID, deleted: challenges[definition.challengeID]?.deleted ?? false)
        return true
    }

    mutating func deleteChallenge(_ challengeID: UUID) async throws { challenges[challengeID]?.deleted = true }

    mutating func join(_ challengeID: UUID, _ userID: UUID) async throws {
        guard !erased.contains(userID) else { return }
        participants.insert(Pair(first: challengeID, second: userID))
    }

    func challengeKind(_ challengeID: UUID) async throws -> ChallengeKind? { challenges[challengeID]?.kind }

    func challengeBadges(_ challengeID: UUID) async throws -> BadgeCatalogue {
        BadgeCatalogue(challengeID: challengeID, badges: challenges[challengeID]?.badges ?? [])
    }

    func users(with fact: Fact, atLeast threshold: Int) async throws -> [(UUID, Int)] {
        facts.filter { $0.key.fact == fact && $0.value >= threshold && users.contains($0.key.userID) }
            .map { ($0.key.userID, $0.value) }.sorted { $0.0.key < $1.0.key }
    }

    func publish(_ awarded: BadgeAwarded, at time: Date, trace: TraceContext?) async throws {}
}
