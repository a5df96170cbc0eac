import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeCalendar
import SurgeContracts

/// Sends the daily reminders that are due: only those rows, by the index on their fire instant, in batches each
/// replica locks for itself (`SKIP LOCKED`), so replicas share the work and none is sent twice. A reminder is for its
/// local day: skipped if the user already checked in that day or is on vacation, deferred to the end of quiet hours while the day
/// lasts, dropped once the day is over (also after downtime: a missed reminder is never sent for a day gone by).
struct ReminderScheduler: Sendable {
    let client: PostgresClient
    let inbox: Inbox
    let logger: Logger
    static let batch = 200

    /// Handles every reminder due at `now`; returns how many were looked at.
    @discardableResult
    func sendDue(now: Date) async throws -> Int {
        var handled = 0
        while true {
            let count = try await client.transaction(logger: logger) { connection in
                let due = try await connection.query(
                    """
                    SELECT user_id, fire_at FROM reminders WHERE fire_at <= \(now) ORDER BY fire_at LIMIT \(Self.batch) FOR UPDATE SKIP LOCKED
                    """, logger: logger
                ).collect().map { try $0.decode((UUID, Date).self) }
                let store = RecipientStore(connection: connection, logger: logger)
                for (userID, fireAt) in due {
                    guard let recipient = try await store.recipient(userID) else {
                        try await connection.query("DELETE FROM reminders WHERE user_id = \(userID)", logger: logger)
                        continue
                    }
                    try await send(recipient, scheduledFor: fireAt, now: now, store: store, connection: connection)
                }
                return due.count
            }
            handled += count
            if count < Self.batch { return handled }
        }
    }

    private func send(_ recipient: Recipient, scheduledFor fireAt: Date, now: Date, store: RecipientStore, connection: PostgresConnection) async throws {
        let calendar = recipient.calendar
        let day = calendar.date(at: fireAt)
        if recipient.lastCheckIn.map({ $0 >= day }) != true, try await !store.isOnVacation(recipient.userID, on: day) {
            switch DeliveryRule.decide(at: now, quiet: recipient.quiet, usefulUntil: calendar.end(of: day), in: calendar) {
            case .now:
                try await inbox.deliver(
                    .dailyReminder(recipient.language), kind: .dailyReminder, key: "daily-reminder:\(day)", to: recipient.userID, at: now,
                    connection: connection, logger: logger)
            case .deferred(let until):
                try await connection.query("UPDATE reminders SET fire_at = \(until) WHERE user_id = \(recipient.userID)", logger: logger)
                return
            case .dropped:
                break
            }
        }
        try await store.schedule(recipient, after: max(now, fireAt))
    }
}
