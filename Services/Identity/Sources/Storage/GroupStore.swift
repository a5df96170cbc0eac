import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// Groups, their members and invites, over one connection.
struct GroupStore {
    let connection: PostgresConnection
    let logger: Logger

    // MARK: Groups

    func insert(_ group: Group, at now: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO groups (id, name, kind, time_zone, owner_id, created_at, updated_at)
            VALUES (\(group.id), \(group.name), \(group.kind.rawValue), \(group.timeZone), \(group.ownerID), \(now), \(now))
            """, logger: logger)
    }

    /// Holds the group's row until the transaction ends: membership changes to one group happen one at a time.
    func lock(_ groupID: UUID) async throws {
        try await connection.execute("SELECT 1 FROM groups WHERE id = \(groupID) FOR UPDATE", logger: logger)
    }

    /// Keeps the group from being deleted until the transaction ends.
    func keep(_ groupID: UUID) async throws {
        try await connection.execute("SELECT 1 FROM groups WHERE id = \(groupID) FOR KEY SHARE", logger: logger)
    }

    func rename(_ group: Group, at now: Date) async throws {
        try await connection.execute(
            "UPDATE groups SET name = \(group.name), time_zone = \(group.timeZone), updated_at = \(now) WHERE id = \(group.id)", logger: logger)
    }

    /// Makes `ownerID` the group's owner; returns the group's name, kind and zone.
    func setOwner(_ ownerID: UUID, of groupID: UUID, at now: Date) async throws -> (name: String, kind: GroupKind, timeZone: String)? {
        try await connection.execute(
            "UPDATE group_members SET role = 'owner' WHERE group_id = \(groupID) AND user_id = \(ownerID)", logger: logger)
        let rows = try await connection.query(
            "UPDATE groups SET owner_id = \(ownerID), updated_at = \(now) WHERE id = \(groupID) RETURNING name, kind, time_zone", logger: logger
        ).collect()
        guard let (name, kind, timeZone) = try rows.first?.decode((String, String, String).self) else { return nil }
        return (name, GroupKind(rawValue: kind) ?? .friends, timeZone)
    }

    func delete(_ groupID: UUID) async throws {
        try await connection.execute("DELETE FROM groups WHERE id = \(groupID)", logger: logger)
    }

    /// The group as the user sees it, if the user is a member.
    func summary(_ groupID: UUID, for userID: UUID) async throws -> GroupSummary? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: Self.summaryColumns), m.seq
            FROM group_members m JOIN groups g ON g.id = m.group_id
            WHERE m.group_id = \(groupID) AND m.user_id = \(userID)
            """, logger: logger
        ).collect()
        return try rows.first.map { try Self.decodeSummary($0).0 }
    }

    /// The groups the user belongs to, in the order they joined them.
    func summaries(of userID: UUID, page: PageRequest<SequencePosition>) async throws -> Page<GroupSummary> {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: Self.summaryColumns), m.seq
            FROM group_members m JOIN groups g ON g.id = m.group_id
            WHERE m.user_id = \(userID) AND (\(page.after?.seq)::bigint IS NULL OR m.seq > \(page.after?.seq))
            ORDER BY m.seq
            LIMIT \(page.limit + 1)
            """, logger: logger
        ).collect()
        var positions: [UUID: Int64] = [:]
        let groups = try rows.map { row in
            let (summary, seq) = try Self.decodeSummary(row)
            positions[summary.id] = seq
            return summary
        }
        return page.page(groups) { SequencePosition(seq: positions[$0.id] ?? 0) }
    }

    /// Every group of the user and when they joined it, in joining order, for an export.
    func memberships(of userID: UUID) async throws -> [IdentityExport.Membership] {
        try await connection.query(
            """
            SELECT \(unescaped: Self.summaryColumns), m.seq, m.joined_at
            FROM group_members m JOIN groups g ON g.id = m.group_id
            WHERE m.user_id = \(userID) ORDER BY m.seq
            """, logger: logger
        ).collect().map { row in
            let (id, name, kind, timeZone, ownerID, role, count, createdAt, _, joinedAt) = try row.decode(
                (UUID, String, String, String, UUID, String, Int, Date, Int64, Date).self)
            let summary = GroupSummary(
                id: id, name: name, kind: GroupKind(rawValue: kind) ?? .friends, timeZone: timeZone, ownerID: ownerID,
                myRole: GroupRole(rawValue: role) ?? .member, memberCount: count, createdAt: createdAt)
            return IdentityExport.Membership(group: summary, joinedAt: joinedAt)
        }
    }

    // MARK: Members

    func isMember(_ userID: UUID, of groupID: UUID) async throws -> Bool {
        try await connection.count("SELECT 1 FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger) > 0
    }

    func insertMember(_ userID: UUID, of groupID: UUID, role: GroupRole, at now: Date) async throws {
        try await connection.execute(
            "INSERT INTO group_members (group_id, user_id, role, joined_at) VALUES (\(groupID), \(userID), \(role.rawValue), \(now))",
            logger: logger)
    }

    func deleteMember(_ userID: UUID, of groupID: UUID) async throws {
        try await connection.execute("DELETE FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger)
    }

    /// The group's members with their display names, for the departure rule.
    func memberships(in groupID: UUID) async throws -> [(membership: Membership, name: String)] {
        try await connection.query(
            "SELECT m.user_id, m.role, m.seq, u.display_name FROM group_members m JOIN users u ON u.id = m.user_id WHERE m.group_id = \(groupID)",
            logger: logger
        ).collect().map { row in
            let (memberID, role, seq, name) = try row.decode((UUID, String, Int64, String).self)
            return (Membership(userID: memberID, role: GroupRole(rawValue: role) ?? .member, sequence: seq), name)
        }
    }

    /// The groups the user belongs to, by id.
    func groupIDs(of userID: UUID) async throws -> [UUID] {
        try await connection.query("SELECT group_id FROM group_members WHERE user_id = \(userID) ORDER BY group_id", logger: logger)
            .collect().map { try $0.decode(UUID.self) }
    }

    /// Members in joining order.
    func members(of groupID: UUID, page: PageRequest<SequencePosition>) async throws -> Page<GroupMember> {
        let rows = try await connection.query(
            """
            SELECT u.id, u.display_name, u.avatar_url, m.role, m.joined_at, m.seq
            FROM group_members m JOIN users u ON u.id = m.user_id
            WHERE m.group_id = \(groupID) AND (\(page.after?.seq)::bigint IS NULL OR m.seq > \(page.after?.seq))
            ORDER BY m.seq
            LIMIT \(page.limit + 1)
            """, logger: logger
        ).collect()
        var positions: [UUID: Int64] = [:]
        let members = try rows.map { row in
            let (id, name, avatar, role, joinedAt, seq) = try row.decode((UUID, String, String?, String, Date, Int64).self)
            positions[id] = seq
            return GroupMember(user: PublicProfile(id: id, displayName: name, avatarURL: avatar), role: GroupRole(rawValue: role) ?? .member, joinedAt: joinedAt)
        }
        return page.page(members) { SequencePosition(seq: positions[$0.user.id] ?? 0) }
    }

    // MARK: Invites

    /// Adds an invite; false when its code is taken.
    func insertInvite(_ code: String, to groupID: UUID, by userID: UUID, at now: Date, expiresAt: Date) async throws -> Bool {
        try await connection.count(
            """
            INSERT INTO group_invites (code, group_id, created_by, created_at, expires_at)
            VALUES (\(code), \(groupID), \(userID), \(now), \(expiresAt))
            ON CONFLICT (code) DO NOTHING RETURNING code
            """, logger: logger) == 1
    }

    /// The group's invites neither expired nor revoked, oldest first.
    func usableInvites(
        of groupID: UUID, at now: Date, page: PageRequest<SequencePosition>, link: (String) -> String
    ) async throws -> Page<GroupInvite> {
        let rows = try await connection.query(
            """
            SELECT code, created_by, created_at, expires_at, seq FROM group_invites
            WHERE group_id = \(groupID) AND revoked_at IS NULL AND expires_at > \(now)
              AND (\(page.after?.seq)::bigint IS NULL OR seq > \(page.after?.seq))
            ORDER BY seq
            LIMIT \(page.limit + 1)
            """, logger: logger
        ).collect()
        var positions: [String: Int64] = [:]
        let invites = try rows.map { row in
            let (code, createdBy, createdAt, expiresAt, seq) = try row.decode((String, UUID?, Date, Date, Int64).self)
            positions[code] = seq
            return GroupInvite(code: code, link: link(code), groupID: groupID, createdBy: createdBy, createdAt: createdAt, expiresAt: expiresAt)
        }
        return page.page(invites) { SequencePosition(seq: positions[$0.code] ?? 0) }
    }

    struct Invite {
        /// Nil once that account is gone.
        var createdBy: UUID?
    }

    /// An unrevoked invite of the group, locked until the transaction ends.
    func lockedInvite(_ code: String, of groupID: UUID) async throws -> Invite? {
        let rows = try await connection.query(
            "SELECT created_by FROM group_invites WHERE code = \(code) AND group_id = \(groupID) AND revoked_at IS NULL FOR UPDATE", logger: logger
        ).collect()
        return try rows.first.map { Invite(createdBy: try $0.decode(UUID?.self)) }
    }

    func revokeInvite(_ code: String, at now: Date) async throws {
        try await connection.execute("UPDATE group_invites SET revoked_at = \(now) WHERE code = \(code)", logger: logger)
    }

    /// The invite's group and state.
    func invite(_ code: String) async throws -> (groupID: UUID, expiresAt: Date, revokedAt: Date?)? {
        try await connection.query("SELECT group_id, expires_at, revoked_at FROM group_invites WHERE code = \(code)", logger: logger)
            .collect().first?.decode((UUID, Date, Date?).self)
    }

    // MARK: Rows

    private static let summaryColumns = """
        g.id, g.name, g.kind, g.time_zone, g.owner_id, m.role, (SELECT count(*) FROM group_members c WHERE c.group_id = g.id), g.created_at
        """

    private static func decodeSummary(_ row: PostgresRow) throws -> (GroupSummary, Int64) {
        let (id, name, kind, timeZone, ownerID, role, count, createdAt, seq) = try row.decode(
            (UUID, String, String, String, UUID, String, Int, Date, Int64).self)
        return (
            GroupSummary(
                id: id, name: name, kind: GroupKind(rawValue: kind) ?? .friends, timeZone: timeZone, ownerID: ownerID,
                myRole: GroupRole(rawValue: role) ?? .member, memberCount: count, createdAt: createdAt),
            seq
        )
    }
}
