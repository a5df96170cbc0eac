import Foundation
import IdentityDomain
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// Friend requests and friendships; every change publishes `FriendshipChanged`. A request someone may not act on is
/// answered as not found.
struct Friendships: Sendable {
    let storage: IdentityStorage
    let clock: ServiceClock

    func send(from requesterID: UUID, to addresseeID: UUID, trace: TraceContext) async throws -> FriendRequest {
        guard requesterID != addresseeID else { throw IdentityError.invalidField("userID", "must be someone else") }
        let now = clock.now()
        do {
            return try await storage.transaction { stores in
                guard let requester = try await stores.accounts.account(requesterID) else { throw IdentityError.accountGone }
                guard let addressee = try await stores.accounts.account(addresseeID) else { throw IdentityError.notFound(.user) }
                guard try await !stores.friends.areFriends(requesterID, addresseeID) else { throw IdentityError.alreadyFriends }
                let request = FriendRequest(id: UUID(), requester: requester.publicProfile, addressee: addressee.publicProfile, createdAt: now)
                try await stores.friends.insertRequest(request)
                try await stores.events.append(
                    FriendshipChanged(requesterID: requesterID, addresseeID: addresseeID, status: .requested, actorID: requesterID, changedAt: now),
                    at: now, trace: trace)
                return request
            }
        } catch where error.isUniqueViolation {
            throw IdentityError.friendRequestExists
        }
    }

    /// The addressee accepts: the request becomes a friendship.
    func accept(_ requestID: UUID, by userID: UUID, trace: TraceContext) async throws -> Friend {
        let now = clock.now()
        return try await storage.transaction { stores in
            guard let request = try await stores.friends.lockedRequest(requestID), request.addressee == userID else {
                throw IdentityError.notFound(.friendRequest)
            }
            let (requesterID, addresseeID) = request
            try await stores.friends.deleteRequest(requestID)
            try await stores.friends.befriend(requesterID, addresseeID, at: now)
            try await stores.events.append(
                FriendshipChanged(requesterID: requesterID, addresseeID: addresseeID, status: .accepted, actorID: userID, changedAt: now),
                at: now, trace: trace)
            guard let requester = try await stores.accounts.account(requesterID) else { throw IdentityError.notFound(.friendRequest) }
            return Friend(user: requester.publicProfile, since: now)
        }
    }

    /// The addressee declines, or the requester cancels.
    func close(_ requestID: UUID, by userID: UUID, as status: FriendshipStatus, trace: TraceContext) async throws {
        let now = clock.now()
        try await storage.transaction { stores in
            guard let request = try await stores.friends.lockedRequest(requestID),
                status == .declined ? request.addressee == userID : request.requester == userID
            else { throw IdentityError.notFound(.friendRequest) }
            let (requesterID, addresseeID) = request
            try await stores.friends.deleteRequest(requestID)
            try await stores.events.append(
                FriendshipChanged(requesterID: requesterID, addresseeID: addresseeID, status: status, actorID: userID, changedAt: now),
                at: now, trace: trace)
        }
    }

    func remove(friend friendID: UUID, of userID: UUID, trace: TraceContext) async throws {
        let now = clock.now()
        try await storage.transaction { stores in
            guard let requesterID = try await stores.friends.unfriend(userID, friendID) else { throw IdentityError.notFound(.friend) }
            let addresseeID = requesterID == userID ? friendID : userID
            try await stores.events.append(
                FriendshipChanged(requesterID: requesterID, addresseeID: addresseeID, status: .removed, actorID: userID, changedAt: now),
                at: now, trace: trace)
        }
    }

    func friends(of userID: UUID, page: PageRequest<NamePosition>) async throws -> Page<Friend> {
        try await storage.read { stores in try await stores.friends.friends(of: userID, page: page) }
    }

    func requests(of userID: UUID, direction: FriendRequestDirection, page: PageRequest<SequencePosition>) async throws -> Page<FriendRequest> {
        try await storage.read { stores in try await stores.friends.requests(of: userID, direction: direction, page: page) }
    }

    /// Ends every friendship and pending request of a user whose account is being deleted, inside the caller's
    /// transaction: friendships are removed, requests they sent are cancelled, requests they received are declined.
    static func endEverything(of userID: UUID, at now: Date, trace: TraceContext, in stores: IdentityStores) async throws {
        for (friendID, requesterID) in try await stores.friends.unfriendEveryone(of: userID) {
            let addresseeID = requesterID == userID ? friendID : userID
            try await stores.events.append(
                FriendshipChanged(requesterID: requesterID, addresseeID: addresseeID, status: .removed, actorID: userID, changedAt: now),
                at: now, trace: trace)
        }
        for (requesterID, addresseeID) in try await stores.friends.deleteRequests(of: userID) {
            try await stores.events.append(
                FriendshipChanged(
                    requesterID: requesterID, addresseeID: addresseeID, status: requesterID == userID ? .cancelled : .declined,
                    actorID: userID, changedAt: now),
                at: now, trace: trace)
        }
    }
}
