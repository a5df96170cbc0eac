import Crypto
import Foundation
import Logging
import PostgresNIO

/// Short-lived, single-use tickets that open a stream for a browser's `EventSource`, which cannot send an
/// `Authorization` header. Only the ticket's SHA-256 is stored; every gateway replica can redeem it. A ticket belongs
/// to the session of the token it was issued to, so the stream it opens ends with that session.
struct StreamTickets: Sendable {
    let client: PostgresClient
    let logger: Logger
    static let lifetime: TimeInterval = 60

    func issue(for userID: UUID, session sessionID: UUID?, now: Date) async throws -> (ticket: String, expiresAt: Date) {
        let ticket = Data((0..<32).map { _ in UInt8.random(in: .min ... .max) }).base64URLEncoded
        let expiresAt = now.addingTimeInterval(Self.lifetime)
        try await client.query(
            """
            INSERT INTO stream_tickets (ticket_hash, user_id, session_id, expires_at)
            VALUES (\(Self.hash(ticket)), \(userID), \(sessionID), \(expiresAt))
            """,
            logger: logger)
        return (ticket, expiresAt)
    }

    /// The ticket's user and session, once: nil when it is unknown, used or expired.
    func redeem(_ ticket: String, now: Date) async throws -> (userID: UUID, sessionID: UUID?)? {
        let rows = try await client.query(
            """
            UPDATE stream_tickets SET used_at = \(now)
            WHERE ticket_hash = \(Self.hash(ticket)) AND used_at IS NULL AND expires_at > \(now)
            RETURNING user_id, session_id
            """, logger: logger)
        for try await (userID, sessionID) in rows.decode((UUID, UUID?).self) { return (userID, sessionID) }
        return nil
    }

    func purge(now: Date) async throws {
        try await client.query("DELETE FROM stream_tickets WHERE expires_at < \(now.addingTimeInterval(-3600))", logger: logger)
    }

    private static func hash(_ ticket: String) -> Data { Data(SHA256.hash(data: Data(ticket.utf8))) }
}

extension Data {
    fileprivate var base64URLEncoded: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
