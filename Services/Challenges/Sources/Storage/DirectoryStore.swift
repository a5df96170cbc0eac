import Foundation
import Logging
import PostgresNIO
import SurgeCalendar
import SurgeContracts

/// The part of identity this service keeps for itself (users' time zones, accepted friendships, groups and their
/// current members), written inside the inbox transaction of the event that taught it.
struct DirectoryStore {
    let connection: PostgresConnection
    let logger: Logger

    func upsertUser(_ userID: UUID, displayName: String, timeZone: String) async throws {
        try await connection.query(
            """
            INSERT INTO users (user_id, display_name, time_zone) VALUES (\(userID), \(displayName), \(timeZone))
            ON CONFLICT (user_id) DO UPDATE SET display_name = EXCLUDED.display_name, time_zone = EXCLUDED.time_zone, updated_at = now()
            """, logger: logger)
    }

    /// Only accepted friendships are kept: an invitation may go to a friend only.
    func setFriendship(_ first: UUID, _ second: UUID, accepted: Bool, at time: Date) async throws {
        guard first != second else { return }
        if accepted {
            try await connection.query(
                """
                INSERT INTO friendships (user_low, user_high, since)
                VALUES (LEAST(\(first), \(second)), GREATEST(\(first), \(second)), \(time))
                ON CONFLICT (user_low, user_high) DO NOTHING
                """, logger: logger)
        } else {
            try await connection.query(
                "DELETE FROM friendships WHERE user_low = LEAST(\(first), \(second)) AND user_high = GREATEST(\(first), \(second))",
                logger: logger)
        }
    }

    func upsertGroup(_ event: GroupChanged) async throws {
        try await connection.query(
            """
            INSERT INTO groups (group_id, name, kind, time_zone, owner_id)
            VALUES (\(event.groupID), \(event.name), \(event.kind.rawValue), \(event.timeZone), \(event.ownerID))
            ON CONFLICT (group_id) DO UPDATE SET name = EXCLUDED.name, kind = EXCLUDED.kind, time_zone = EXCLUDED.time_zone,
                owner_id = EXCLUDED.owner_id, updated_at = now()
            """, logger: logger)
    }

    func applyMembership(_ event: GroupMembershipChanged) async throws {
        switch event.change {
        case .joined, .roleChanged:
            try await connection.query(
                """
                INSERT INTO group_members (group_id, user_id, role, joined_at)
                VALUES (\(event.groupID), \(event.userID), \(event.role.rawValue), \(event.changedAt))
                ON CONFLICT (group_id, user_id) DO UPDATE SET role = EXCLUDED.role
                """, logger: logger)
        case .left, .removed:
            try await connection.query(
                "DELETE FROM group_members WHERE group_id = \(event.groupID) AND user_id = \(event.userID)", logger: logger)
            // An invitation sent to the whole group was for its members: it would otherwise keep a group-only
            // challenge visible to someone who left.
            try await connection.query(
                "DELETE FROM invitations WHERE invitee_id = \(event.userID) AND group_id = \(event.groupID)", logger: logger)
        }
    }

    /// The current members of a group; nil if the group has none we know of.
    func members(of groupID: UUID?) async throws -> Set<UUID>? {
        guard let groupID else { return nil }
        var members = Set<UUID>()
        let rows = try await connection.query("SELECT user_id FROM group_members WHERE group_id = \(groupID)", logger: logger)
        for id in try await rows.collect().map({ try $0.decode(UUID.self) }) { members.insert(id) }
        return members.isEmpty ? nil : members
    }

    func isMember(_ userID: UUID, of groupID: UUID) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT 1 FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger)
        for _ in try await rows.collect().map({ try $0.decode(Int.self) }) { return true }
        return false
    }

    /// Which of `others` are accepted friends of `userID`.
    func friends(of userID: UUID, among others: [UUID]) async throws -> Set<UUID> {
        guard !others.isEmpty else { return [] }
        var friends = Set<UUID>()
        let rows = try await connection.query(
            """
            SELECT CASE WHEN user_low = \(userID) THEN user_high ELSE user_low END FROM friendships
            WHERE (user_low = \(userID) AND user_high = ANY(\(others))) OR (user_high = \(userID) AND user_low = ANY(\(others)))
            """, logger: logger)
        for id in try await rows.collect().map({ try $0.decode(UUID.self) }) { friends.insert(id) }
        return friends
    }

    func userTimeZone(_ userID: UUID?) async throws -> TimeZone? {
        guard let userID else { return nil }
        let rows = try await connection.query("SELECT time_zone FROM users WHERE user_id = \(userID)", logger: logger)
        for name in try await rows.collect().map({ try $0.decode(String.self) }) { return IANATimeZone.zone(named: name) }
        return nil
    }

    func groupTimeZone(_ groupID: UUID?) async throws -> TimeZone? {
        guard let groupID else { return nil }
        let rows = try await connection.query("SELECT time_zone FROM groups WHERE group_id = \(groupID)", logger: logger)
        for name in try await rows.collect().map({ try $0.decode(String.self) }) { return IANATimeZone.zone(named: name) }
        return nil
    }
}
