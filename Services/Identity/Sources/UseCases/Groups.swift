import Foundation
import IdentityDomain
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// Groups, their members and invites. Groups are private: for someone who is not a member, a group does not exist
/// (404). Every membership change locks the group row first, so changes to one group happen one at a time.
struct Groups: Sendable {
    let storage: IdentityStorage
    let clock: ServiceClock
    let inviteLink: @Sendable (String) -> String

    func create(_ creation: GroupCreation, owner ownerID: UUID, trace: TraceContext) async throws -> GroupSummary {
        let now = clock.now()
        let summary = GroupSummary(
            id: UUID(), name: creation.name, kind: creation.kind, timeZone: creation.timeZone, ownerID: ownerID, myRole: .owner, memberCount: 1,
            createdAt: now)
        try await storage.transaction { stores in
            guard let owner = try await stores.accounts.account(ownerID) else { throw IdentityError.accountGone }
            try await stores.groups.insert(summary.group, at: now)
            try await stores.groups.insertMember(ownerID, of: summary.id, role: .owner, at: now)
            try await stores.events.append(Self.changed(summary.group, created: true, at: now), at: now, trace: trace)
            try await stores.events.append(
                GroupMembershipChanged(groupID: summary.id, userID: ownerID, displayName: owner.displayName, role: .owner, change: .joined, changedAt: now),
                at: now, trace: trace)
        }
        return summary
    }

    /// The groups the user belongs to, in the order they joined them.
    func groups(of userID: UUID, page: PageRequest<SequencePosition>) async throws -> Page<GroupSummary> {
        try await storage.read { stores in try await stores.groups.summaries(of: userID, page: page) }
    }

    /// The group, if the user is a member.
    func group(_ groupID: UUID, for userID: UUID) async throws -> GroupSummary? {
        try await storage.read { stores in try await stores.groups.summary(groupID, for: userID) }
    }

    func update(_ groupID: UUID, _ update: GroupUpdate, by userID: UUID, trace: TraceContext) async throws -> GroupSummary {
        let now = clock.now()
        return try await storage.transaction { stores in
            try await stores.groups.lock(groupID)
            guard let before = try await stores.groups.summary(groupID, for: userID) else { throw IdentityError.notFound(.group) }
            guard before.myRole == .owner else { throw IdentityError.ownerOnly }
            let after = update.applied(to: before.group)
            guard after != before.group else { return before }
            try await stores.groups.rename(after, at: now)
            try await stores.events.append(Self.changed(after, created: false, at: now), at: now, trace: trace)
            var summary = before
            summary.name = after.name
            summary.timeZone = after.timeZone
            return summary
        }
    }

    /// Members in joining order; 404 unless the caller is one.
    func members(of groupID: UUID, for userID: UUID, page: PageRequest<SequencePosition>) async throws -> Page<GroupMember> {
        try await storage.read { stores in
            guard try await stores.groups.isMember(userID, of: groupID) else { throw IdentityError.notFound(.group) }
            return try await stores.groups.members(of: groupID, page: page)
        }
    }

    // MARK: Invites

    /// Any member may invite.
    func createInvite(_ groupID: UUID, by userID: UUID, expiresInHours: Int?) async throws -> GroupInvite {
        let now = clock.now()
        let expiresAt = try InvitePolicy.expiry(hours: expiresInHours, now: now)
        return try await storage.transaction { stores in
            // Held until commit, so the group cannot be deleted between the membership check and the insert.
            try await stores.groups.keep(groupID)
            guard try await stores.groups.isMember(userID, of: groupID) else { throw IdentityError.notFound(.group) }
            // A collision among 30^10 codes is unlikely; should one happen, try another code.
            for _ in 0..<5 {
                let code = InviteCode.generate()
                if try await stores.groups.insertInvite(code, to: groupID, by: userID, at: now, expiresAt: expiresAt) {
                    return GroupInvite(code: code, link: inviteLink(code), groupID: groupID, createdBy: userID, createdAt: now, expiresAt: expiresAt)
                }
            }
            throw IdentityError.inviteCodeUnavailable
        }
    }

    /// The group's usable invites (not expired, not revoked), oldest first.
    func invites(of groupID: UUID, for userID: UUID, page: PageRequest<SequencePosition>) async throws -> Page<GroupInvite> {
        let now = clock.now()
        return try await storage.read { stores in
            guard try await stores.groups.isMember(userID, of: groupID) else { throw IdentityError.notFound(.group) }
            return try await stores.groups.usableInvites(of: groupID, at: now, page: page, link: inviteLink)
        }
    }

    /// The invite's creator or the group's owner may revoke it.
    func revokeInvite(_ code: String, of groupID: UUID, by userID: UUID) async throws {
        try await storage.transaction { stores in
            guard let me = try await stores.groups.summary(groupID, for: userID) else { throw IdentityError.notFound(.group) }
            guard let invite = try await stores.groups.lockedInvite(code, of: groupID) else { throw IdentityError.notFound(.invite) }
            guard invite.createdBy == userID || me.myRole == .owner else { throw IdentityError.notInviteRevoker }
            try await stores.groups.revokeInvite(code, at: clock.now())
        }
    }

    /// Joins with an invite code. Joining a group one already belongs to changes nothing.
    func join(code: String, userID: UUID, trace: TraceContext) async throws -> GroupSummary {
        let now = clock.now()
        return try await storage.transaction { stores in
            guard let invite = try await stores.groups.invite(code) else { throw IdentityError.notFound(.inviteCode) }
            switch InvitePolicy.state(expiresAt: invite.expiresAt, revokedAt: invite.revokedAt, now: now) {
            case .revoked: throw IdentityError.notFound(.inviteCode)
            case .expired: throw IdentityError.inviteExpired
            case .usable: break
            }
            let groupID = invite.groupID
            try await stores.groups.lock(groupID)
            if let existing = try await stores.groups.summary(groupID, for: userID) { return existing }
            guard let account = try await stores.accounts.account(userID) else { throw IdentityError.accountGone }
            try await stores.groups.insertMember(userID, of: groupID, role: .member, at: now)
            try await stores.events.append(
                GroupMembershipChanged(groupID: groupID, userID: userID, displayName: account.displayName, role: .member, change: .joined, changedAt: now),
                at: now, trace: trace)
            guard let summary = try await stores.groups.summary(groupID, for: userID) else { throw IdentityError.notFound(.group) }
            return summary
        }
    }

    // MARK: Leaving

    func leave(_ groupID: UUID, userID: UUID, trace: TraceContext) async throws {
        let now = clock.now()
        try await storage.transaction { stores in
            try await stores.groups.lock(groupID)
            guard try await stores.groups.isMember(userID, of: groupID) else { throw IdentityError.notFound(.group) }
            try await Self.depart(userID, from: groupID, change: .left, at: now, trace: trace, in: stores)
        }
    }

    /// The owner removes a member.
    func remove(_ memberID: UUID, from groupID: UUID, by userID: UUID, trace: TraceContext) async throws {
        let now = clock.now()
        try await storage.transaction { stores in
            try await stores.groups.lock(groupID)
            guard let me = try await stores.groups.summary(groupID, for: userID) else { throw IdentityError.notFound(.group) }
            guard me.myRole == .owner else { throw IdentityError.ownerOnly }
            guard memberID != userID else { throw IdentityError.cannotRemoveSelf }
            guard try await stores.groups.isMember(memberID, of: groupID) else { throw IdentityError.notFound(.member) }
            try await Self.depart(memberID, from: groupID, change: .removed, at: now, trace: trace, in: stores)
        }
    }

    /// Takes a member out of a group, inside the caller's transaction, and applies the departure rule: ownership
    /// passes to the longest-standing remaining member when the owner goes, and the group is deleted when its last
    /// member goes.
    static func depart(
        _ userID: UUID, from groupID: UUID, change: MembershipChange, at now: Date, trace: TraceContext, in stores: IdentityStores
    ) async throws {
        try await stores.groups.lock(groupID)
        let rows = try await stores.groups.memberships(in: groupID)
        let members = rows.map(\.membership)
        let names = Dictionary(rows.map { ($0.membership.userID, $0.name) }, uniquingKeysWith: { first, _ in first })
        guard let leaving = members.first(where: { $0.userID == userID }) else { return }
        let departure = Departure.of(userID, from: members)
        try await stores.groups.deleteMember(userID, of: groupID)
        try await stores.events.append(
            GroupMembershipChanged(groupID: groupID, userID: userID, displayName: names[userID] ?? "", role: leaving.role, change: change, changedAt: now),
            at: now, trace: trace)
        switch departure {
        case .memberLeaves:
            break
        case .ownershipPasses(let successorID):
            let group = try await stores.groups.setOwner(successorID, of: groupID, at: now)
            try await stores.events.append(
                GroupMembershipChanged(
                    groupID: groupID, userID: successorID, displayName: names[successorID] ?? "", role: .owner, change: .roleChanged, changedAt: now),
                at: now, trace: trace)
            if let group {
                try await stores.events.append(
                    GroupChanged(
                        groupID: groupID, name: group.name, kind: group.kind, timeZone: group.timeZone, ownerID: successorID, created: false,
                        changedAt: now),
                    at: now, trace: trace)
            }
        case .groupDeleted:
            try await stores.groups.delete(groupID)
        }
    }

    private static func changed(_ group: Group, created: Bool, at now: Date) -> GroupChanged {
        GroupChanged(
            groupID: group.id, name: group.name, kind: group.kind, timeZone: group.timeZone, ownerID: group.ownerID, created: created, changedAt: now)
    }
}
