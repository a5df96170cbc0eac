import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import PostgresNIO
import SurgeContracts
import SurgePostgres

/// A stored photo's facts, without its bytes.
struct PhotoRow: Sendable {
    var photoID: UUID
    var userID: UUID
    var attemptID: UUID
    var challengeID: UUID
    var localDate: LocalDate
    var taskID: String
    var contentType: String
    var size: Int
    var createdAt: Date
}

struct PhotoCursor: Codable, Sendable {
    var createdAt: Date
    var photoID: UUID
}

extension PhotoCursor: KeysetPosition {
    init(instant: Date, id: UUID) { self.init(createdAt: instant, photoID: id) }
}

/// Progress photos, kept in the progress schema (durable, backed up with the rest; an object store can replace this
/// behind the same methods). Served to their owner, and within a competition to its other participants.
struct PhotoStore {
    let connection: PostgresConnection
    let logger: Logger

    func insert(
        id: UUID, userID: UUID, attemptID: UUID, challengeID: UUID, date: LocalDate, taskID: String, contentType: String, data: Data, now: Date
    ) async throws {
        try await connection.query(
            """
            INSERT INTO photos (photo_id, user_id, attempt_id, challenge_id, local_date, task_id, content_type, size, bytes, created_at)
            VALUES (\(id), \(userID), \(attemptID), \(challengeID), \(date), \(taskID), \(contentType), \(data.count), \(ByteBuffer(data: data)), \(now))
            """, logger: logger)
    }

    /// The photo's bytes, if `viewer` may see it.
    func content(_ photoID: UUID, viewer: UUID) async throws -> (contentType: String, data: Data)? {
        let rows = try await connection.query(
            """
            SELECT p.content_type, p.bytes FROM photos p
            WHERE p.photo_id = \(photoID) AND (p.user_id = \(viewer) OR EXISTS (
                SELECT 1 FROM attempts mine JOIN definitions d ON d.challenge_id = mine.challenge_id
                WHERE mine.user_id = \(viewer) AND mine.challenge_id = p.challenge_id AND d.kind = 'competition'))
            """, logger: logger)
        for try await (contentType, bytes) in rows.decode((String, ByteBuffer).self) {
            return (contentType, Data(buffer: bytes))
        }
        return nil
    }

    /// Photos of one attempt or one challenge that `viewer` may see, after `after`, newest first.
    func list(attemptID: UUID?, challengeID: UUID?, viewer: UUID, after: PhotoCursor, limit: Int) async throws -> [PhotoRow] {
        let rows = try await connection.query(
            """
            SELECT p.photo_id, p.user_id, p.attempt_id, p.challenge_id, p.local_date, p.task_id, p.content_type, p.size, p.created_at
            FROM photos p
            WHERE (\(attemptID)::uuid IS NULL OR p.attempt_id = \(attemptID)) AND (\(challengeID)::uuid IS NULL OR p.challenge_id = \(challengeID))
              AND (p.created_at, p.photo_id) < (\(after.createdAt), \(after.photoID))
              AND (p.user_id = \(viewer) OR EXISTS (
                    SELECT 1 FROM attempts mine JOIN definitions d ON d.challenge_id = mine.challenge_id
                    WHERE mine.user_id = \(viewer) AND mine.challenge_id = p.challenge_id AND d.kind = 'competition'))
            ORDER BY p.created_at DESC, p.photo_id DESC LIMIT \(limit)
            """, logger: logger)
        var photos: [PhotoRow] = []
        for try await (id, userID, attemptID, challengeID, date, taskID, contentType, size, createdAt) in rows.decode(
            (UUID, UUID, UUID, UUID, LocalDate, String, String, Int, Date).self)
        {
            photos.append(PhotoRow(
                photoID: id, userID: userID, attemptID: attemptID, challengeID: challengeID, localDate: date, taskID: taskID,
                contentType: contentType, size: size, createdAt: createdAt))
        }
        return photos
    }
}
