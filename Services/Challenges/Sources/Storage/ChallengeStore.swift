import ChallengesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres

/// Opens a `ChallengeStore` for one unit of work.
struct ChallengeStorage {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    /// `body` in one transaction: what it changes and the events it publishes commit together, or not at all.
    func transaction<Result: Sendable>(_ body: (ChallengeStore) async throws -> Result) async throws -> Result {
        try await client.transaction(logger: logger) { connection in
            try await body(ChallengeStore(connection: connection, outbox: outbox, logger: logger))
        }
    }

    /// `body` on one connection, for reads.
    func reading<Result: Sendable>(_ body: (ChallengeStore) async throws -> Result) async throws -> Result {
        try await client.withConnection { connection in
            try await body(ChallengeStore(connection: connection, outbox: outbox, logger: logger))
        }
    }
}

/// Definitions, their versions, likes and invitations, what challenges knows of identity (users' zones, friendships,
/// groups and members), and the outbox, as one unit of work sees them. The use cases decide; this reads and writes.
struct ChallengeStore {
    let connection: PostgresConnection
    let outbox: Outbox
    let logger: Logger

    // MARK: Definitions and versions

    /// The challenge and the caller's relation to it; `locking` holds its row until the transaction ends.
    func challenge(_ challengeID: UUID, as caller: UUID, locking: Bool) async throws -> ChallengeRecord? {
        let lock = locking ? "FOR UPDATE OF c" : ""
        let rows = try await connection.query(
            """
            SELECT c.challenge_id, c.kind, c.visibility, c.owner_id, c.group_id, c.latest_version, c.name, c.likes_count,
                   c.created_at, c.updated_at,
                   EXISTS (SELECT 1 FROM invitations i WHERE i.challenge_id = c.challenge_id AND i.invitee_id = \(caller)),
                   (c.group_id IS NOT NULL AND EXISTS (SELECT 1 FROM group_members m WHERE m.group_id = c.group_id AND m.user_id = \(caller))),
                   EXISTS (SELECT 1 FROM likes l WHERE l.challenge_id = c.challenge_id AND l.user_id = \(caller))
            FROM challenges c WHERE c.challenge_id = \(challengeID) \(unescaped: lock)
            """, logger: logger)
        let decoded = try await rows.collect().map {
            try $0.decode((UUID, String, String, UUID?, UUID?, Int, String, Int, Date, Date, Bool, Bool, Bool).self)
        }
        for (id, kind, visibility, owner, group, latest, name, likes, created, updated, invited, member, liked) in decoded {
            guard let kind = ChallengeKind(rawValue: kind), let visibility = Visibility(rawValue: visibility) else { return nil }
            return ChallengeRecord(
                challengeID: id, kind: kind, visibility: visibility, ownerID: owner, groupID: group, latestVersion: latest, name: name,
                likes: likes, createdAt: created, updatedAt: updated, isOwner: owner == caller, isInvited: invited,
                isGroupMember: member, likedByMe: liked)
        }
        return nil
    }

    func version(_ number: Int, of challengeID: UUID) async throws -> ChallengeVersion? {
        let rows = try await connection.query(
            "SELECT definition::text FROM challenge_versions WHERE challenge_id = \(challengeID) AND version = \(number)", logger: logger)
        for text in try await rows.collect().map({ try $0.decode(String.self) }) { return try StoredJSON.version(text) }
        return nil
    }

    func history(of challengeID: UUID) async throws -> [VersionSummary] {
        let rows = try await connection.query(
            "SELECT version, effective_from::text, created_at FROM challenge_versions WHERE challenge_id = \(challengeID) ORDER BY version",
            logger: logger)
        return try await rows.collect().map { row in
            let (version, effective, created) = try row.decode((Int, String?, Date).self)
            return VersionSummary(version: version, effectiveFrom: effective.flatMap(LocalDate.init), createdAt: created)
        }
    }

    /// A new challenge with `first` as its version 1. `contentVersion` is a curated definition's.
    func insert(_ first: ChallengeVersion, contentVersion: Int?, createdBy: UUID?, at time: Date) async throws {
        try await connection.query(
            """
            INSERT INTO challenges (challenge_id, kind, visibility, owner_id, group_id, latest_version, name, description, category,
                                    difficulty, duration_days, content_version, created_at, updated_at)
            VALUES (\(first.challengeID), \(first.kind.rawValue), \(first.visibility.rawValue), \(first.ownerID),
                    \(first.groupID), \(first.version), \(first.name), \(first.description), \(first.category),
                    \(first.difficulty.rawValue), \(first.durationDays), \(contentVersion), \(time), \(time))
            """, logger: logger)
        try await insertVersion(first, createdBy: createdBy, at: time)
    }

    /// The next version, which becomes the latest (what lists and search show).
    func add(_ next: ChallengeVersion, contentVersion: Int?, createdBy: UUID?, at time: Date) async throws {
        try await insertVersion(next, createdBy: createdBy, at: time)
        // The row keeps what browsing filters, sorts and searches by from the latest version.
        try await connection.query(
            """
            UPDATE challenges SET latest_version = \(next.version), visibility = \(next.visibility.rawValue),
                group_id = \(next.groupID), name = \(next.name), description = \(next.description),
                category = \(next.category), difficulty = \(next.difficulty.rawValue),
                duration_days = \(next.durationDays), content_version = COALESCE(\(contentVersion), content_version),
                updated_at = \(time)
            WHERE challenge_id = \(next.challengeID)
            """, logger: logger)
    }

    private func insertVersion(_ version: ChallengeVersion, createdBy: UUID?, at time: Date) async throws {
        let json = try StoredJSON.encode(version)
        try await connection.query(
            """
            INSERT INTO challenge_versions (challenge_id, version, effective_from, definition, created_at, created_by)
            VALUES (\(version.challengeID), \(version.version), \(version.effectiveFrom?.description)::date, \(json)::jsonb,
                    \(time), \(createdBy))
            """, logger: logger)
    }

    /// Deletes the challenge with its whole history, likes and invitations.
    func delete(_ challengeID: UUID) async throws {
        try await connection.query("DELETE FROM challenges WHERE challenge_id = \(challengeID)", logger: logger)
    }

    /// The content version a curated definition was last seeded at, and its latest version; nil if it is not stored.
    func seeded(_ challengeID: UUID) async throws -> (contentVersion: Int?, latestVersion: Int)? {
        let rows = try await connection.query(
            "SELECT content_version, latest_version FROM challenges WHERE challenge_id = \(challengeID)", logger: logger
        ).collect()
        return try rows.first.map { try $0.decode((Int?, Int).self) }
    }

    /// Makes replicas that seed the curated content at the same time take turns, until the transaction ends.
    func lockContent() async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(hashtext('surge.challenges.content'))", logger: logger)
    }

    // MARK: Likes and invitations

    /// Whether the like is new; a new one counts towards today's trending activity.
    func like(_ challengeID: UUID, by userID: UUID, at time: Date) async throws -> Bool {
        let inserted = try await connection.query(
            """
            INSERT INTO likes (challenge_id, user_id, liked_at) VALUES (\(challengeID), \(userID), \(time))
            ON CONFLICT (challenge_id, user_id) DO NOTHING RETURNING liked_at
            """, logger: logger
        ).collect()
        guard !inserted.isEmpty else { return false }
        try await trending.record(likes: 1, challengeID: challengeID, on: Trending.day(at: time))
        return true
    }

    /// When the like taken back was given (its day's trending activity drops); nil if there was none.
    func unlike(_ challengeID: UUID, by userID: UUID) async throws -> Date? {
        let deleted = try await connection.query(
            "DELETE FROM likes WHERE challenge_id = \(challengeID) AND user_id = \(userID) RETURNING liked_at", logger: logger
        ).collect()
        guard let likedAt = try deleted.first?.decode(Date.self) else { return nil }
        try await trending.record(likes: -1, challengeID: challengeID, on: Trending.day(at: likedAt))
        return likedAt
    }

    /// Stores the like count and refreshes the trending score as of `today`.
    func setLikes(_ count: Int, of challengeID: UUID, today: LocalDate) async throws {
        try await connection.query("UPDATE challenges SET likes_count = \(count) WHERE challenge_id = \(challengeID)", logger: logger)
        try await trending.refresh(challengeID, today: today)
    }

    /// Whether the invitation is new: nothing is stored for an invitee invited before.
    func invite(_ invitation: Invitation, from inviterID: UUID) async throws -> Bool {
        let inserted = try await connection.query(
            """
            INSERT INTO invitations (invitation_id, challenge_id, inviter_id, invitee_id, group_id, sent_at)
            VALUES (\(invitation.invitationID), \(invitation.challengeID), \(inviterID), \(invitation.inviteeID), \(invitation.groupID),
                    \(invitation.sentAt))
            ON CONFLICT (invitee_id, challenge_id) DO NOTHING RETURNING invitation_id
            """, logger: logger
        ).collect()
        return !inserted.isEmpty
    }

    // MARK: The directory

    var directory: DirectoryStore { DirectoryStore(connection: connection, logger: logger) }
    var trending: TrendingStore { TrendingStore(connection: connection, logger: logger) }
    var erasure: UserErasure { UserErasure(connection: connection, outbox: outbox, logger: logger) }

    /// A group's current members; nil without a group or if the group has none we know of.
    func members(of groupID: UUID?) async throws -> Set<UUID>? {
        try await directory.members(of: groupID)
    }

    func isMember(_ userID: UUID, of groupID: UUID) async throws -> Bool {
        try await directory.isMember(userID, of: groupID)
    }

    /// Which of `others` are accepted friends of `userID`.
    func friends(of userID: UUID, among others: [UUID]) async throws -> Set<UUID> {
        try await directory.friends(of: userID, among: others)
    }

    func timeZone(ofUser userID: UUID) async throws -> TimeZone? {
        try await directory.userTimeZone(userID)
    }

    func timeZone(ofGroup groupID: UUID) async throws -> TimeZone? {
        try await directory.groupTimeZone(groupID)
    }

    // MARK: Events

    /// Writes `event` to the outbox, with the changes of this transaction.
    func publish<Event: EventPayload>(_ event: Event, at time: Date, trace: TraceContext?) async throws {
        try await outbox.append(event, on: connection, at: time, trace: trace, logger: logger)
    }
}
