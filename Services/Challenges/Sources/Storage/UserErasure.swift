import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging

/// What happens here when an account is deleted (`UserDeleted`):
/// - the user's private definitions (habits, weekly challenges, private competitions) are deleted with their whole
///   history, likes and invitations, each announced with `ChallengeDeleted`;
/// - what the user shared with others stays, because others depend on it: public and group competitions and household
///   chores keep existing with the owner cleared (no one can edit them any more except, for chores, the household), and
///   the user's id is removed from every stored version (owner, chore assignee, version author);
/// - the user's likes are taken back (counts drop), invitations to them are removed, invitations they sent keep
///   their invitee's access but forget the inviter;
/// - the user's time zone, friendships and memberships are forgotten.
struct UserErasure {
    let connection: PostgresConnection
    let outbox: Outbox
    let logger: Logger

    struct Outcome: Equatable, Sendable {
        var deleted: [UUID]
        var kept: [UUID]
    }

    func erase(_ userID: UUID, at time: Date, trace: TraceContext?) async throws -> Outcome {
        var deleted: [UUID] = []
        let privateRows = try await connection.query(
            """
            DELETE FROM challenges WHERE owner_id = \(userID) AND visibility = 'private'
            RETURNING challenge_id, kind, group_id
            """, logger: logger)
        for (id, kind, groupID) in try await privateRows.collect().map({ try $0.decode((UUID, String, UUID?).self) }) {
            deleted.append(id)
            try await outbox.append(
                ChallengeDeleted(
                    challengeID: id, kind: ChallengeKind(rawValue: kind) ?? .habit, ownerID: userID, groupID: groupID, deletedBy: userID,
                    deletedAt: time),
                on: connection, at: time, trace: trace, logger: logger)
        }
        var kept: [UUID] = []
        let keptRows = try await connection.query(
            "UPDATE challenges SET owner_id = NULL WHERE owner_id = \(userID) RETURNING challenge_id", logger: logger)
        for id in try await keptRows.collect().map({ try $0.decode(UUID.self) }) { kept.append(id) }
        let key = userID.key
        try await connection.query(
            """
            UPDATE challenge_versions SET definition = definition - 'ownerID'
            WHERE lower(definition->>'ownerID') = \(key)
            """, logger: logger)
        try await connection.query(
            """
            UPDATE challenge_versions SET definition = definition #- '{chore,assigneeID}'
            WHERE lower(definition->'chore'->>'assigneeID') = \(key)
            """, logger: logger)
        try await connection.query(
            "UPDATE challenge_versions SET created_by = NULL WHERE created_by = \(userID)", logger: logger)
        try await connection.query(
            """
            UPDATE challenges c SET likes_count = c.likes_count - 1
            FROM likes l WHERE l.user_id = \(userID) AND l.challenge_id = c.challenge_id
            """, logger: logger)
        try await connection.query("DELETE FROM likes WHERE user_id = \(userID)", logger: logger)
        try await connection.query("DELETE FROM invitations WHERE invitee_id = \(userID)", logger: logger)
        try await connection.query("UPDATE invitations SET inviter_id = NULL WHERE inviter_id = \(userID)", logger: logger)
        try await connection.query("DELETE FROM friendships WHERE user_low = \(userID) OR user_high = \(userID)", logger: logger)
        try await connection.query("DELETE FROM group_members WHERE user_id = \(userID)", logger: logger)
        try await connection.query("DELETE FROM users WHERE user_id = \(userID)", logger: logger)
        return Outcome(deleted: deleted, kept: kept)
    }
}
