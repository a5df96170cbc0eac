import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeContracts

/// An e-mail due, claimed for one attempt.
struct ClaimedEmail: Sendable {
    var mailID: UUID
    var claim: UUID
    var attempts: Int
    var createdAt: Date
    var kind: String
    var address: String
    var mail: RenderedMail
    /// The address hard-bounced or complained before: the mail is not sent.
    var suppressed: Bool
}

/// Account mails still to send, claimed by workers with `FOR UPDATE SKIP LOCKED` and a lease like pushes. Once sent
/// or given up, a row keeps only what came of it: its subject and bodies, which carry links with tokens, are erased.
struct EmailDeliveryStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    static let keptFor: TimeInterval = 30 * 86_400

    /// Queues a mail. A second hand-over of the same mail (identity retrying after a lost answer) replaces the
    /// first while it is unsent, so the mail sent carries the link identity kept.
    func enqueue(_ mailID: UUID, kind: String, to address: String, _ mail: RenderedMail, at now: Date) async throws {
        try await client.query(
            """
            INSERT INTO email_deliveries (mail_id, kind, address, subject, text_body, html_body, created_at, next_attempt_at)
            VALUES (\(mailID), \(kind), \(address), \(mail.subject), \(mail.text), \(mail.html), \(now), \(now))
            ON CONFLICT (mail_id) DO UPDATE SET subject = EXCLUDED.subject, text_body = EXCLUDED.text_body, html_body = EXCLUDED.html_body
            WHERE email_deliveries.status = 'pending'
            """, logger: logger)
    }

    func claimDue(now: Date, leaseEnd: Date, limit: Int) async throws -> [ClaimedEmail] {
        let claim = UUID()
        return try await client.query(
            """
            WITH due AS (
                SELECT mail_id FROM email_deliveries WHERE status = 'pending' AND next_attempt_at <= \(now)
                ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            UPDATE email_deliveries d SET attempts = d.attempts + 1, next_attempt_at = \(leaseEnd), claim = \(claim)
            FROM due WHERE d.mail_id = due.mail_id
            RETURNING d.mail_id, d.attempts, d.created_at, d.kind, d.address, d.subject, d.text_body, d.html_body,
                EXISTS (SELECT 1 FROM email_suppressions s WHERE s.address = lower(d.address))
            """, logger: logger
        ).collect().map { row in
            let (id, attempts, createdAt, kind, address, subject, text, html, suppressed) = try row.decode(
                (UUID, Int, Date, String, String, String, String, String, Bool).self)
            return ClaimedEmail(
                mailID: id, claim: claim, attempts: attempts, createdAt: createdAt, kind: kind, address: address,
                mail: RenderedMail(subject: subject, text: text, html: html), suppressed: suppressed)
        }
    }

    /// Sent or given up: the outcome stays (with the provider's id of a sent mail, which its bounce reports name), the
    /// mail's content goes.
    func finish(_ email: ClaimedEmail, status: String, reason: String?, providerMessageID: String? = nil, at now: Date) async throws {
        try await client.query(
            """
            UPDATE email_deliveries SET status = \(status), last_error = \(reason), finished_at = \(now), claim = NULL,
                provider_message_id = \(providerMessageID), subject = NULL, text_body = NULL, html_body = NULL
            WHERE mail_id = \(email.mailID) AND claim = \(email.claim)
            """, logger: logger)
    }

    func retry(_ email: ClaimedEmail, at instant: Date, reason: String) async throws {
        try await client.query(
            """
            UPDATE email_deliveries SET next_attempt_at = \(instant), claim = NULL, last_error = \(reason)
            WHERE mail_id = \(email.mailID) AND claim = \(email.claim)
            """, logger: logger)
    }

    /// Forgets what came of mails finished long ago; idempotent.
    func prune(now: Date) async throws {
        try await client.query(
            "DELETE FROM email_deliveries WHERE status <> 'pending' AND finished_at < \(now.addingTimeInterval(-Self.keptFor))", logger: logger)
    }
}
