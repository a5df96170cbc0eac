import Foundation
import Logging
import PostgresNIO

/// Everything challenges keeps about one user, for the data export: the definitions they own with every version,
/// their likes, and the invitations they sent or received.
struct UserExport {
    let client: PostgresClient
    let logger: Logger

    func json(for userID: UUID) async throws -> Data {
        let rows = try await client.query(
            """
            SELECT json_build_object(
              'owned', COALESCE((SELECT json_agg(json_build_object(
                    'challengeID', c.challenge_id, 'kind', c.kind, 'visibility', c.visibility, 'createdAt', c.created_at,
                    'versions', (SELECT json_agg(v.definition ORDER BY v.version) FROM challenge_versions v WHERE v.challenge_id = c.challenge_id))
                  ORDER BY c.created_at) FROM challenges c WHERE c.owner_id = \(userID)), '[]'),
              'likes', COALESCE((SELECT json_agg(json_build_object('challengeID', l.challenge_id, 'likedAt', l.liked_at) ORDER BY l.liked_at)
                  FROM likes l WHERE l.user_id = \(userID)), '[]'),
              'invitationsReceived', COALESCE((SELECT json_agg(json_build_object('challengeID', i.challenge_id, 'inviterID', i.inviter_id,
                    'sentAt', i.sent_at) ORDER BY i.sent_at) FROM invitations i WHERE i.invitee_id = \(userID)), '[]'),
              'invitationsSent', COALESCE((SELECT json_agg(json_build_object('challengeID', i.challenge_id, 'inviteeID', i.invitee_id,
                    'sentAt', i.sent_at) ORDER BY i.sent_at) FROM invitations i WHERE i.inviter_id = \(userID)), '[]')
            )::text
            """, logger: logger)
        for try await text in rows.decode(String.self) { return Data(text.utf8) }
        return Data("{}".utf8)
    }
}
