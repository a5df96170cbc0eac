import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeCalendar
import SurgeContracts

/// A one-off notification due at a local time: a streak at risk and a re-engagement nudge at the user's daily time, the
/// weekly digest on Sunday at 08:00. It is for its local day (`onDate`) and useful until that day ends. Its key is the
/// inbox's too, so it is sent at most once.
struct ScheduledNotification: Sendable {
    var userID: UUID
    var key: String
    var kind: NotificationKind
    var attemptID: UUID?
    var onDate: LocalDate
    var fireAt: Date
}

struct ScheduledNotifications {
    let connection: PostgresConnection
    let logger: Logger

    /// Schedules `kind` for `date`, at the recipient's daily time (or the digest's time); nothing while notifications
    /// or the kind's category are off. Scheduling the same key again only moves it.
    func schedule(_ kind: NotificationKind, key: String, for recipient: Recipient, on date: LocalDate, attemptID: UUID? = nil) async throws {
        guard recipient.wants(kind) else { return }
        let (atDailyTime, fireAt) = Self.time(of: kind, for: recipient, on: date)
        try await connection.query(
            """
            INSERT INTO scheduled_notifications (user_id, key, kind, attempt_id, on_date, at_reminder_time, fire_at)
            VALUES (\(recipient.userID), \(key), \(kind.rawValue), \(attemptID), \(date), \(atDailyTime), \(fireAt))
            ON CONFLICT (user_id, key) DO UPDATE SET fire_at = EXCLUDED.fire_at
            """, logger: logger)
    }

    /// Makes `key` the user's one pending notification of `kind`, in one statement: the others of the kind are dropped,
    /// and the same key at the same time is left as it is, so a second check-in of the day writes nothing. Nothing of
    /// the kind stays while notifications or its category are off.
    func replace(_ kind: NotificationKind, key: String, for recipient: Recipient, on date: LocalDate) async throws {
        guard recipient.wants(kind) else { return try await cancel(kind, of: recipient.userID) }
        let (atDailyTime, fireAt) = Self.time(of: kind, for: recipient, on: date)
        try await connection.query(
            """
            WITH others AS (
                DELETE FROM scheduled_notifications WHERE user_id = \(recipient.userID) AND kind = \(kind.rawValue) AND key <> \(key)
            )
            INSERT INTO scheduled_notifications (user_id, key, kind, on_date, at_reminder_time, fire_at)
            VALUES (\(recipient.userID), \(key), \(kind.rawValue), \(date), \(atDailyTime), \(fireAt))
            ON CONFLICT (user_id, key) DO UPDATE SET fire_at = EXCLUDED.fire_at WHERE scheduled_notifications.fire_at <> EXCLUDED.fire_at
            """, logger: logger)
    }

    /// Whether the kind fires at the recipient's daily time, and when on `date`.
    private static func time(of kind: NotificationKind, for recipient: Recipient, on date: LocalDate) -> (atDailyTime: Bool, fireAt: Date) {
        let atDailyTime = kind != .weeklyDigest
        let time = atDailyTime ? recipient.dailyTime : WeeklyDigest.time
        return (atDailyTime, ReminderTime.instant(of: time, on: date, in: recipient.calendar))
    }

    func cancel(_ kind: NotificationKind, of userID: UUID) async throws {
        try await connection.query(
            "DELETE FROM scheduled_notifications WHERE user_id = \(userID) AND kind = \(kind.rawValue)", logger: logger)
    }

    /// Follows a change of zone, daily time or switch: what is due at the daily time moves to the new one; the weekly
    /// digest goes to the next Sunday 08:00 in the (new) zone; nothing stays while notifications are off, nothing of a
    /// kind whose category is off.
    func reschedule(_ recipient: Recipient, now: Date) async throws {
        guard recipient.enabled else {
            try await connection.query("DELETE FROM scheduled_notifications WHERE user_id = \(recipient.userID)", logger: logger)
            return
        }
        let switchedOff = NotificationKind.switchedOff(by: recipient.disabledCategories).map(\.rawValue)
        try await connection.query(
            "DELETE FROM scheduled_notifications WHERE user_id = \(recipient.userID) AND kind = ANY(\(switchedOff))", logger: logger)
        let pending = try await connection.query(
            "SELECT key, on_date FROM scheduled_notifications WHERE user_id = \(recipient.userID) AND at_reminder_time", logger: logger
        ).collect().map { try $0.decode((String, LocalDate).self) }
        for (key, date) in pending {
            let fireAt = ReminderTime.instant(of: recipient.dailyTime, on: date, in: recipient.calendar)
            try await connection.query(
                "UPDATE scheduled_notifications SET fire_at = \(fireAt) WHERE user_id = \(recipient.userID) AND key = \(key)", logger: logger)
        }
        // A digest already due is the scheduler's to send (it then schedules the next): a change made after its time
        // (a check-in that moves the daily time on a Sunday evening, while the scheduler is behind) must not drop it.
        let digestDue = try await connection.query(
            """
            SELECT 1 FROM scheduled_notifications
            WHERE user_id = \(recipient.userID) AND kind = \(NotificationKind.weeklyDigest.rawValue) AND fire_at <= \(now)
            """, logger: logger
        ).collect().isEmpty == false
        if !digestDue { try await scheduleDigest(for: recipient, after: now) }
        try await HabitReminders(connection: connection, logger: logger).reschedule(recipient, now: now)
    }

    /// The next weekly digest after `instant`, replacing any pending one.
    func scheduleDigest(for recipient: Recipient, after instant: Date) async throws {
        guard recipient.wants(.weeklyDigest) else { return try await cancel(.weeklyDigest, of: recipient.userID) }
        try await scheduleDigests([(recipient, instant)])
    }

    /// Each recipient's next weekly digest after its instant, replacing their pending one, in one statement. Each
    /// recipient must want the digest; one named twice gets the later of the two.
    func scheduleDigests(_ next: [(recipient: Recipient, after: Date)]) async throws {
        var digests: [UUID: (key: String, date: LocalDate, fireAt: Date)] = [:]
        for (recipient, instant) in next {
            let calendar = recipient.calendar
            let fireAt = WeeklyDigest.next(after: instant, in: calendar)
            let sunday = calendar.date(at: fireAt)
            if let known = digests[recipient.userID], known.fireAt >= fireAt { continue }
            digests[recipient.userID] = ("weekly-digest:\(sunday)", sunday, fireAt)
        }
        guard !digests.isEmpty else { return }
        let users = Array(digests.keys)
        let rows = users.map { digests[$0]! }
        try await connection.query(
            """
            WITH new AS (
                SELECT * FROM unnest(\(users), \(rows.map(\.key)), \(rows.map(\.date)), \(rows.map(\.fireAt))) AS new (user_id, key, on_date, fire_at)
            ), others AS (
                DELETE FROM scheduled_notifications s USING new
                WHERE s.user_id = new.user_id AND s.kind = \(NotificationKind.weeklyDigest.rawValue) AND s.key <> new.key
            )
            INSERT INTO scheduled_notifications (user_id, key, kind, on_date, at_reminder_time, fire_at)
            SELECT user_id, key, \(NotificationKind.weeklyDigest.rawValue), on_date, false, fire_at FROM new ORDER BY user_id
            ON CONFLICT (user_id, key) DO UPDATE SET fire_at = EXCLUDED.fire_at WHERE scheduled_notifications.fire_at <> EXCLUDED.fire_at
            """, logger: logger)
    }

    /// Those due at `now`, oldest first, locked for this transaction (other replicas skip them).
    func due(at now: Date, limit: Int) async throws -> [ScheduledNotification] {
        try await connection.query(
            """
            SELECT user_id, key, kind, attempt_id, on_date, fire_at FROM scheduled_notifications
            WHERE fire_at <= \(now) ORDER BY fire_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
            """, logger: logger
        ).collect().compactMap { row in
            let (userID, key, kind, attemptID, date, fireAt) = try row.decode((UUID, String, String, UUID?, LocalDate, Date).self)
            return NotificationKind(rawValue: kind).map {
                ScheduledNotification(userID: userID, key: key, kind: $0, attemptID: attemptID, onDate: date, fireAt: fireAt)
            }
        }
    }

    /// Deletes them, in one statement.
    func remove(_ notifications: [ScheduledNotification]) async throws {
        guard !notifications.isEmpty else { return }
        try await connection.query(
            """
            DELETE FROM scheduled_notifications s USING unnest(\(notifications.map(\.userID)), \(notifications.map(\.key))) AS gone (user_id, key)
            WHERE s.user_id = gone.user_id AND s.key = gone.key
            """, logger: logger)
    }

    /// Moves each to its instant, in one statement.
    func postpone(_ moves: [(notification: ScheduledNotification, until: Date)]) async throws {
        guard !moves.isEmpty else { return }
        try await connection.query(
            """
            UPDATE scheduled_notifications s SET fire_at = moved.fire_at
            FROM unnest(\(moves.map(\.notification.userID)), \(moves.map(\.notification.key)), \(moves.map(\.until))) AS moved (user_id, key, fire_at)
            WHERE s.user_id = moved.user_id AND s.key = moved.key
            """, logger: logger)
    }
}
