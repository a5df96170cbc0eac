import Logging
import PostgresNIO

/// Members are written inside the inbox transaction of the event that taught us about them.
enum MemberStore {
    static func upsert(_ member: Member, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO members (user_id, time_zone) VALUES (\(member.userID), \(member.timeZone))
            ON CONFLICT (user_id) DO UPDATE SET time_zone = EXCLUDED.time_zone, updated_at = now()
            """, logger: logger)
    }
}
