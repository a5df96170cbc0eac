import Foundation
import Hummingbird
import IdentityDomain
import SurgeContracts
import SurgeRuntime

/// Groups and households (002, 004): private to their members; everything about a group answers 404 to anyone else.
struct GroupsController {
    let groups: Groups

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(IdentityAPI.createGroup, use: create)
        router.add(IdentityAPI.listGroups, use: list)
        router.add(IdentityAPI.getGroup, use: get)
        router.add(IdentityAPI.updateGroup, use: update)
        router.add(IdentityAPI.listMembers, use: members)
        router.add(IdentityAPI.createInvite, use: createInvite)
        router.add(IdentityAPI.listInvites, use: invites)
        router.add(IdentityAPI.revokeInvite, use: revokeInvite)
        router.add(IdentityAPI.joinGroup, use: join)
        router.add(IdentityAPI.leaveGroup, use: leave)
        router.add(IdentityAPI.removeMember, use: removeMember)
    }

    @Sendable func create(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<GroupSummary> {
        let caller = try context.caller()
        let body = try await request.decode(as: GroupCreationRequest.self, context: context)
        let creation = try GroupCreation(name: body.name, kind: body.kind, timeZone: body.timeZone)
        return EditedResponse(status: .created, response: try await groups.create(creation, owner: caller, trace: context.trace))
    }

    @Sendable func list(request: Request, context: SurgeRequestContext) async throws -> Page<GroupSummary> {
        try await groups.groups(of: try context.caller(), page: try PageRequest(request))
    }

    @Sendable func get(request: Request, context: SurgeRequestContext) async throws -> GroupSummary {
        let caller = try context.caller()
        guard let group = try await groups.group(try groupID(request, context), for: caller) else { throw IdentityError.notFound(.group) }
        return group
    }

    @Sendable func update(request: Request, context: SurgeRequestContext) async throws -> GroupSummary {
        let caller = try context.caller()
        let id = try groupID(request, context)
        let body = try await request.decode(as: GroupUpdateRequest.self, context: context)
        let update = try GroupUpdate(name: body.name, timeZone: body.timeZone)
        return try await groups.update(id, update, by: caller, trace: context.trace)
    }

    @Sendable func members(request: Request, context: SurgeRequestContext) async throws -> Page<GroupMember> {
        let caller = try context.caller()
        return try await groups.members(of: try groupID(request, context), for: caller, page: try PageRequest(request))
    }

    /// The body may be empty (defaults apply) or `{"expiresInHours": n}`.
    @Sendable func createInvite(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<GroupInvite> {
        let caller = try context.caller()
        let id = try groupID(request, context)
        let body = try await request.decodeOptionalBody(InviteCreationRequest.self, context: context) ?? InviteCreationRequest()
        return EditedResponse(status: .created, response: try await groups.createInvite(id, by: caller, expiresInHours: body.expiresInHours))
    }

    @Sendable func invites(request: Request, context: SurgeRequestContext) async throws -> Page<GroupInvite> {
        let caller = try context.caller()
        return try await groups.invites(of: try groupID(request, context), for: caller, page: try PageRequest(request))
    }

    @Sendable func revokeInvite(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        let id = try groupID(request, context)
        guard let code = context.parameters.get("code").flatMap(InviteCode.normalise) else { throw IdentityError.notFound(.invite) }
        try await groups.revokeInvite(code, of: id, by: caller)
        return .noContent
    }

    @Sendable func join(request: Request, context: SurgeRequestContext) async throws -> GroupSummary {
        let caller = try context.caller()
        let body = try await request.decode(as: JoinGroupRequest.self, context: context)
        guard let code = InviteCode.normalise(body.code) else { throw IdentityError.notFound(.inviteCode) }
        return try await groups.join(code: code, userID: caller, trace: context.trace)
    }

    @Sendable func leave(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        try await groups.leave(try groupID(request, context), userID: caller, trace: context.trace)
        return .noContent
    }

    @Sendable func removeMember(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        let id = try groupID(request, context)
        guard let memberID = context.parameters.get("userID").flatMap(UUID.init(uuidString:)) else { throw IdentityError.notFound(.member) }
        try await groups.remove(memberID, from: id, by: caller, trace: context.trace)
        return .noContent
    }

    private func groupID(_ request: Request, _ context: SurgeRequestContext) throws -> UUID {
        guard let text = context.parameters.get("groupID"), let id = UUID(uuidString: text) else { throw IdentityError.notFound(.group) }
        return id
    }
}
