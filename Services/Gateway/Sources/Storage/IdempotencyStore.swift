import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import PostgresNIO

/// Remembers the first response to each idempotency key for a day, so a mobile client's retry gets the same answer
/// instead of creating twice.
struct IdempotencyStore: Sendable {
    struct StoredResponse: Sendable, Equatable {
        var status: Int
        var contentType: String?
        var location: String?
        var body: Data
    }

    enum Claim: Sendable, Equatable {
        /// First use: run the request, then `complete` or `release`.
        case claimed
        /// The same key with a different request.
        case mismatch
        /// The first request with this key is still running.
        case inProgress
        case replay(StoredResponse)
    }

    let client: PostgresClient
    let logger: Logger
    /// After this long an unfinished claim is considered abandoned (its gateway died) and may be taken over.
    let abandonAfter: Duration

    func claim(scope: String, key: String, fingerprint: Data, now: Date) async throws -> Claim {
        let fingerprintBytes = ByteBuffer(data: fingerprint)
        let inserted = try await client.query(
            """
            INSERT INTO idempotency_keys (scope, key, fingerprint, started_at) VALUES (\(scope), \(key), \(fingerprintBytes), \(now))
            ON CONFLICT DO NOTHING RETURNING 1
            """, logger: logger
        ).collect()
        if !inserted.isEmpty { return .claimed }
        let rows = try await client.query(
            """
            SELECT fingerprint, status, content_type, location, body, started_at, completed_at
            FROM idempotency_keys WHERE scope = \(scope) AND key = \(key)
            """, logger: logger)
        for try await (stored, status, contentType, location, body, startedAt, completedAt) in rows.decode(
            (ByteBuffer, Int?, String?, String?, ByteBuffer?, Date, Date?).self)
        {
            guard stored == fingerprintBytes else { return .mismatch }
            if completedAt != nil, let status {
                return .replay(StoredResponse(status: status, contentType: contentType, location: location, body: body.map { Data(buffer: $0) } ?? Data()))
            }
            let abandoned = now.timeIntervalSince(startedAt) > Double(abandonAfter.components.seconds)
            guard abandoned else { return .inProgress }
            let taken = try await client.query(
                """
                UPDATE idempotency_keys SET started_at = \(now)
                WHERE scope = \(scope) AND key = \(key) AND completed_at IS NULL AND started_at = \(startedAt)
                RETURNING 1
                """, logger: logger
            ).collect()
            return taken.isEmpty ? .inProgress : .claimed
        }
        return try await claim(scope: scope, key: key, fingerprint: fingerprint, now: now)
    }

    func complete(scope: String, key: String, response: StoredResponse, now: Date) async throws {
        try await client.query(
            """
            UPDATE idempotency_keys SET status = \(response.status), content_type = \(response.contentType),
                location = \(response.location), body = \(ByteBuffer(data: response.body)), completed_at = \(now)
            WHERE scope = \(scope) AND key = \(key)
            """, logger: logger)
    }

    /// Forgets a claim whose request failed on our side, so the client's retry runs it again.
    func release(scope: String, key: String) async throws {
        try await client.query("DELETE FROM idempotency_keys WHERE scope = \(scope) AND key = \(key)", logger: logger)
    }

    func purge(olderThan cutoff: Date) async throws {
        try await client.query("DELETE FROM idempotency_keys WHERE started_at < \(cutoff)", logger: logger)
    }
}
