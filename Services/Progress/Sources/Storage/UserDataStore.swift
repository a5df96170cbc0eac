import Foundation
import Logging
import PostgresNIO

/// Everything progress keeps about one user, as a whole: for the data export, and to forget them.
struct UserDataStore {
    let connection: PostgresConnection
    let logger: Logger

    /// The user's data as JSON, photo bytes linked rather than inlined.
    func export(_ userID: UUID) async throws -> Data {
        let rows = try await connection.query(
            """
            SELECT json_build_object(
              'member', (SELECT row_to_json(m) FROM members m WHERE m.user_id = \(userID)),
              'attempts', COALESCE((SELECT json_agg(json_build_object(
                    'attempt', row_to_json(a),
                    'days', (SELECT COALESCE(json_agg(row_to_json(d) ORDER BY d.local_date), '[]') FROM attempt_days d WHERE d.attempt_id = a.attempt_id),
                    'checkIns', (SELECT COALESCE(json_agg(row_to_json(c) ORDER BY c.recorded_at), '[]') FROM checkins c WHERE c.attempt_id = a.attempt_id))
                  ORDER BY a.started_at) FROM attempts a WHERE a.user_id = \(userID)), '[]'),
              'pointsLedger', COALESCE((SELECT json_agg(row_to_json(l) ORDER BY l.awarded_at) FROM points_ledger l WHERE l.user_id = \(userID)), '[]'),
              'photos', COALESCE((SELECT json_agg(json_build_object('photoID', p.photo_id, 'attemptID', p.attempt_id, 'localDate', p.local_date,
                    'contentType', p.content_type, 'size', p.size, 'url', '/v1/photos/' || p.photo_id) ORDER BY p.created_at)
                  FROM photos p WHERE p.user_id = \(userID)), '[]'),
              'choresCompleted', COALESCE((SELECT json_agg(json_build_object('occurrenceID', o.occurrence_id, 'title', o.title,
                    'points', o.points, 'completedAt', o.completed_at) ORDER BY o.completed_at)
                  FROM chore_occurrences o WHERE o.completed_by = \(userID)), '[]')
            )::text
            """, logger: logger)
        for try await text in rows.decode(String.self) { return Data(text.utf8) }
        return Data("{}".utf8)
    }

    /// Honours an account deletion: everything kept about the user goes; household chores they completed stay for
    /// the household, without their name.
    func erase(_ userID: UUID) async throws {
        for statement: PostgresQuery in [
            "DELETE FROM attempts WHERE user_id = \(userID)",
            "DELETE FROM points_ledger WHERE user_id = \(userID)",
            "DELETE FROM member_points WHERE user_id = \(userID)",
            "DELETE FROM invitations WHERE user_id = \(userID)",
            "DELETE FROM group_members WHERE user_id = \(userID)",
            "UPDATE chore_occurrences SET completed_by = NULL WHERE completed_by = \(userID)",
            "UPDATE chore_occurrences SET assignee_id = NULL WHERE assignee_id = \(userID)",
            "DELETE FROM members WHERE user_id = \(userID)",
        ] {
            try await connection.query(statement, logger: logger)
        }
    }
}
