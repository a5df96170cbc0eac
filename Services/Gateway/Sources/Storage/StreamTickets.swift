import Crypto
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Short-lived, single-use tickets that open a stream for a browser's `EventSource`, which cannot send an
/// `Authorization` header. A ticket belongs to the session of the token it was issued to, so the stream it opens ends
/// with that session. `PostgresStreamTicketStore` is production's (every gateway replica can redeem a ticket);
/// `InMemoryStreamTicketStore` serves router tests that need no database.
protocol StreamTicketStore: Sendable {
    func issue(for userID: UUID, session sessionID: UUID?, now: Date) async throws -> (ticket: String, expiresAt: Date)
    /// The ticket's user and session, once: nil when it is unknown, used or expired.
    func redeem(_ ticket: String, now: Date) async throws -> (userID: UUID, sessionID: UUID?)?
}

enum StreamTicket {
    static let lifetime: TimeInterval = 60

    static func generate() -> String {
        Data((0..<32).map { _ in UInt8.random(in: .min ... .max) }).base64URLEncoded
    }

    /// Only this is stored, never the ticket itself.
    static func hash(_ ticket: String) -> Data { Data(SHA256.hash(data: Data(ticket.utf8))) }
}

struct PostgresStreamTicketStore: StreamTicketStore {
    let client: PostgresClient
    let logger: Logger

    func issue(for userID: UUID, session sessionID: UUID?, now: Date) async throws -> (ticket: String, expiresAt: Date) {
        let ticket = StreamTicket.generate()
        let expiresAt = now.addingTimeInterval(StreamTicket.lifetime)
        try await client.query(
            """
            INSERT INTO stream_tickets (ticket_hash, user_id, session_id, expires_at)
            VALUES (\(StreamTicket.hash(ticket)), \(userID), \(sessionID), \(expiresAt))
            """,
            logger: logger)
        return (ticket, expiresAt)
    }

    func redeem(_ ticket: String, now: Date) async throws -> (userID: UUID, sessionID: UUID?)? {
        let rows = try await client.query(
            """
            UPDATE stream_tickets SET used_at = \(now)
            WHERE ticket_hash = \(StreamTicket.hash(ticket)) AND used_at IS NULL AND expires_at > \(now)
            RETURNING user_id, session_id
            """, logger: logger)
        for try await (userID, sessionID) in rows.decode((UUID, UUID?).self) { return (userID, sessionID) }
        return nil
    }

    func purge(now: Date) async throws {
        try await client.query("DELETE FROM stream_tickets WHERE expires_at < \(now.addingTimeInterval(-3600))", logger: logger)
    }
}

final class InMemoryStreamTicketStore: StreamTicketStore {
    private struct Issued {
        var userID: UUID
        var sessionID: UUID?
        var expiresAt: Date
        var used = false
    }

    private let tickets = Mutex<[Data: Issued]>([:])

    func issue(for userID: UUID, session sessionID: UUID?, now: Date) async throws -> (ticket: String, expiresAt: Date) {
        let ticket = StreamTicket.generate()
        let expiresAt = now.addingTimeInterval(StreamTicket.lifetime)
        tickets.withLock { $0[StreamTicket.hash(ticket)] = Issued(userID: userID, sessionID: sessionID, expiresAt: expiresAt) }
        return (ticket, expiresAt)
    }

    func redeem(_ ticket: String, now: Date) async throws -> (userID: UUID, sessionID: UUID?)? {
        tickets.withLock { tickets in
            let hash = StreamTicket.hash(ticket)
            guard let issued = tickets[hash], !issued.used, issued.expiresAt > now else { return nil }
            tickets[hash]?.used = true
            return (issued.userID, issued.sessionID)
        }
    }
}

extension Data {
    fileprivate var base64URLEncoded: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
