import Foundation
import Logging
import Metrics
import NotificationsDomain
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgePostgres

/// Sends the daily reminders and the one-off notifications (streak at risk, re-engagement, weekly digest, habit
/// reminders) that are due, a batch at a time: each batch claims up to `batch` due rows by the index on their fire
/// instant (`FOR UPDATE SKIP LOCKED`, so replicas share a wave and none is sent twice), reads what deciding them needs
/// in one query per table (recipients, vacations, habits, completed days), decides each in memory, and writes the
/// inbox rows, their events and pushes, the next firings and the removals in one statement each, in one transaction.
/// `lanes` batches run at once: while PostgreSQL writes one, the replica decides the next, so one replica keeps both
/// busy instead of waiting on each in turn.
/// Each is for its local day: a reminder or nudge is skipped if the user already checked in that day or is on
/// vacation; any is deferred to the end of quiet hours while the day lasts and dropped once the day is over (also
/// after downtime: nothing is sent for a day gone by). A daily or habit reminder looked at more than `maxLateness`
/// after its time (downtime, a clock jump) is dropped too.
struct ReminderScheduler: Sendable {
    let client: PostgresClient
    let inbox: Inbox
    let logger: Logger
    /// Rows per transaction: what a crash mid-wave can roll back (and another replica then sends).
    let batch: Int
    /// Batches in flight at once (each its own transaction and connection; `SKIP LOCKED` gives them disjoint rows).
    let lanes: Int
    let maxLateness: TimeInterval

    /// Handles everything due at `now`; returns how many were looked at.
    @discardableResult
    func sendDue(now: Date) async throws -> Int {
        try await inBatches { try await sendDueReminders(now: now, connection: $0) }
            + inBatches { try await sendDueScheduled(now: now, connection: $0) }
    }

    /// Runs `pass` in a transaction after another in each of the `lanes` until one handles fewer than a batch.
    private func inBatches(_ pass: @escaping @Sendable (PostgresConnection) async throws -> Int) async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<lanes {
                group.addTask {
                    var handled = 0
                    while true {
                        let count = try await client.transaction(logger: logger) { try await pass($0) }
                        handled += count
                        if count < batch { return handled }
                    }
                }
            }
            return try await group.reduce(0, +)
        }
    }

    /// One batch of due daily reminders: each sent (or skipped, deferred, dropped) and the user's next one set.
    private func sendDueReminders(now: Date, connection: PostgresConnection) async throws -> Int {
        let reminders = DailyReminders(connection: connection, logger: logger)
        let store = RecipientStore(connection: connection, logger: logger)
        let due = try await reminders.claimDue(at: now, limit: batch)
        guard !due.isEmpty else { return 0 }
        let recipients = try await store.recipients(due.map(\.userID))
        var calendars = Calendars()
        let days = due.compactMap { reminder in
            recipients[reminder.userID].map { UserDay(userID: reminder.userID, date: calendars[$0.timeZone].date(at: reminder.fireAt)) }
        }
        let onVacation = try await store.onVacation(days)
        var sent: [NewNotification] = []
        var next: [(userID: UUID, fireAt: Date)] = []
        var forgotten: [UUID] = []
        for (userID, fireAt) in due {
            guard let recipient = recipients[userID] else {
                forgotten.append(userID)
                continue
            }
            let calendar = calendars[recipient.timeZone]
            let day = calendar.date(at: fireAt)
            if recipient.lastCheckIn.map({ $0 >= day }) != true, !onVacation.contains(UserDay(userID: userID, date: day)) {
                switch delivery(.dailyReminder, dueAt: fireAt, on: day, now: now, to: recipient, in: calendar) {
                case .now:
                    sent.append(
                        NewNotification(userID: userID, kind: .dailyReminder, key: "daily-reminder:\(day)", message: .dailyReminder(recipient.language)))
                case .deferred(let until):
                    next.append((userID, until))
                    continue
                case .dropped:
                    break
                }
            }
            if let fireAt = recipient.nextDailyReminder(after: max(now, fireAt), in: calendar) {
                next.append((userID, fireAt))
            } else {
                forgotten.append(userID)
            }
        }
        ReminderMetrics.sent(try await inbox.deliver(sent, at: now, recipients: recipients, connection: connection, logger: logger))
        try await reminders.moveClaimed(next)
        try await reminders.remove(forgotten)
        return due.count
    }

    /// What one batch of scheduled notifications comes to, written in one statement each.
    private struct ScheduledOutcome {
        var sent: [NewNotification] = []
        var removed: [ScheduledNotification] = []
        var postponed: [(notification: ScheduledNotification, until: Date)] = []
        var digests: [(recipient: Recipient, after: Date)] = []
        var habitReminders: [HabitReminders.Next] = []
    }

    /// One batch of due one-off notifications.
    private func sendDueScheduled(now: Date, connection: PostgresConnection) async throws -> Int {
        let scheduled = ScheduledNotifications(connection: connection, logger: logger)
        let store = RecipientStore(connection: connection, logger: logger)
        let habits = HabitReminders(connection: connection, logger: logger)
        let due = try await scheduled.due(at: now, limit: batch)
        guard !due.isEmpty else { return 0 }
        let recipients = try await store.recipients(Array(Set(due.map(\.userID))))
        let wanted = due.filter { recipients[$0.userID]?.wants($0.kind) == true }
        let attempts = try await habits.attempts(wanted.filter { $0.kind == .habitReminder }.compactMap(\.attemptID))
        let onVacation = try await store.onVacation(
            wanted.filter { $0.kind != .weeklyDigest }.map { UserDay(userID: $0.userID, date: $0.onDate) })
        let digests = wanted.filter { $0.kind == .weeklyDigest }
        let completed = try await store.completedDays(digests.map { ($0.userID, $0.onDate.adding(days: -7), $0.onDate.adding(days: -1)) })
        var completedDays: [String: Int] = [:]
        for (digest, count) in zip(digests, completed) { completedDays["\(digest.userID) \(digest.key)"] = count }
        var outcome = ScheduledOutcome()
        var calendars = Calendars()
        for notification in due {
            guard let recipient = recipients[notification.userID], recipient.wants(notification.kind) else {
                outcome.removed.append(notification)
                continue
            }
            let calendar = calendars[recipient.timeZone]
            let onVacation = onVacation.contains(UserDay(userID: notification.userID, date: notification.onDate))
            switch notification.kind {
            case .habitReminder:
                decideHabitReminder(
                    notification, attempt: notification.attemptID.flatMap { attempts[$0] }, to: recipient, onVacation: onVacation, now: now, in: calendar,
                    into: &outcome)
            case .weeklyDigest:
                let message = Message.weeklyDigest(recipient.language, completedDays: completedDays["\(notification.userID) \(notification.key)"] ?? 0)
                decide(notification, message: message, to: recipient, now: now, in: calendar, into: &outcome)
            default:
                let activeThatDay = recipient.lastCheckIn.map { $0 >= notification.onDate } == true
                if activeThatDay || onVacation {
                    outcome.removed.append(notification)
                } else {
                    decide(notification, message: message(for: notification, to: recipient), to: recipient, now: now, in: calendar, into: &outcome)
                }
            }
        }
        ReminderMetrics.sent(try await inbox.deliver(outcome.sent, at: now, recipients: recipients, connection: connection, logger: logger))
        try await scheduled.remove(outcome.removed)
        try await scheduled.postpone(outcome.postponed)
        try await scheduled.scheduleDigests(outcome.digests)
        try await habits.schedule(outcome.habitReminders)
        return due.count
    }

    /// Sent now, postponed out of quiet hours, or dropped. A digest sent or dropped makes way for the next Sunday's; one
    /// postponed stays the user's pending digest until it is sent.
    private func decide(
        _ notification: ScheduledNotification, message: Message?, to recipient: Recipient, now: Date, in calendar: LocalCalendar,
        into outcome: inout ScheduledOutcome
    ) {
        switch delivery(notification.kind, dueAt: notification.fireAt, on: notification.onDate, now: now, to: recipient, in: calendar) {
        case .now:
            if let message {
                outcome.sent.append(NewNotification(userID: recipient.userID, kind: notification.kind, key: notification.key, message: message))
            }
        case .deferred(let until):
            outcome.postponed.append((notification, until))
            return
        case .dropped:
            break
        }
        outcome.removed.append(notification)
        if notification.kind == .weeklyDigest { outcome.digests.append((recipient, max(now, notification.fireAt))) }
    }

    /// A habit's reminder for its day: skipped if that habit already has a check-in that day or the user is on
    /// vacation, timed out of quiet hours while the day lasts; whatever comes of it, the next day's is scheduled (none
    /// once the attempt ended or the habit has no reminder time any more).
    private func decideHabitReminder(
        _ notification: ScheduledNotification, attempt: HabitReminders.Attempt?, to recipient: Recipient, onVacation: Bool, now: Date,
        in calendar: LocalCalendar, into outcome: inout ScheduledOutcome
    ) {
        guard let attemptID = notification.attemptID, let attempt, let time = attempt.reminderTime else {
            outcome.removed.append(notification)
            return
        }
        let day = notification.onDate
        if HabitReminder.isDue(on: day, lastCheckIn: attempt.lastCheckIn), !onVacation {
            switch delivery(.habitReminder, dueAt: notification.fireAt, on: day, now: now, to: recipient, in: calendar) {
            case .now:
                outcome.sent.append(
                    NewNotification(
                        userID: recipient.userID, kind: .habitReminder, key: notification.key,
                        message: .habitReminder(recipient.language, habit: attempt.name, attemptID: attemptID)))
            case .deferred(let until):
                outcome.postponed.append((notification, until))
                return
            case .dropped:
                break
            }
        }
        outcome.removed.append(notification)
        outcome.habitReminders.append(
            HabitReminders.Next(attemptID: attemptID, userID: recipient.userID, time: time, after: max(now, notification.fireAt), calendar: calendar))
    }

    private func message(for notification: ScheduledNotification, to recipient: Recipient) -> Message? {
        switch notification.kind {
        case .streakAtRisk:
            return notification.attemptID.map { .streakAtRisk(recipient.language, attemptID: $0) }
        case .reEngagement:
            return .reEngagement(recipient.language)
        case .dailyReminder, .badgeEarned, .friendRequest, .challengeInvitation, .overtaken, .streakMilestone, .closeToGoal, .choreDue, .habitReminder,
            .weeklyDigest:
            return nil
        }
    }

    /// Sent now, timed out of quiet hours or dropped: dropped (and counted) when looked at too late, after its day or,
    /// for a reminder at a time of day the user chose, beyond `maxLateness` of that time; or when quiet hours outlast
    /// its day. The nudges and the digest keep their whole day: they may be made after their time (a day judged late).
    private func delivery(_ kind: NotificationKind, dueAt: Date, on day: LocalDate, now: Date, to recipient: Recipient, in calendar: LocalCalendar) -> Delivery {
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

/// The calendars of the zones a batch meets, each built once.
private struct Calendars {
    private var byZone: [String: LocalCalendar] = [:]

    subscript(zone: String) -> LocalCalendar {
        mutating get {
            if let calendar = byZone[zone] { return calendar }
            let calendar = LocalCalendar(zoneNamedOrUTC: zone)
            byZone[zone] = calendar
            return calendar
        }
    }
}

/// `surge_reminders_sent_total{kind}`: reminders and scheduled notifications this replica wrote to the inbox (counted
/// once their batch commits). `surge_reminders_dropped_total{kind, reason}`: those not sent because they came due too
/// late to be useful (`late`) or quiet hours outlasted their day (`quiet-hours`).
enum ReminderMetrics {
    enum Reason: String {
        case late
        case quietHours = "quiet-hours"
    }

    static func sent(_ notifications: [NewNotification]) {
        let counts = Dictionary(notifications.map { ($0.kind, 1) }, uniquingKeysWith: +)
        guard !counts.isEmpty else { return }
        AfterCommit.current?.add {
            for (kind, count) in counts { Counter(label: "surge_reminders_sent_total", dimensions: [("kind", kind.rawValue)]).increment(by: count) }
        }
    }

    static func dropped(_ kind: NotificationKind, _ reason: Reason) {
        Counter(label: "surge_reminders_dropped_total", dimensions: [("kind", kind.rawValue), ("reason", reason.rawValue)]).increment()
    }
}
