import Foundation
import Hummingbird
import IdentityDomain
import SurgeContracts
import SurgeRuntime

/// Friend requests and friendships (002).
struct FriendsController {
    let friends: Friendships

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(IdentityAPI.listFriends, use: listFriends)
        router.add(IdentityAPI.removeFriend, use: removeFriend)
        router.add(IdentityAPI.listFriendRequests, use: listRequests)
        router.add(IdentityAPI.sendFriendRequest, use: sendRequest)
        router.add(IdentityAPI.acceptFriendRequest, use: accept)
        router.add(IdentityAPI.declineFriendRequest, use: decline)
        router.add(IdentityAPI.cancelFriendRequest, use: cancel)
    }

    @Sendable func listFriends(request: Request, context: SurgeRequestContext) async throws -> Page<Friend> {
        try await friends.friends(of: try context.caller(), page: try PageRequest(request))
    }

    @Sendable func removeFriend(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        try await friends.remove(friend: try request.uuidParameter("userID", context: context), of: caller, trace: context.trace)
        return .noContent
    }

    @Sendable func listRequests(request: Request, context: SurgeRequestContext) async throws -> Page<FriendRequest> {
        let caller = try context.caller()
        let text = request.uri.queryParameters["direction"].map(String.init) ?? FriendRequestDirection.incoming.rawValue
        guard let direction = FriendRequestDirection(rawValue: text) else {
            throw Problem.validation(field: "direction", "must be incoming or outgoing")
        }
        return try await friends.requests(of: caller, direction: direction, page: try PageRequest(request))
    }

    @Sendable func sendRequest(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<FriendRequest> {
        let caller = try context.caller()
        let body = try await request.decode(as: FriendRequestCreation.self, context: context)
        return EditedResponse(status: .created, response: try await friends.send(from: caller, to: body.userID, trace: context.trace))
    }

    @Sendable func accept(request: Request, context: SurgeRequestContext) async throws -> Friend {
        let caller = try context.caller()
        return try await friends.accept(try requestID(request, context), by: caller, trace: context.trace)
    }

    @Sendable func decline(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        try await friends.close(try requestID(request, context), by: caller, as: .declined, trace: context.trace)
        return .noContent
    }

    @Sendable func cancel(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        try await friends.close(try requestID(request, context), by: caller, as: .cancelled, trace: context.trace)
        return .noContent
    }

    private func requestID(_ request: Request, _ context: SurgeRequestContext) throws -> UUID {
        guard let text = context.parameters.get("requestID"), let id = UUID(uuidString: text) else { throw IdentityError.notFound(.friendRequest) }
        return id
    }
}
