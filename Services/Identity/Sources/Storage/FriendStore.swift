import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// Friend requests and friendships. A request someone may not act on is answered as not found.
struct FriendStore: Sendable {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger
    let clock: ServiceClock


    func send(from requesterID: UUID, to addresseeID: UUID, trace: TraceContext) async throws -> FriendRequest {
        guard requesterID != addresseeID else { throw IdentityError.invalidField("userID", "must be someone else") }
        let now = clock.now()
        do {
            return try await client.transaction(logger: logger) { connection in
                guard let requester = try await AccountRows.account(requesterID, on: connection, logger: logger) else {
                    throw IdentityError.accountGone
                }
                guard let addressee = try await AccountRows.account(addresseeID, on: connection, logger: logger) else {
                    throw IdentityError.notFound(.user)
                }
                let friends = try await connection.count(
                    "SELECT 1 FROM friendships WHERE user_id = \(requesterID) AND friend_id = \(addresseeID)", logger: logger)
                guard friends == 0 else { throw IdentityError.alreadyFriends }
                let request = FriendRequest(id: UUID(), requester: requester.publicProfile, addressee: addressee.publicProfile, createdAt: now)
                try await connection.execute(
                    """
                    INSERT INTO friend_requests (id, requester_id, addressee_id, created_at)
                    VALUES (\(request.id), \(requesterID), \(addresseeID), \(now))
                    """, logger: logger)
                try await outbox.append(
                    FriendshipChanged(requesterID: requesterID, addresseeID: addresseeID, status: .requested, actorID: requesterID, changedAt: now),
                    on: connection, at: now, trace: trace, logger: logger)
                return request
            }
        } catch where error.isUniqueViolation {
            throw IdentityError.friendRequestExists
        }
    }

    /// The addressee accepts: the request becomes a friendship.
    func accept(_ requestID: UUID, by userID: UUID, trace: TraceContext) async throws -> Friend {
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            let (requesterID, addresseeID) = try await pending(requestID, on: connection)
            guard addresseeID == userID else { throw IdentityError.notFound(.friendRequest) }
            try await connection.execute("DELETE FROM friend_requests WHERE id = \(requestID)", logger: logger)
            try await connection.execute(
                """
                INSERT INTO friendships (user_id, friend_id, requester_id, since) VALUES
                    (\(requesterID), \(addresseeID), \(requesterID), \(now)), (\(addresseeID), \(requesterID), \(requesterID), \(now))
                ON CONFLICT DO NOTHING
                """, logger: logger)
            try await outbox.append(
                FriendshipChanged(requesterID: requesterID, addresseeID: addresseeID, status: .accepted, actorID: userID, changedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
            guard let requester = try await AccountRows.account(requesterID, on: connection, logger: logger) else { throw IdentityError.notFound(.friendRequest) }
            return Friend(user: requester.publicProfile, since: now)
        }
    }

    /// The addressee declines, or the requester cancels.
    func close(_ requestID: UUID, by userID: UUID, as status: FriendshipStatus, trace: TraceContext) async throws {
        let now = clock.now()
        try await client.transaction(logger: logger) { connection in
            let (requesterID, addresseeID) = try await pending(requestID, on: connection)
            let allowed = status == .declined ? addresseeID == userID : requesterID == userID
            guard allowed else { throw IdentityError.notFound(.friendRequest) }
            try await connection.execute("DELETE FROM friend_requests WHERE id = \(requestID)", logger: logger)
            try await outbox.append(
                FriendshipChanged(requesterID: requesterID, addresseeID: addresseeID, status: status, actorID: userID, changedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
        }
    }

    func remove(friend friendID: UUID, of userID: UUID, trace: TraceContext) async throws {
        let now = clock.now()
        try await client.transaction(logger: logger) { connection in
            let rows = try await connection.run(
                """
                DELETE FROM friendships WHERE (user_id = \(userID) AND friend_id = \(friendID)) OR (user_id = \(friendID) AND friend_id = \(userID))
                RETURNING requester_id
                """, logger: logger
            ).collect()
            guard let requesterID = try rows.first?.decode(UUID.self) else { throw IdentityError.notFound(.friend) }
            let addresseeID = requesterID == userID ? friendID : userID
            try await outbox.append(
                FriendshipChanged(requesterID: requesterID, addresseeID: addresseeID, status: .removed, actorID: userID, changedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
        }
    }

    /// The caller's friends, by display name. The cursor keeps PostgreSQL's `lower()` of the name, the sort key itself.
    func friends(of userID: UUID, page: PageRequest<NamePosition>) async throws -> Page<Friend> {
        let rows = try await client.run(
            """
            SELECT u.id, u.display_name, u.avatar_url, f.since, lower(u.display_name) FROM friendships f JOIN users u ON u.id = f.friend_id
            WHERE f.user_id = \(userID)
              AND (\(page.after?.name)::text IS NULL OR (lower(u.display_name), u.id) > (\(page.after?.name), \(page.after?.id)))
            ORDER BY lower(u.display_name), u.id
            LIMIT \(page.limit + 1)
            """, logger: logger
        ).collect()
        var positions: [UUID: String] = [:]
        let friends = try rows.map { row in
            let (id, name, avatar, since, sortName) = try row.decode((UUID, String, String?, Date, String).self)
            positions[id] = sortName
            return Friend(user: PublicProfile(id: id, displayName: name, avatarURL: avatar), since: since)
        }
        return page.page(friends) { NamePosition(name: positions[$0.user.id] ?? "", id: $0.user.id) }
    }

    /// Pending requests to or from the caller, oldest first.
    func requests(of userID: UUID, direction: FriendRequestDirection, page: PageRequest<SequencePosition>) async throws -> Page<FriendRequest> {
        let mine = direction == .incoming ? "r.addressee_id" : "r.requester_id"
        let rows = try await client.run(
            """
            SELECT r.id, r.seq, r.created_at, q.id, q.display_name, q.avatar_url, a.id, a.display_name, a.avatar_url
            FROM friend_requests r JOIN users q ON q.id = r.requester_id JOIN users a ON a.id = r.addressee_id
            WHERE \(unescaped: mine) = \(userID) AND (\(page.after?.seq)::bigint IS NULL OR r.seq > \(page.after?.seq))
            ORDER BY r.seq
            LIMIT \(page.limit + 1)
            """, logger: logger
        ).collect()
        var positions: [UUID: Int64] = [:]
        let requests = try rows.map { row in
            let (id, seq, createdAt, requesterID, requesterName, requesterAvatar, addresseeID, addresseeName, addresseeAvatar) = try row.decode(
                (UUID, Int64, Date, UUID, String, String?, UUID, String, String?).self)
            positions[id] = seq
            return FriendRequest(
                id: id, requester: PublicProfile(id: requesterID, displayName: requesterName, avatarURL: requesterAvatar),
                addressee: PublicProfile(id: addresseeID, displayName: addresseeName, avatarURL: addresseeAvatar), createdAt: createdAt)
        }
        return page.page(requests) { SequencePosition(seq: positions[$0.id] ?? 0) }
    }

    private func pending(_ requestID: UUID, on connection: PostgresConnection) async throws -> (requester: UUID, addressee: UUID) {
        let rows = try await connection.run(
            "SELECT requester_id, addressee_id FROM friend_requests WHERE id = \(requestID) FOR UPDATE", logger: logger
        ).collect()
        guard let row = rows.first else { throw IdentityError.notFound(.friendRequest) }
        return try row.decode((UUID, UUID).self)
    }

    /// Ends every friendship and pending request of a user whose account is being deleted: friendships are removed,
    /// requests they sent are cancelled, requests they received are declined.
    static func endEverything(
        of userID: UUID, outbox: Outbox, on connection: PostgresConnection, now: Date, trace: TraceContext, logger: Logger
    ) async throws {
        let friendships = try await connection.run(
            "DELETE FROM friendships WHERE user_id = \(userID) RETURNING friend_id, requester_id", logger: logger
        ).collect().map { try $0.decode((UUID, UUID).self) }
        try await connection.execute("DELETE FROM friendships WHERE friend_id = \(userID)", logger: logger)
        for (friendID, requesterID) in friendships {
            let addresseeID = requesterID == userID ? friendID : userID
            try await outbox.append(
                FriendshipChanged(requesterID: requesterID, addresseeID: addresseeID, status: .removed, actorID: userID, changedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
        }
        let requests = try await connection.run(
            """
            DELETE FROM friend_requests WHERE requester_id = \(userID) OR addressee_id = \(userID)
            RETURNING requester_id, addressee_id
            """, logger: logger
        ).collect().map { try $0.decode((UUID, UUID).self) }
        for (requesterID, addresseeID) in requests {
            try await outbox.append(
                FriendshipChanged(
                    requesterID: requesterID, addresseeID: addresseeID, status: requesterID == userID ? .cancelled : .declined,
                    actorID: userID, changedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
        }
    }
}
