import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// Friend requests and friendships, over one connection.
struct FriendStore {
    let connection: PostgresConnection
    let logger: Logger

    func areFriends(_ userID: UUID, _ otherID: UUID) async throws -> Bool {
        try await connection.count("SELECT 1 FROM friendships WHERE user_id = \(userID) AND friend_id = \(otherID)", logger: logger) > 0
    }

    func insertRequest(_ request: FriendRequest) async throws {
        try await connection.execute(
            """
            INSERT INTO friend_requests (id, requester_id, addressee_id, created_at)
            VALUES (\(request.id), \(request.requester.id), \(request.addressee.id), \(request.createdAt))
            """, logger: logger)
    }

    /// A pending request's two sides, locked until the transaction ends.
    func lockedRequest(_ requestID: UUID) async throws -> (requester: UUID, addressee: UUID)? {
        try await connection.query(
            "SELECT requester_id, addressee_id FROM friend_requests WHERE id = \(requestID) FOR UPDATE", logger: logger
        ).collect().first?.decode((UUID, UUID).self)
    }

    func deleteRequest(_ requestID: UUID) async throws {
        try await connection.execute("DELETE FROM friend_requests WHERE id = \(requestID)", logger: logger)
    }

    /// The friendship, both ways.
    func befriend(_ requesterID: UUID, _ addresseeID: UUID, at now: Date) async throws {
        try await connection.execute(
            """
            INSERT INTO friendships (user_id, friend_id, requester_id, since) VALUES
                (\(requesterID), \(addresseeID), \(requesterID), \(now)), (\(addresseeID), \(requesterID), \(requesterID), \(now))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// Ends a friendship both ways; returns who asked for it, or nil when there was none.
    func unfriend(_ userID: UUID, _ friendID: UUID) async throws -> UUID? {
        try await connection.query(
            """
            DELETE FROM friendships WHERE (user_id = \(userID) AND friend_id = \(friendID)) OR (user_id = \(friendID) AND friend_id = \(userID))
            RETURNING requester_id
            """, logger: logger
        ).collect().first?.decode(UUID.self)
    }

    /// Ends every friendship of the user, both ways; returns each friend and who asked for the friendship.
    func unfriendEveryone(of userID: UUID) async throws -> [(friendID: UUID, requesterID: UUID)] {
        let friendships = try await connection.query(
            "DELETE FROM friendships WHERE user_id = \(userID) RETURNING friend_id, requester_id", logger: logger
        ).collect().map { try $0.decode((UUID, UUID).self) }
        try await connection.execute("DELETE FROM friendships WHERE friend_id = \(userID)", logger: logger)
        return friendships.map { (friendID: $0.0, requesterID: $0.1) }
    }

    /// Deletes every request to or from the user; returns their sides.
    func deleteRequests(of userID: UUID) async throws -> [(requesterID: UUID, addresseeID: UUID)] {
        try await connection.query(
            """
            DELETE FROM friend_requests WHERE requester_id = \(userID) OR addressee_id = \(userID)
            RETURNING requester_id, addressee_id
            """, logger: logger
        ).collect().map { try $0.decode((UUID, UUID).self) }.map { (requesterID: $0.0, addresseeID: $0.1) }
    }

    /// The user's friends, by display name. The cursor keeps PostgreSQL's `lower()` of the name, the sort key itself.
    func friends(of userID: UUID, page: PageRequest<NamePosition>) async throws -> Page<Friend> {
        let rows = try await connection.query(
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

    /// Pending requests to or from the user, oldest first.
    func requests(of userID: UUID, direction: FriendRequestDirection, page: PageRequest<SequencePosition>) async throws -> Page<FriendRequest> {
        let mine = direction == .incoming ? "r.addressee_id" : "r.requester_id"
        let rows = try await connection.query(
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

    /// Every friend of the user, by when the friendship began, for an export.
    func allFriends(of userID: UUID) async throws -> [Friend] {
        try await connection.query(
            """
            SELECT u.id, u.display_name, u.avatar_url, f.since FROM friendships f JOIN users u ON u.id = f.friend_id
            WHERE f.user_id = \(userID) ORDER BY f.since, u.id
            """, logger: logger
        ).collect().map { row in
            let (id, name, avatar, since) = try row.decode((UUID, String, String?, Date).self)
            return Friend(user: PublicProfile(id: id, displayName: name, avatarURL: avatar), since: since)
        }
    }

    /// Every pending request to or from the user, oldest first, for an export.
    func allRequests(of userID: UUID) async throws -> [FriendRequest] {
        try await connection.query(
            """
            SELECT r.id, r.created_at, q.id, q.display_name, q.avatar_url, a.id, a.display_name, a.avatar_url
            FROM friend_requests r JOIN users q ON q.id = r.requester_id JOIN users a ON a.id = r.addressee_id
            WHERE r.requester_id = \(userID) OR r.addressee_id = \(userID) ORDER BY r.seq
            """, logger: logger
        ).collect().map { row in
            let (id, createdAt, requesterID, requesterName, requesterAvatar, addresseeID, addresseeName, addresseeAvatar) = try row.decode(
                (UUID, Date, UUID, String, String?, UUID, String, String?).self)
            return FriendRequest(
                id: id, requester: PublicProfile(id: requesterID, displayName: requesterName, avatarURL: requesterAvatar),
                addressee: PublicProfile(id: addresseeID, displayName: addresseeName, avatarURL: addresseeAvatar), createdAt: createdAt)
        }
    }
}
