import Foundation
import Logging
import PostgresNIO
import SurgeCalendar
import SurgeContracts

/// Trending: joins and likes per challenge over the last seven UTC days (today and the six before), kept as a score
/// on the challenge row so the trending sort reads an index. Writes refresh the one challenge they touch; a periodic
/// `refreshAll` (`TRENDING_REFRESH_SECONDS`, default 10 minutes) lets old days drop out of the window.
enum Trending {
    static let utcZone = LocalCalendar.utc.timeZone
    static let utc = LocalCalendar.utc
    static let windowDays = 7

    static func day(at instant: Date) -> LocalDate { utc.date(at: instant) }
}

/// The trending activity and scores, over one connection.
struct TrendingStore {
    let connection: PostgresConnection
    let logger: Logger

    func record(likes: Int = 0, joins: Int = 0, challengeID: UUID, on day: LocalDate) async throws {
        try await connection.query(
            """
            INSERT INTO challenge_activity (challenge_id, day, joins, likes)
            SELECT \(challengeID), \(day.description)::date, GREATEST(\(joins), 0), GREATEST(\(likes), 0)
            WHERE EXISTS (SELECT 1 FROM challenges WHERE challenge_id = \(challengeID))
            ON CONFLICT (challenge_id, day) DO UPDATE SET joins = GREATEST(challenge_activity.joins + \(joins), 0),
                likes = GREATEST(challenge_activity.likes + \(likes), 0)
            """, logger: logger)
    }

    func refresh(_ challengeID: UUID, today: LocalDate) async throws {
        let from = today.adding(days: -(Trending.windowDays - 1)).description
        try await connection.query(
            """
            UPDATE challenges SET trending_score = (
                SELECT COALESCE(sum(joins + likes), 0)::integer FROM challenge_activity
                WHERE challenge_id = \(challengeID) AND day >= \(from)::date)
            WHERE challenge_id = \(challengeID)
            """, logger: logger)
    }

    /// Recomputes every score that is not zero or has activity in the window; returns how many changed.
    @discardableResult
    func refreshAll(today: LocalDate) async throws -> Int {
        let from = today.adding(days: -(Trending.windowDays - 1)).description
        let rows = try await connection.query(
            """
            WITH scores AS (
                SELECT challenge_id, sum(joins + likes)::integer AS score FROM challenge_activity
                WHERE day >= \(from)::date GROUP BY challenge_id
            ), targets AS (
                SELECT challenge_id FROM challenges WHERE trending_score > 0
                UNION SELECT challenge_id FROM scores
            )
            UPDATE challenges c SET trending_score = COALESCE(s.score, 0)
            FROM targets t LEFT JOIN scores s ON s.challenge_id = t.challenge_id
            WHERE c.challenge_id = t.challenge_id AND c.trending_score <> COALESCE(s.score, 0)
            RETURNING c.challenge_id
            """, logger: logger)
        return try await rows.collect().count
    }
}
