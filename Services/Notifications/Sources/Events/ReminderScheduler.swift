import Foundation
import Logging
import Metrics
import NotificationsDomain
import PostgresNIO
import SurgeCalendar
import SurgeContracts

/// Sends the daily reminders and the one-off notifications (streak at risk, re-engagement, weekly digest) that are
/// due: only those rows, by the index on their fire instant, in batches each replica locks for itself (`SKIP LOCKED`),
/// so replicas share the work and none is sent twice. Each is for its local day: a reminder or nudge is skipped if the
/// user already checked in that day or is on vacation; any is deferred to the end of quiet hours while the day lasts
/// and dropped once the day is over (also after downtime: nothing is sent for a day gone by). A daily or habit reminder
/// looked at more than `maxLateness` after its time (downtime, a clock jump) is dropped too.
struct ReminderScheduler: Sendable {
    let client: PostgresClient
    let inbox: Inbox
    let logger: Logger
    /// Rows per transaction: what a crash mid-burst can roll back (and another replica then sends).
    let batch: Int
    let maxLateness: TimeInterval

    /// Handles everything due at `now`; returns how many were looked at.
    @discardableResult
    func sendDue(now: Date) async throws -> Int {
        try await sendDueReminders(now: now) + sendDueScheduled(now: now)
    }

    private func sendDueScheduled(now: Date) async throws -> Int {
        var handled = 0
        while true {
            let count = try await client.transaction(logger: logger) { connection in
                let scheduled = ScheduledNotifications(connection: connection, logger: logger)
                let store = RecipientStore(connection: connection, logger: logger)
                let due = try await scheduled.due(at: now, limit: batch)
                for notification in due {
                    try await send(notification, now: now, store: store, scheduled: scheduled, connection: connection)
                }
                return due.count
            }
            handled += count
            if count < batch { return handled }
        }
    }

    private func send(
        _ notification: ScheduledNotification, now: Date, store: RecipientStore, scheduled: ScheduledNotifications, connection: PostgresConnection
    ) async throws {
        guard let recipient = try await store.recipient(notification.userID), recipient.wants(notification.kind) else {
            try await scheduled.remove(notification)
            return
        }
        let day = notification.onDate
        if notification.kind == .habitReminder {
            try await sendHabitReminder(notification, to: recipient, now: now, store: store, scheduled: scheduled, connection: connection)
            return
        }
        if notification.kind == .weeklyDigest {
            try await scheduled.scheduleDigest(for: recipient, after: max(now, notification.fireAt))
        }
        let activeThatDay = recipient.lastCheckIn.map { $0 >= day } == true
        let onVacation = try await store.isOnVacation(recipient.userID, on: day)
        if notification.kind != .weeklyDigest, activeThatDay || onVacation {
            try await scheduled.remove(notification)
            return
        }
        switch delivery(notification.kind, dueAt: notification.fireAt, on: day, now: now, to: recipient) {
        case .now:
            if let message = try await message(for: notification, to: recipient, store: store) {
                try await inbox.deliver(message, kind: notification.kind, key: notification.key, to: recipient.userID, at: now, connection: connection, logger: logger)
            }
            try await scheduled.remove(notification)
        case .deferred(let until):
            try await scheduled.postpone(notification, until: until)
        case .dropped:
            try await scheduled.remove(notification)
        }
    }

    /// A habit's reminder for its day: skipped if that habit already has a check-in that day or the user is on
    /// vacation, timed out of quiet hours while the day lasts; whatever comes of it, the next day's is scheduled (none
    /// once the attempt ended or the habit has no reminder time any more).
    private func sendHabitReminder(
        _ notification: ScheduledNotification, to recipient: Recipient, now: Date, store: RecipientStore, scheduled: ScheduledNotifications,
        connection: PostgresConnection
    ) async throws {
        let habits = HabitReminders(connection: connection, logger: logger)
        guard let attemptID = notification.attemptID, let attempt = try await habits.attempt(attemptID), let time = attempt.reminderTime else {
            try await scheduled.remove(notification)
            return
        }
        let calendar = recipient.calendar
        let day = notification.onDate
        if HabitReminder.isDue(on: day, lastCheckIn: attempt.lastCheckIn), try await !store.isOnVacation(recipient.userID, on: day) {
            switch delivery(.habitReminder, dueAt: notification.fireAt, on: day, now: now, to: recipient) {
            case .now:
                try await inbox.deliver(
                    .habitReminder(recipient.language, habit: attempt.name, attemptID: attemptID), kind: .habitReminder, key: notification.key,
                    to: recipient.userID, at: now, connection: connection, logger: logger)
            case .deferred(let until):
                try await scheduled.postpone(notification, until: until)
                return
            case .dropped:
                break
            }
        }
        try await scheduled.remove(notification)
        try await habits.schedule(attemptID, of: recipient.userID, at: time, after: max(now, notification.fireAt), in: calendar)
    }

    private func message(for notification: ScheduledNotification, to recipient: Recipient, store: RecipientStore) async throws -> Message? {
        switch notification.kind {
        case .streakAtRisk:
            return notification.attemptID.map { .streakAtRisk(recipient.language, attemptID: $0) }
        case .weeklyDigest:
            let completed = try await store.completedDays(recipient.userID, from: notification.onDate.adding(days: -7), through: notification.onDate.adding(days: -1))
            return .weeklyDigest(recipient.language, completedDays: completed)
        case .reEngagement:
            return .reEngagement(recipient.language)
        case .dailyReminder, .badgeEarned, .friendRequest, .challengeInvitation, .overtaken, .streakMilestone, .closeToGoal, .choreDue, .habitReminder:
            return nil
        }
    }

    private func sendDueReminders(now: Date) async throws -> Int {
        var handled = 0
        while true {
            let count = try await client.transaction(logger: logger) { connection in
                let due = try await connection.query(
                    """
                    SELECT user_id, fire_at FROM reminders WHERE fire_at <= \(now) ORDER BY fire_at LIMIT \(batch) FOR UPDATE SKIP LOCKED
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
            if count < batch { return handled }
        }
    }

    private func send(_ recipient: Recipient, scheduledFor fireAt: Date, now: Date, store: RecipientStore, connection: PostgresConnection) async throws {
        let calendar = recipient.calendar
        let day = calendar.date(at: fireAt)
        if recipient.lastCheckIn.map({ $0 >= day }) != true, try await !store.isOnVacation(recipient.userID, on: day) {
            switch delivery(.dailyReminder, dueAt: fireAt, on: day, now: now, to: recipient) {
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

    /// Sent now, timed out of quiet hours or dropped: dropped (and counted) when looked at too late, after its day or,
    /// for a reminder at a time of day the user chose, beyond `maxLateness` of that time; or when quiet hours outlast
    /// its day. The nudges and the digest keep their whole day: they may be made after their time (a day judged late).
    private func delivery(_ kind: NotificationKind, dueAt: Date, on day: LocalDate, now: Date, to recipient: Recipient) -> Delivery {
        let calendar = recipient.calendar
        let endOfDay = calendar.end(of: day)
        let timed = kind == .dailyReminder || kind == .habitReminder
        if now >= endOfDay || (timed && ReminderLateness.isTooLate(dueAt: dueAt, now: now, bound: maxLateness)) {
            ReminderMetrics.dropped(kind, .late)
            return .dropped
        }
        let delivery = DeliveryRule.decide(at: now, quiet: recipient.quiet, usefulUntil: endOfDay, in: calendar)
        if delivery == .dropped { ReminderMetrics.dropped(kind, .quietHours) }
        return delivery
    }
}

/// `surge_reminders_dropped_total{kind, reason}`: scheduled notifications not sent because they came due too late to
/// be useful (`late`) or quiet hours outlasted their day (`quiet-hours`).
enum ReminderMetrics {
    enum Reason: String {
        case late
        case quietHours = "quiet-hours"
    }

    static func dropped(_ kind: NotificationKind, _ reason: Reason) {
        Counter(label: "surge_reminders_dropped_total", dimensions: [("kind", kind.rawValue), ("reason", reason.rawValue)]).increment()
    }
}
