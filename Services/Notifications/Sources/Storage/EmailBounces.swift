import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgePostgres

/// The provider's reports of bounced and complained-about mails, and the addresses nothing more is sent to.
struct EmailBounceStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    enum Recorded: Equatable {
        /// Recorded now; `mailID` is ours when the provider's message id names a mail we sent.
        case recorded(mailID: UUID?, suppressed: Bool)
        /// The provider sent this report before (its webhook message id is known): nothing changes.
        case alreadyRecorded
        /// Neither a mail of ours nor the report names a recipient: there is nothing to record it against.
        case noAddress
    }

    /// Records a report once per `reportID`, on the mail it names and against its address; a hard bounce or a complaint
    /// suppresses the address (or each address the report names, when it names no mail of ours).
    func record(_ bounce: EmailBounce, reportID: String, at now: Date) async throws -> Recorded {
        try await client.transaction(logger: logger) { connection in
            var mail: (id: UUID, address: String)?
            if let providerMessageID = bounce.providerMessageID {
                let rows = try await connection.query(
                    "SELECT mail_id, address FROM email_deliveries WHERE provider_message_id = \(providerMessageID)", logger: logger)
                for try await (id, address) in rows.decode((UUID, String).self) { mail = (id, address.lowercased()) }
            }
            let addresses = mail.map { [$0.address] } ?? bounce.addresses
            guard let address = addresses.first else { return .noAddress }
            let inserted = try await connection.query(
                """
                INSERT INTO email_bounces (report_id, mail_id, provider_message_id, address, kind, detail, reported_at, received_at)
                VALUES (\(reportID), \(mail?.id), \(bounce.providerMessageID), \(address), \(bounce.kind.rawValue), \(bounce.detail),
                    \(bounce.reportedAt), \(now))
                ON CONFLICT (report_id) DO NOTHING RETURNING 1
                """, logger: logger)
            guard try await inserted.collect().count == 1 else { return .alreadyRecorded }
            if let mail {
                try await connection.query(
                    "UPDATE email_deliveries SET bounce = \(bounce.kind.rawValue), bounced_at = \(now) WHERE mail_id = \(mail.id)", logger: logger)
            }
            if bounce.kind.suppressesAddress {
                try await connection.query(
                    """
                    INSERT INTO email_suppressions (address, kind, report_id, suppressed_at)
                    SELECT unnest(\(addresses)::text[]), \(bounce.kind.rawValue), \(reportID), \(now) ON CONFLICT (address) DO NOTHING
                    """, logger: logger)
            }
            return .recorded(mailID: mail?.id, suppressed: bounce.kind.suppressesAddress)
        }
    }

    /// Forgets reports as old as the mails they were about; suppressions stay.
    func prune(now: Date) async throws {
        try await client.query(
            "DELETE FROM email_bounces WHERE received_at < \(now.addingTimeInterval(-EmailDeliveryStore.keptFor))", logger: logger)
    }
}
