import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// Groups, their members and invites. Groups are private: for someone who is not a member, a group does not exist
/// (404). Every membership change locks the group row first, so changes to one group happen one at a time.
struct GroupStore: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger
    let clock: ServiceClock
    let inviteLink: @Sendable (String) -> String


    func create(_ creation: GroupCreation, owner ownerID: UUID, trace: TraceContext) async throws -> GroupSummary {
        let now = clock.now()
        let summary = GroupSummary(
            id: UUID(), name: creation.name, kind: creation.kind, timeZone: creation.timeZone, ownerID: ownerID, myRole: .owner, memberCount: 1,
            createdAt: now)
        try await client.transaction(logger: logger) { connection in
            guard let owner = try await AccountRows.account(ownerID, on: connection, logger: logger) else { throw IdentityError.accountGone }
            try await connection.execute(
                """
                INSERT INTO groups (id, name, kind, time_zone, owner_id, created_at, updated_at)
                VALUES (\(summary.id), \(summary.name), \(summary.kind.rawValue), \(summary.timeZone), \(ownerID), \(now), \(now))
                """, logger: logger)
            try await connection.execute(
                "INSERT INTO group_members (group_id, user_id, role, joined_at) VALUES (\(summary.id), \(ownerID), 'owner', \(now))", logger: logger)
            try await outbox.append(changed(summary.group, created: true, at: now), on: connection, at: now, trace: trace, logger: logger)
            try await outbox.append(
                GroupMembershipChanged(groupID: summary.id, userID: ownerID, displayName: owner.displayName, role: .owner, change: .joined, changedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
        }
        return summary
    }

    /// The groups the user belongs to, in the order they joined them.
    func groups(of userID: UUID, page: PageRequest<SequencePosition>) async throws -> Page<GroupSummary> {
        let rows = try await client.run(
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

    /// The group, if the user is a member.
    func group(_ groupID: UUID, for userID: UUID) async throws -> GroupSummary? {
        try await Self.summary(groupID, for: userID, on: client, logger: logger)
    }

    func update(_ groupID: UUID, _ update: GroupUpdate, by userID: UUID, trace: TraceContext) async throws -> GroupSummary {
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            try await Self.lock(groupID, on: connection, logger: logger)
            guard let before = try await Self.summary(groupID, for: userID, on: connection, logger: logger) else { throw IdentityError.notFound(.group) }
            guard before.myRole == .owner else { throw IdentityError.ownerOnly }
            let after = update.applied(to: before.group)
            guard after != before.group else { return before }
            try await connection.execute(
                "UPDATE groups SET name = \(after.name), time_zone = \(after.timeZone), updated_at = \(now) WHERE id = \(groupID)", logger: logger)
            try await outbox.append(changed(after, created: false, at: now), on: connection, at: now, trace: trace, logger: logger)
            var summary = before
            summary.name = after.name
            summary.timeZone = after.timeZone
            return summary
        }
    }

    /// Members in joining order; 404 unless the caller is one.
    func members(of groupID: UUID, for userID: UUID, page: PageRequest<SequencePosition>) async throws -> Page<GroupMember> {
        guard try await isMember(userID, of: groupID, on: client) else { throw IdentityError.notFound(.group) }
        let rows = try await client.run(
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

    /// Any member may invite.
    func createInvite(_ groupID: UUID, by userID: UUID, expiresInHours: Int?) async throws -> GroupInvite {
        let now = clock.now()
        let expiresAt = try InvitePolicy.expiry(hours: expiresInHours, now: now)
        return try await client.transaction(logger: logger) { connection in
            // Held until commit, so the group cannot be deleted between the membership check and the insert.
            try await connection.execute("SELECT 1 FROM groups WHERE id = \(groupID) FOR KEY SHARE", logger: logger)
            guard try await isMember(userID, of: groupID, on: connection) else { throw IdentityError.notFound(.group) }
            // A collision among 30^10 codes is unlikely; should one happen, try another code.
            for _ in 0..<5 {
                let code = InviteCode.generate()
                let inserted = try await connection.count(
                    """
                    INSERT INTO group_invites (code, group_id, created_by, created_at, expires_at)
                    VALUES (\(code), \(groupID), \(userID), \(now), \(expiresAt))
                    ON CONFLICT (code) DO NOTHING RETURNING code
                    """, logger: logger)
                if inserted == 1 {
                    return GroupInvite(code: code, link: inviteLink(code), groupID: groupID, createdBy: userID, createdAt: now, expiresAt: expiresAt)
                }
            }
            throw IdentityError.inviteCodeUnavailable
        }
    }

    /// The group's usable invites (not expired, not revoked), oldest first.
    func invites(of groupID: UUID, for userID: UUID, page: PageRequest<SequencePosition>) async throws -> Page<GroupInvite> {
        guard try await isMember(userID, of: groupID, on: client) else { throw IdentityError.notFound(.group) }
        let rows = try await client.run(
            """
            SELECT code, created_by, created_at, expires_at, seq FROM group_invites
            WHERE group_id = \(groupID) AND revoked_at IS NULL AND expires_at > \(clock.now())
              AND (\(page.after?.seq)::bigint IS NULL OR seq > \(page.after?.seq))
            ORDER BY seq
            LIMIT \(page.limit + 1)
            """, logger: logger
        ).collect()
        var positions: [String: Int64] = [:]
        let invites = try rows.map { row in
            let (code, createdBy, createdAt, expiresAt, seq) = try row.decode((String, UUID?, Date, Date, Int64).self)
            positions[code] = seq
            return GroupInvite(code: code, link: inviteLink(code), groupID: groupID, createdBy: createdBy, createdAt: createdAt, expiresAt: expiresAt)
        }
        return page.page(invites) { SequencePosition(seq: positions[$0.code] ?? 0) }
    }

    /// The invite's creator or the group's owner may revoke it.
    func revokeInvite(_ code: String, of groupID: UUID, by userID: UUID) async throws {
        try await client.transaction(logger: logger) { connection in
            guard let me = try await Self.summary(groupID, for: userID, on: connection, logger: logger) else { throw IdentityError.notFound(.group) }
            let rows = try await connection.run(
                "SELECT created_by FROM group_invites WHERE code = \(code) AND group_id = \(groupID) AND revoked_at IS NULL FOR UPDATE",
                logger: logger
            ).collect()
            guard let row = rows.first else { throw IdentityError.notFound(.invite) }
            let createdBy = try row.decode(UUID?.self)
            guard createdBy == userID || me.myRole == .owner else {
                throw IdentityError.notInviteRevoker
            }
            try await connection.execute("UPDATE group_invites SET revoked_at = \(clock.now()) WHERE code = \(code)", logger: logger)
        }
    }

    /// Joins with an invite code. Joining a group one already belongs to changes nothing.
    func join(code: String, userID: UUID, trace: TraceContext) async throws -> GroupSummary {
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            let rows = try await connection.run(
                "SELECT group_id, expires_at, revoked_at FROM group_invites WHERE code = \(code)", logger: logger
            ).collect()
            guard let row = rows.first else { throw IdentityError.notFound(.inviteCode) }
            let (groupID, expiresAt, revokedAt) = try row.decode((UUID, Date, Date?).self)
            switch InvitePolicy.state(expiresAt: expiresAt, revokedAt: revokedAt, now: now) {
            case .revoked: throw IdentityError.notFound(.inviteCode)
            case .expired:
                throw IdentityError.inviteExpired
            case .usable: break
            }
            try await Self.lock(groupID, on: connection, logger: logger)
            if let existing = try await Self.summary(groupID, for: userID, on: connection, logger: logger) { return existing }
            guard let account = try await AccountRows.account(userID, on: connection, logger: logger) else { throw IdentityError.accountGone }
            try await connection.execute(
                "INSERT INTO group_members (group_id, user_id, role, joined_at) VALUES (\(groupID), \(userID), 'member', \(now))", logger: logger)
            try await outbox.append(
                GroupMembershipChanged(groupID: groupID, userID: userID, displayName: account.displayName, role: .member, change: .joined, changedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
            guard let summary = try await Self.summary(groupID, for: userID, on: connection, logger: logger) else { throw IdentityError.notFound(.group) }
            return summary
        }
    }


    // MARK: Leaving

    func leave(_ groupID: UUID, userID: UUID, trace: TraceContext) async throws {
        let now = clock.now()
        try await client.transaction(logger: logger) { connection in
            try await Self.lock(groupID, on: connection, logger: logger)
            guard try await isMember(userID, of: groupID, on: connection) else { throw IdentityError.notFound(.group) }
            try await Self.depart(userID, from: groupID, change: .left, outbox: outbox, on: connection, now: now, trace: trace, logger: logger)
        }
    }

    /// The owner removes a member.
    func remove(_ memberID: UUID, from groupID: UUID, by userID: UUID, trace: TraceContext) async throws {
        let now = clock.now()
        try await client.transaction(logger: logger) { connection in
            try await Self.lock(groupID, on: connection, logger: logger)
            guard let me = try await Self.summary(groupID, for: userID, on: connection, logger: logger) else { throw IdentityError.notFound(.group) }
            guard me.myRole == .owner else { throw IdentityError.ownerOnly }
            guard memberID != userID else {
                throw IdentityError.cannotRemoveSelf
            }
            guard try await isMember(memberID, of: groupID, on: connection) else { throw IdentityError.notFound(.member) }
            try await Self.depart(memberID, from: groupID, change: .removed, outbox: outbox, on: connection, now: now, trace: trace, logger: logger)
        }
    }

    /// Takes a member out of a (locked) group and applies the departure rule: ownership passes to the
    /// longest-standing remaining member when the owner goes, and the group is deleted when its last member goes.
    static func depart(
        _ userID: UUID, from groupID: UUID, change: MembershipChange, outbox: Outbox, on connection: PostgresConnection, now: Date,
        trace: TraceContext, logger: Logger
    ) async throws {
        try await lock(groupID, on: connection, logger: logger)
        let rows = try await connection.run(
            "SELECT m.user_id, m.role, m.seq, u.display_name FROM group_members m JOIN users u ON u.id = m.user_id WHERE m.group_id = \(groupID)",
            logger: logger
        ).collect()
        var members: [Membership] = []
        var names: [UUID: String] = [:]
        for row in rows {
            let (memberID, role, seq, name) = try row.decode((UUID, String, Int64, String).self)
            members.append(Membership(userID: memberID, role: GroupRole(rawValue: role) ?? .member, sequence: seq))
            names[memberID] = name
        }
        guard let leaving = members.first(where: { $0.userID == userID }) else { return }
        let departure = Departure.of(userID, from: members)
        try await connection.execute("DELETE FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger)
        try await outbox.append(
            GroupMembershipChanged(groupID: groupID, userID: userID, displayName: names[userID] ?? "", role: leaving.role, change: change, changedAt: now),
            on: connection, at: now, trace: trace, logger: logger)
        switch departure {
        case .memberLeaves:
            break
        case .ownershipPasses(let successorID):
            try await connection.execute(
                "UPDATE group_members SET role = 'owner' WHERE group_id = \(groupID) AND user_id = \(successorID)", logger: logger)
            let groupRows = try await connection.run(
                "UPDATE groups SET owner_id = \(successorID), updated_at = \(now) WHERE id = \(groupID) RETURNING name, kind, time_zone",
                logger: logger
            ).collect()
            try await outbox.append(
                GroupMembershipChanged(
                    groupID: groupID, userID: successorID, displayName: names[successorID] ?? "", role: .owner, change: .roleChanged, changedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
            if let row = groupRows.first {
                let (name, kind, timeZone) = try row.decode((String, String, String).self)
                try await outbox.append(
                    GroupChanged(
                        groupID: groupID, name: name, kind: GroupKind(rawValue: kind) ?? .friends, timeZone: timeZone, ownerID: successorID,
                        created: false, changedAt: now),
                    on: connection, at: now, trace: trace, logger: logger)
            }
        case .groupDeleted:
            try await connection.execute("DELETE FROM groups WHERE id = \(groupID)", logger: logger)
        }
    }

    // MARK: Helpers

    static let summaryColumns = """
        g.id, g.name, g.kind, g.time_zone, g.owner_id, m.role, (SELECT count(*) FROM group_members c WHERE c.group_id = g.id), g.created_at
        """

    static func decodeSummary(_ row: PostgresRow) throws -> (GroupSummary, Int64) {
        let (id, name, kind, timeZone, ownerID, role, count, createdAt, seq) = try row.decode(
            (UUID, String, String, String, UUID, String, Int, Date, Int64).self)
        return (
            GroupSummary(
                id: id, name: name, kind: GroupKind(rawValue: kind) ?? .friends, timeZone: timeZone, ownerID: ownerID,
                myRole: GroupRole(rawValue: role) ?? .member, memberCount: count, createdAt: createdAt),
            seq
        )
    }

    static func summary(_ groupID: UUID, for userID: UUID, on runner: some QueryRunner, logger: Logger) async throws -> GroupSummary? {
        let rows = try await runner.run(
            """
            SELECT \(unescaped: summaryColumns), m.seq
            FROM group_members m JOIN groups g ON g.id = m.group_id
            WHERE m.group_id = \(groupID) AND m.user_id = \(userID)
            """, logger: logger
        ).collect()
        return try rows.first.map { try decodeSummary($0).0 }
    }

    private func isMember(_ userID: UUID, of groupID: UUID, on runner: some QueryRunner) async throws -> Bool {
        try await runner.count("SELECT 1 FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger) > 0
    }

    static func lock(_ groupID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.execute("SELECT 1 FROM groups WHERE id = \(groupID) FOR UPDATE", logger: logger)
    }

    private func changed(_ group: Group, created: Bool, at now: Date) -> GroupChanged {
        GroupChanged(
            groupID: group.id, name: group.name, kind: group.kind, timeZone: group.timeZone, ownerID: group.ownerID, created: created, changedAt: now)
    }
}
