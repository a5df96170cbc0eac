import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeCalendar
import SurgeContracts

/// What the leaderboard learned from identity, challenges and progress events: names and zones, groups and their
/// members, friendships, challenges and who takes part. Handlers write it inside the inbox transaction (each write
/// sends the directory's notice on the `ChangeFeed`); reads use the pool, through the replica's `DirectoryCache`.
struct DirectoryStore {
    let connection: PostgresConnection
    let logger: Logger

    private var changes: ChangeFeed { ChangeFeed(connection: connection, logger: logger) }

    struct Profile: Sendable {
        var userID: UUID
        var displayName: String
        var avatarURL: String?
        var timeZone: String
    }

    struct ChallengeFacts: Sendable {
        var challengeID: UUID
        var name: String
        var kind: ChallengeKind
        var visibility: Visibility
        var ownerID: UUID?
        var groupID: UUID?
        var unit: String?

        /// Competitions rank by the quantity logged, everything else by points.
        var board: Board { Board(kind == .competition ? .competition : .challenge, challengeID) }
    }

    // MARK: Writing (inside an event's transaction)

    func saveProfile(_ profile: Profile) async throws {
        try await changes.directoryChanged()
        try await connection.query(
            """
            INSERT INTO profiles (user_id, display_name, avatar_url, time_zone)
            SELECT \(profile.userID), \(profile.displayName), \(profile.avatarURL), \(profile.timeZone)
            WHERE NOT EXISTS (SELECT 1 FROM erased_users WHERE user_id = \(profile.userID))
            ON CONFLICT (user_id) DO UPDATE SET display_name = EXCLUDED.display_name, avatar_url = EXCLUDED.avatar_url,
                time_zone = EXCLUDED.time_zone
            """, logger: logger)
    }

    func erase(_ userID: UUID) async throws {
        try await changes.directoryChanged()
        try await connection.query("INSERT INTO erased_users (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
        for statement: PostgresQuery in [
            "DELETE FROM profiles WHERE user_id = \(userID)",
            "DELETE FROM group_members WHERE user_id = \(userID)",
            "DELETE FROM friendships WHERE user_low = \(userID) OR user_high = \(userID)",
            "DELETE FROM participants WHERE user_id = \(userID)",
            "DELETE FROM invitations WHERE user_id = \(userID)",
        ] {
            try await connection.query(statement, logger: logger)
        }
    }

    /// A new group takes its zone at once; a zone change of a known group applies from its next week (`GroupZone`).
    func saveGroup(_ groupID: UUID, name: String, timeZone: String, at instant: Date)
        async throws
    {
        try await changes.directoryChanged()
        let zone = try await groupZone(groupID, forUpdate: true)?.changing(to: timeZone, at: instant)
            ?? GroupZone(zone: timeZone)
        try await connection.query(
            """
            INSERT INTO groups (group_id, name, time_zone, next_time_zone, zone_changes_at)
            VALUES (\(groupID), \(name), \(zone.zone), \(zone.nextZone), \(zone.changesAt))
            ON CONFLICT (group_id) DO UPDATE SET name = EXCLUDED.name, time_zone = EXCLUDED.time_zone,
                next_time_zone = EXCLUDED.next_time_zone, zone_changes_at = EXCLUDED.zone_changes_at
            """, logger: logger)
    }

    func setMembership(_ groupID: UUID, _ userID: UUID, member: Bool) async throws {
        try await changes.directoryChanged()
        if member {
            try await connection.query(
                """
                INSERT INTO group_members (group_id, user_id) SELECT \(groupID), \(userID)
                WHERE NOT EXISTS (SELECT 1 FROM erased_users WHERE user_id = \(userID)) ON CONFLICT DO NOTHING
                """, logger: logger)
        } else {
            try await connection.query("DELETE FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger)
        }
    }

    func setFriendship(_ a: UUID, _ b: UUID, friends: Bool) async throws {
        try await changes.directoryChanged()
        let (low, high) = a.key < b.key ? (a, b) : (b, a)
        if friends {
            try await connection.query("INSERT INTO friendships (user_low, user_high) VALUES (\(low), \(high)) ON CONFLICT DO NOTHING", logger: logger)
        } else {
            try await connection.query("DELETE FROM friendships WHERE user_low = \(low) AND user_high = \(high)", logger: logger)
        }
    }

    func saveChallenge(_ definition: ChallengeDefinition) async throws {
        try await changes.directoryChanged()
        try await connection.query(
            """
            INSERT INTO challenges (challenge_id, name, kind, visibility, owner_id, group_id, unit)
            VALUES (\(definition.challengeID), \(definition.name), \(definition.kind.rawValue), \(definition.visibility.rawValue),
                    \(definition.ownerID), \(definition.groupID), \(definition.competition?.unit))
            ON CONFLICT (challenge_id) DO UPDATE SET name = EXCLUDED.name, kind = EXCLUDED.kind, visibility = EXCLUDED.visibility,
                owner_id = EXCLUDED.owner_id, group_id = EXCLUDED.group_id, unit = EXCLUDED.unit
            """, logger: logger)
    }

    func deleteChallenge(_ challengeID: UUID) async throws {
        try await changes.directoryChanged()
        for statement: PostgresQuery in [
            "DELETE FROM challenges WHERE challenge_id = \(challengeID)",
            "DELETE FROM participants WHERE challenge_id = \(challengeID)",
            "DELETE FROM invitations WHERE challenge_id = \(challengeID)",
        ] {
            try await connection.query(statement, logger: logger)
        }
    }

    func invite(_ userID: UUID, to challengeID: UUID) async throws {
        try await changes.directoryChanged()
        try await connection.query(
            "INSERT INTO invitations (challenge_id, user_id) VALUES (\(challengeID), \(userID)) ON CONFLICT DO NOTHING", logger: logger)
    }

    func addParticipant(_ userID: UUID, to challengeID: UUID) async throws {
        try await changes.directoryChanged()
        try await connection.query(
            """
            INSERT INTO participants (challenge_id, user_id) SELECT \(challengeID), \(userID)
            WHERE NOT EXISTS (SELECT 1 FROM erased_users WHERE user_id = \(userID)) ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    // MARK: Reading

    func profile(_ userID: UUID) async throws -> Profile? {
        let rows = try await connection.query(
            "SELECT display_name, avatar_url, time_zone FROM profiles WHERE user_id = \(userID)", logger: logger)
        for try await (name, avatar, zone) in rows.decode((String, String?, String).self) {
            return Profile(userID: userID, displayName: name, avatarURL: avatar, timeZone: zone)
        }
        return nil
    }

    func profiles(_ userIDs: [UUID]) async throws -> [UUID: Profile] {
        guard !userIDs.isEmpty else { return [:] }
        var profiles: [UUID: Profile] = [:]
        let rows = try await connection.query(
            "SELECT user_id, display_name, avatar_url, time_zone FROM profiles WHERE user_id = ANY(\(userIDs))", logger: logger)
        for try await (id, name, avatar, zone) in rows.decode((UUID, String, String?, String).self) {
            profiles[id] = Profile(userID: id, displayName: name, avatarURL: avatar, timeZone: zone)
        }
        return profiles
    }

    /// The group's zone schedule; nil if the group is unknown.
    func groupZone(_ groupID: UUID, forUpdate: Bool = false) async throws -> GroupZone? {
        try await group(groupID, forUpdate: forUpdate)?.zone
    }

    func group(_ groupID: UUID, forUpdate: Bool = false) async throws
        -> (name: String, zone: GroupZone)?
    {
        let rows = try await connection.query(
            forUpdate
                ? "SELECT name, time_zone, next_time_zone, zone_changes_at FROM groups WHERE group_id = \(groupID) FOR UPDATE"
                : "SELECT name, time_zone, next_time_zone, zone_changes_at FROM groups WHERE group_id = \(groupID)",
            logger: logger)
        for try await (name, zone, next, changesAt) in rows.decode((String, String, String?, Date?).self) {
            return (name, GroupZone(zone: zone, nextZone: next, changesAt: changesAt))
        }
        return nil
    }

    func members(of groupID: UUID) async throws -> [UUID] {
        try await connection.query("SELECT user_id FROM group_members WHERE group_id = \(groupID)", logger: logger).collect()
            .map { try $0.decode(UUID.self) }
    }

    func isMember(_ userID: UUID, of groupID: UUID) async throws -> Bool {
        try await connection.query(
            "SELECT 1 FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger
        ).collect().isEmpty == false
    }

    func friends(of userID: UUID) async throws -> [UUID] {
        try await connection.query(
            """
            SELECT user_high FROM friendships WHERE user_low = \(userID)
            UNION SELECT user_low FROM friendships WHERE user_high = \(userID)
            """, logger: logger
        ).collect().map { try $0.decode(UUID.self) }
    }

    func challenge(_ challengeID: UUID) async throws -> ChallengeFacts? {
        let rows = try await connection.query(
            "SELECT name, kind, visibility, owner_id, group_id, unit FROM challenges WHERE challenge_id = \(challengeID)", logger: logger)
        for try await (name, kind, visibility, owner, group, unit) in rows.decode((String, String, String, UUID?, UUID?, String?).self) {
            guard let kind = ChallengeKind(rawValue: kind), let visibility = Visibility(rawValue: visibility) else { return nil }
            return ChallengeFacts(challengeID: challengeID, name: name, kind: kind, visibility: visibility, ownerID: owner, groupID: group, unit: unit)
        }
        return nil
    }

    /// Who may see a challenge's board: challenges' visibility rule, and whoever took part.
    func maySee(_ challenge: ChallengeFacts, userID: UUID) async throws -> Bool {
        var facts = ChallengeAccess.Facts(visibility: challenge.visibility, isOwner: challenge.ownerID == userID)
        if ChallengeAccess.canSee(facts) { return true }
        facts.isInvited = try await connection.query(
            "SELECT 1 FROM invitations WHERE challenge_id = \(challenge.challengeID) AND user_id = \(userID)", logger: logger
        ).collect().isEmpty == false
        if let groupID = challenge.groupID { facts.isGroupMember = try await isMember(userID, of: groupID) }
        if ChallengeAccess.canSee(facts) { return true }
        return try await connection.query(
            "SELECT 1 FROM participants WHERE challenge_id = \(challenge.challengeID) AND user_id = \(userID)", logger: logger
        ).collect().isEmpty == false
    }

    /// The challenges the user takes part in and the groups they belong to.
    func boardsOf(_ userID: UUID) async throws -> (challenges: [ChallengeFacts], groups: [UUID]) {
        var challenges: [ChallengeFacts] = []
        let rows = try await connection.query(
            """
            SELECT c.challenge_id, c.name, c.kind, c.visibility, c.owner_id, c.group_id, c.unit
            FROM participants p JOIN challenges c ON c.challenge_id = p.challenge_id
            WHERE p.user_id = \(userID) AND c.kind <> 'chore' ORDER BY c.name, c.challenge_id
            """, logger: logger)
        for try await (id, name, kind, visibility, owner, group, unit) in rows.decode((UUID, String, String, String, UUID?, UUID?, String?).self) {
            guard let kind = ChallengeKind(rawValue: kind), let visibility = Visibility(rawValue: visibility) else { continue }
            challenges.append(ChallengeFacts(challengeID: id, name: name, kind: kind, visibility: visibility, ownerID: owner, groupID: group, unit: unit))
        }
        let groups = try await connection.query(
            "SELECT m.group_id FROM group_members m JOIN groups g ON g.group_id = m.group_id WHERE m.user_id = \(userID) ORDER BY g.name, m.group_id",
            logger: logger
        ).collect().map { try $0.decode(UUID.self) }
        return (challenges, groups)
    }
}
