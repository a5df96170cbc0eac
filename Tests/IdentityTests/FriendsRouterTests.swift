import Foundation
import HTTPTypes
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// `FriendsController` through identity's router: friend requests and friendships.
@Suite("Identity: friend routes (PostgreSQL)", .tags(.integration), .kind(.integration), .serialized)
struct FriendsRouterTests {
    @Test("a request is sent (201), seen by both sides, accepted into a friendship and ended; another is declined, a third cancelled")
    func friendships() async throws {
        try await withIdentityFixture { store in
            let (ann, bob, eve) = (try await store.guest("Ann"), try await store.guest("Bob"), try await store.guest("Eve"))
            try await store.withRouter { client in
                let sent = try await client.call(.post, "/v1/friend-requests", as: ann.id, json: #"{"userID":"\#(bob.id.key)"}"#)
                #expect(sent.status == .created, "\(sent.text)")
                let request = try sent.decode(FriendRequest.self)
                #expect(request.requester.id == ann.id && request.addressee.id == bob.id)
                let incoming = try await client.call(.get, "/v1/friend-requests", as: bob.id)
                #expect(try incoming.decode(Page<FriendRequest>.self).items.map(\.id) == [request.id])
                let outgoing = try await client.call(.get, "/v1/friend-requests?direction=outgoing", as: ann.id)
                #expect(try outgoing.decode(Page<FriendRequest>.self).items.map(\.id) == [request.id])
                #expect(try await client.call(.get, "/v1/friend-requests", as: ann.id).decode(Page<FriendRequest>.self).items.isEmpty)

                let accepted = try await client.call(.post, "/v1/friend-requests/\(request.id.key)/accept", as: bob.id)
                #expect(accepted.status == .ok)
                #expect(try accepted.decode(Friend.self).user.id == ann.id)
                let friends = try await client.call(.get, "/v1/friends", as: ann.id)
                #expect(try friends.decode(Page<Friend>.self).items.map(\.user.id) == [bob.id])
                #expect(try await client.call(.delete, "/v1/friends/\(bob.id.key)", as: ann.id).status == .noContent)
                #expect(try await client.call(.get, "/v1/friends", as: bob.id).decode(Page<Friend>.self).items.isEmpty)

                let toEve = try await client.call(.post, "/v1/friend-requests", as: ann.id, json: #"{"userID":"\#(eve.id.key)"}"#).decode(FriendRequest.self)
                #expect(try await client.call(.post, "/v1/friend-requests/\(toEve.id.key)/decline", as: eve.id).status == .noContent)
                let again = try await client.call(.post, "/v1/friend-requests", as: ann.id, json: #"{"userID":"\#(eve.id.key)"}"#).decode(FriendRequest.self)
                #expect(try await client.call(.delete, "/v1/friend-requests/\(again.id.key)", as: ann.id).status == .noContent)
                #expect(try await client.call(.get, "/v1/friend-requests", as: eve.id).decode(Page<FriendRequest>.self).items.isEmpty)
            }
        }
    }

    @Test("no caller is 401; oneself or a bad direction 422 by name; an unknown user, someone else's request or a stranger 404; a second request or friendship 409")
    func refusals() async throws {
        try await withIdentityFixture { store in
            let (ann, bob, eve) = (try await store.guest("Ann"), try await store.guest("Bob"), try await store.guest("Eve"))
            try await store.withRouter { client in
                let anonymous = try await client.call(.get, "/v1/friends")
                #expect(anonymous.status == .unauthorized && anonymous.problem == "unauthorized")
                let oneself = try await client.call(.post, "/v1/friend-requests", as: ann.id, json: #"{"userID":"\#(ann.id.key)"}"#)
                #expect(oneself.status == .unprocessableContent && oneself.fields == ["userID"])
                let noUser = try await client.call(.post, "/v1/friend-requests", as: ann.id, json: "{}")
                #expect(noUser.status == .unprocessableContent && noUser.fields == ["userID"])
                let direction = try await client.call(.get, "/v1/friend-requests?direction=sideways", as: ann.id)
                #expect(direction.status == .unprocessableContent && direction.fields == ["direction"])
                let unknown = try await client.call(.post, "/v1/friend-requests", as: ann.id, json: #"{"userID":"\#(UUID().key)"}"#)
                #expect(unknown.status == .notFound && unknown.problem == "not-found")

                let request = try await client.call(.post, "/v1/friend-requests", as: ann.id, json: #"{"userID":"\#(bob.id.key)"}"#).decode(FriendRequest.self)
                let twice = try await client.call(.post, "/v1/friend-requests", as: bob.id, json: #"{"userID":"\#(ann.id.key)"}"#)
                #expect(twice.status == .conflict && twice.problem == "friend-request-exists")
                for (who, path) in [(ann.id, "/v1/friend-requests/\(request.id.key)/accept"), (eve.id, "/v1/friend-requests/\(request.id.key)/decline"),
                                    (bob.id, "/v1/friend-requests/not-an-id/accept")] {
                    let refused = try await client.call(.post, path, as: who)
                    #expect(refused.status == .notFound && refused.problem == "not-found", "\(path)")
                }
                let cancelledByAddressee = try await client.call(.delete, "/v1/friend-requests/\(request.id.key)", as: bob.id)
                #expect(cancelledByAddressee.status == .notFound)
                let notFriends = try await client.call(.delete, "/v1/friends/\(eve.id.key)", as: ann.id)
                #expect(notFriends.status == .notFound)

                _ = try await client.call(.post, "/v1/friend-requests/\(request.id.key)/accept", as: bob.id)
                let friendsAlready = try await client.call(.post, "/v1/friend-requests", as: bob.id, json: #"{"userID":"\#(ann.id.key)"}"#)
                #expect(friendsAlready.status == .conflict && friendsAlready.problem == "already-friends")
            }
        }
    }

    @Test("a cursor whose position holds a NUL is an unknown cursor (400), for friends and the user search alike, never a 500")
    func cursorWithNUL() async throws {
        try await withIdentityFixture { store in
            let (ann, bob) = (try await store.guest("Ann"), try await store.guest("Anna"))
            try await store.withRouter { client in
                let forged = Base64URL.encode(Data(#"{"name":"a\u0000b","id":"\#(bob.id.key)"}"#.utf8))
                for path in ["/v1/friends?cursor=\(forged)", "/v1/users?q=a&cursor=\(forged)"] {
                    let answer = try await client.call(.get, path, as: ann.id)
                    #expect(answer.status == .badRequest && answer.problem == "unknown-cursor", "\(path): \(answer.text)")
                }
            }
        }
    }
}
