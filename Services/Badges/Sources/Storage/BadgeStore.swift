import BadgesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging

/// What the badge service keeps from events: who exists and who knows whom (for rarity and for who may see whose
/// badges), facts, awards, and each challenge's kind and own badges. The consumer's handlers (`BadgesEvents`) are
/// written once over it: `PostgresBadgeStore` inside each event's inbox transaction, `MemoryBadgeStore` for a rebuild.
/// How an event changes a fact.
enum FactChange: Sendable {
    /// A count goes up (or down) by this much.
    case add(Int)
    /// A best-so-far value (a streak) becomes this, unless it is already higher.
    case raise(Int)
}

protocol BadgeStore: Sendable {
    func isErased(_ userID: UUID) async throws -> Bool
    mutating func saveUser(_ userID: UUID) async throws
    /// A deleted user's facts, awards and relations are forgotten; later events about them are ignored.
    mutating func erase(_ userID: UUID) async throws
    mutating func setFriendship(_ a: UUID, _ b: UUID, friends: Bool) async throws
    mutating func setMembership(_ groupID: UUID, _ userID: UUID, member: Bool) async throws
    /// Adds to counts or raises best-so-far values (a streak) of distinct facts; returns each value kept, in order, or
    /// nil for a deleted user, whose facts are not kept (the check costs no statement of its own). With them, levels
    /// of `badgeIDs` the user already holds, so that a check-in does not try again an award it earned long ago: a hint
    /// that may leave some out (storing an award finds it held anyway).
    mutating func change(_ facts: [Fact], _ change: FactChange, of userID: UUID, heldAmong badgeIDs: [String]) async throws -> ChangedFacts?
    /// Stores the award; false when the user already held it (so nothing is published twice).
    mutating func award(_ award: Award, to userID: UUID, at time: Date, backfilled: Bool) async throws -> Bool
    func heldBadges(of userID: UUID) async throws -> Set<String>
    /// Keeps a challenge's kind, own badges and who may see them from its definition, unless a later version is
    /// already kept; returns whether they were kept.
    mutating func saveChallenge(_ definition: ChallengeDefinition) async throws -> Bool
    /// A deleted challenge's own badges are no longer listed (locked, or in its catalogue); those earned stay.
    mutating func deleteChallenge(_ challengeID: UUID) async throws
    /// The user joined the challenge (started an attempt, completed one of its chores).
    mutating func join(_ challengeID: UUID, _ userID: UUID) async throws
    func challengeKind(_ challengeID: UUID) async throws -> ChallengeKind?
    /// A challenge's own badges, as a catalogue of their own (empty when it names none).
    func challengeBadges(_ challengeID: UUID) async throws -> BadgeCatalogue
    /// Users whose `fact` is at least `threshold`, with its value, in `user_id` order.
    func users(with fact: Fact, atLeast threshold: Int) async throws -> [(UUID, Int)]
    /// Publishes an award just stored, in the same transaction. A replay in memory publishes nothing: the rebuild
    /// publishes what is new to it once, at the end.
    mutating func publish(_ awarded: BadgeAwarded, at time: Date, trace: TraceContext?) async throws
}

/// What a fact change left (`BadgeStore.change`).
struct ChangedFacts: Sendable {
    /// Each fact's value, in the order asked.
    var values: [Int]
    /// Levels the user already holds, among the badges asked about.
    var held: Set<BadgeLevel> = []
}

struct BadgeLevel: Hashable, Sendable {
    var badgeID: String
    var level: Int
}

/// The badge service's writes, inside one event's inbox transaction.
struct PostgresBadgeStore: BadgeStore {
    let connection: PostgresConnection
    let logger: Logger
    let outbox: Outbox

    func publish(_ awarded: BadgeAwarded, at time: Date, trace: TraceContext?) async throws {
        _ = try await outbox.append(awarded, on: connection, at: time, trace: trace, logger: logger)
    }

    func isErased(_ userID: UUID) async throws -> Bool {
        try await connection.query("SELECT 1 FROM erased_users WHERE user_id = \(userID)", logger: logger).collect().isEmpty == false
    }

    func saveUser(_ userID: UUID) async throws {
        try await connection.query(
            """
            INSERT INTO users (user_id) SELECT \(userID) WHERE NOT EXISTS (SELECT 1 FROM erased_users WHERE user_id = \(userID))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    func erase(_ userID: UUID) async throws {
        try await connection.query("INSERT INTO erased_users (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
        for statement: PostgresQuery in [
            "DELETE FROM users WHERE user_id = \(userID)",
            "DELETE FROM facts WHERE user_id = \(userID)",
            "DELETE FROM awards WHERE user_id = \(userID)",
            "DELETE FROM friendships WHERE user_low = \(userID) OR user_high = \(userID)",
            "DELETE FROM group_members WHERE user_id = \(userID)",
            "DELETE FROM participants WHERE user_id = \(userID)",
        ] {
            try await connection.query(statement, logger: logger)
        }
    }

    func setFriendship(_ a: UUID, _ b: UUID, friends: Bool) async throws {
        let (low, high) = a.key < b.key ? (a, b) : (b, a)
        if friends {
            try await connection.query("INSERT INTO friendships (user_low, user_high) VALUES (\(low), \(high)) ON CONFLICT DO NOTHING", logger: logger)
        } else {
            try await connection.query("DELETE FROM friendships WHERE user_low = \(low) AND user_high = \(high)", logger: logger)
        }
    }

    func setMembership(_ groupID: UUID, _ userID: UUID, member: Bool) async throws {
        if member {
            try await connection.query(
                "INSERT INTO group_members (group_id, user_id) VALUES (\(groupID), \(userID)) ON CONFLICT DO NOTHING", logger: logger)
        } else {
            try await connection.query("DELETE FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger)
        }
    }

    /// One statement for all the facts an event touches (everywhere, its kind, its challenge), and the levels held.
    func change(_ facts: [Fact], _ change: FactChange, of userID: UUID, heldAmong badgeIDs: [String]) async throws -> ChangedFacts? {
        guard !facts.isEmpty else { return ChangedFacts(values: []) }
        let (names, scopes) = (facts.map(\.name), facts.map(\.scope))
        let (amount, raise): (Int, Bool) =
            switch change {
            case .add(let delta): (delta, false)
            case .raise(let value): (value, true)
            }
        let rows = try await connection.query(
            """
            WITH changed AS (
                INSERT INTO facts (user_id, name, scope, value)
                SELECT \(userID), f.name, f.scope, \(amount) FROM unnest(\(names)::text[], \(scopes)::text[]) AS f (name, scope)
                WHERE NOT EXISTS (SELECT 1 FROM erased_users WHERE user_id = \(userID))
                ON CONFLICT (user_id, name, scope) DO UPDATE
                    SET value = CASE WHEN \(raise) THEN GREATEST(facts.value, EXCLUDED.value) ELSE facts.value + EXCLUDED.value END
                RETURNING name, scope, value
            )
            SELECT name, scope, value, NULL::text, NULL::int FROM changed
            UNION ALL
            SELECT NULL, NULL, NULL, badge_id, level FROM awards WHERE user_id = \(userID) AND badge_id = ANY(\(badgeIDs)) AND period = ''
            """, logger: logger)
        var values: [Fact: Int] = [:]
        var held: Set<BadgeLevel> = []
        for try await (name, scope, value, badgeID, level) in rows.decode((String?, String?, Int?, String?, Int?).self) {
            if let name, let scope, let value { values[Fact(name: name, scope: scope)] = value }
            if let badgeID, let level { held.insert(BadgeLevel(badgeID: badgeID, level: level)) }
        }
        // Every fact of a user not deleted comes back, inserted or updated.
        return values.isEmpty ? nil : ChangedFacts(values: facts.map { values[$0] ?? 0 }, held: held)
    }

    func award(_ award: Award, to userID: UUID, at time: Date, backfilled: Bool) async throws -> Bool {
        try await connection.query(
            """
            INSERT INTO awards (user_id, badge_id, level, period, title, awarded_at, backfilled)
            VALUES (\(userID), \(award.badgeID), \(award.level), \(award.period), \(award.title), \(time), \(backfilled))
            ON CONFLICT DO NOTHING RETURNING 1
            """, logger: logger
        ).collect().isEmpty == false
    }

    func heldBadges(of userID: UUID) async throws -> Set<String> {
        Set(try await connection.query("SELECT DISTINCT badge_id FROM awards WHERE user_id = \(userID)", logger: logger).collect()
            .map { try $0.decode(String.self) })
    }

    func saveChallenge(_ definition: ChallengeDefinition) async throws -> Bool {
        let badges = String(decoding: try SurgeJSON.encode(definition.badges ?? []), as: UTF8.self)
        return try await connection.query(
            """
            INSERT INTO challenges (challenge_id, version, kind, badges, visibility, owner_id, group_id)
            VALUES (
                \(definition.challengeID), \(definition.version), \(definition.kind.rawValue), \(badges)::jsonb,
                \(definition.visibility.rawValue), \(definition.ownerID), \(definition.groupID))
            ON CONFLICT (challenge_id) DO UPDATE SET version = EXCLUDED.version, kind = EXCLUDED.kind, badges = EXCLUDED.badges,
                visibility = EXCLUDED.visibility, owner_id = EXCLUDED.owner_id, group_id = EXCLUDED.group_id
            WHERE challenges.version < EXCLUDED.version
            RETURNING 1
            """, logger: logger
        ).collect().isEmpty == false
    }

    func deleteChallenge(_ challengeID: UUID) async throws {
        try await connection.query("UPDATE challenges SET deleted = true WHERE challenge_id = \(challengeID)", logger: logger)
    }

    func join(_ challengeID: UUID, _ userID: UUID) async throws {
        try await connection.query(
            """
            INSERT INTO participants (challenge_id, user_id) SELECT \(challengeID), \(userID)
            WHERE NOT EXISTS (SELECT 1 FROM erased_users WHERE user_id = \(userID))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    func challengeKind(_ challengeID: UUID) async throws -> ChallengeKind? {
        try await connection.query("SELECT kind FROM challenges WHERE challenge_id = \(challengeID)", logger: logger).collect().first
            .flatMap { ChallengeKind(rawValue: try $0.decode(String.self)) }
    }

    func challengeBadges(_ challengeID: UUID) async throws -> BadgeCatalogue {
        let json = try await connection.query("SELECT badges::text FROM challenges WHERE challenge_id = \(challengeID)", logger: logger)
            .collect().first?.decode(String.self)
        return try json.map { try Self.challengeBadges(challengeID, json: $0) } ?? BadgeCatalogue(challengeID: challengeID, badges: [])
    }

    /// A challenge's own badges as kept (`challenges.badges`).
    static func challengeBadges(_ challengeID: UUID, json: String) throws -> BadgeCatalogue {
        BadgeCatalogue(challengeID: challengeID, badges: try SurgeJSON.decode([ChallengeBadge].self, from: Data(json.utf8)))
    }

    func users(with fact: Fact, atLeast threshold: Int) async throws -> [(UUID, Int)] {
        try await connection.query(
            """
            SELECT f.user_id, f.value FROM facts f JOIN users u USING (user_id)
            WHERE f.name = \(fact.name) AND f.scope = \(fact.scope) AND f.value >= \(threshold) ORDER BY f.user_id
            """, logger: logger
        ).collect().map { try $0.decode((UUID, Int).self) }
    }
}
