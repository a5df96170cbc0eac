import Foundation
import HTTPTypes
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// `GroupsController` through identity's router: groups, their members and invites.
@Suite("Identity: group routes (PostgreSQL)", .tags(.integration), .kind(.integration), .serialized)
struct GroupsRouterTests {
    static let household = #"{"name":"Home","kind":"household","timeZone":"Europe/Rome"}"#

    @Test("the owner creates (201), renames and invites; a member joins by code, is listed, removed, joins again and leaves; an invite is revoked")
    func groups() async throws {
        try await withIdentityFixture { store in
            let (ann, bob) = (try await store.guest("Ann"), try await store.guest("Bob"))
            try await store.withRouter { client in
                let created = try await client.call(.post, "/v1/groups", as: ann.id, json: Self.household)
                #expect(created.status == .created, "\(created.text)")
                let group = try created.decode(GroupSummary.self)
                #expect(group.kind == .household && group.myRole == .owner && group.memberCount == 1 && group.ownerID == ann.id)
                let path = "/v1/groups/\(group.id.key)"
                #expect(try await client.call(.get, "/v1/groups", as: ann.id).decode(Page<GroupSummary>.self).items.map(\.id) == [group.id])
                let renamed = try await client.call(.patch, path, as: ann.id, json: #"{"name":"Casa"}"#)
                #expect(renamed.status == .ok)
                #expect(try renamed.decode(GroupSummary.self).name == "Casa")

                let invited = try await client.call(.post, "\(path)/invites", as: ann.id)
                #expect(invited.status == .created)
                let invite = try invited.decode(GroupInvite.self)
                #expect(invite.link == "https://join.example/\(invite.code)" && invite.groupID == group.id)
                #expect(try await client.call(.get, "\(path)/invites", as: ann.id).decode(Page<GroupInvite>.self).items.map(\.code) == [invite.code])

                let joined = try await client.call(.post, "/v1/groups/join", as: bob.id, json: #"{"code":"\#(invite.code)"}"#)
                #expect(joined.status == .ok, "\(joined.text)")
                let membership = try joined.decode(GroupSummary.self)
                #expect(membership.id == group.id && membership.myRole == .member && membership.memberCount == 2)
                let members = try await client.call(.get, "\(path)/members", as: bob.id)
                #expect(try members.decode(Page<GroupMember>.self).items.map(\.user.id) == [ann.id, bob.id])
                #expect(try await client.call(.delete, "\(path)/members/\(bob.id.key)", as: ann.id).status == .noContent)
                #expect(try await client.call(.get, path, as: bob.id).status == .notFound, "a removed member no longer sees the group")
                _ = try await client.call(.post, "/v1/groups/join", as: bob.id, json: #"{"code":"\#(invite.code)"}"#)
                #expect(try await client.call(.post, "\(path)/leave", as: bob.id).status == .noContent)
                #expect(try await client.call(.get, "/v1/groups", as: bob.id).decode(Page<GroupSummary>.self).items.isEmpty)

                #expect(try await client.call(.delete, "\(path)/invites/\(invite.code)", as: ann.id).status == .noContent)
                #expect(try await client.call(.get, "\(path)/invites", as: ann.id).decode(Page<GroupInvite>.self).items.isEmpty)
            }
        }
    }

    @Test("no caller is 401; broken fields 422 by name; a group one is not in, a bad id or code 404; a member editing 403; the owner removing themselves 409")
    func refusals() async throws {
        try await withIdentityFixture { store in
            let (ann, bob, eve) = (try await store.guest("Ann"), try await store.guest("Bob"), try await store.guest("Eve"))
            try await store.withRouter { client in
                let anonymous = try await client.call(.post, "/v1/groups", json: Self.household)
                #expect(anonymous.status == .unauthorized && anonymous.problem == "unauthorized")
                let broken = try await client.call(.post, "/v1/groups", as: ann.id, json: #"{"name":" ","kind":"household","timeZone":"Mars/Base"}"#)
                #expect(broken.status == .unprocessableContent && broken.fields == ["name", "timeZone"], "\(broken.text)")

                let group = try await client.call(.post, "/v1/groups", as: ann.id, json: Self.household).decode(GroupSummary.self)
                let path = "/v1/groups/\(group.id.key)"
                let expiry = try await client.call(.post, "\(path)/invites", as: ann.id, json: #"{"expiresInHours":0}"#)
                #expect(expiry.status == .unprocessableContent && expiry.fields == ["expiresInHours"])
                let invite = try await client.call(.post, "\(path)/invites", as: ann.id).decode(GroupInvite.self)
                _ = try await client.call(.post, "/v1/groups/join", as: bob.id, json: #"{"code":"\#(invite.code)"}"#)

                for (method, target) in [(HTTPRequest.Method.get, path), (.get, "\(path)/members"), (.post, "\(path)/invites"), (.post, "\(path)/leave"),
                                         (.get, "/v1/groups/not-an-id")] {
                    let hidden = try await client.call(method, target, as: eve.id)
                    #expect(hidden.status == .notFound && hidden.problem == "not-found", "\(method) \(target)")
                }
                let badCode = try await client.call(.post, "/v1/groups/join", as: eve.id, json: #"{"code":"NOPE-NOPE"}"#)
                #expect(badCode.status == .notFound && badCode.problem == "not-found")
                let notOwner = try await client.call(.patch, path, as: bob.id, json: #"{"name":"Mine"}"#)
                #expect(notOwner.status == .forbidden && notOwner.problem == "owner-only")
                let ownerLeavingSelf = try await client.call(.delete, "\(path)/members/\(ann.id.key)", as: ann.id)
                #expect(ownerLeavingSelf.status == .conflict && ownerLeavingSelf.problem == "cannot-remove-self")
            }
        }
    }
}
