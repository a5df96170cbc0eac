import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgePostgres

/// Who gets notified, in which zone and language, with which preferences; and their next daily reminder.
struct Recipient: Sendable {
    var userID: UUID
    var displayName: String
    var timeZone: String
    var locale: String?
    /// The global switch.
    var enabled: Bool
    /// The explicit daily reminder time.
    var reminderTime: LocalTime?
    var quiet: QuietPeriod?
    var lastCheckIn: LocalDate?
    /// From the user's completion times (`PersonalisedTime`).
    var personalisedTime: LocalTime?
    /// The per-kind switches that are off (identity's preferences).
    var disabledCategories: [NotificationCategory] = []

    /// Whether the user hears of `kind` beyond the inbox: the global switch and the kind's own are on.
    func wants(_ kind: NotificationKind) -> Bool { enabled && !disabledCategories.contains(kind.category) }

    static let defaultReminderTime = LocalTime(hour: 9, minute: 0)!

    /// The explicit time wins, then the personalised one, then 09:00 (001 NOTIF-03).
    var dailyTime: LocalTime { reminderTime ?? personalisedTime ?? Self.defaultReminderTime }

    var calendar: LocalCalendar { LocalCalendar(zoneNamedOrUTC: timeZone) }
    var language: Message.Language { Message.Language(locale: locale) }

    /// The next daily reminder strictly after `instant`, or none while notifications or reminders are off.
    func nextDailyReminder(after instant: Date, in calendar: LocalCalendar) -> Date? {
        wants(.dailyReminder) ? ReminderTime.next(dailyTime, after: instant, in: calendar) : nil
    }
}

/// A user's local day.
struct UserDay: Hashable, Sendable {
    var userID: UUID
    var date: LocalDate
}

struct RecipientStore {
    let connection: PostgresConnection
    let logger: Logger

    func isErased(_ userID: UUID) async throws -> Bool {
        try await connection.query("SELECT 1 FROM erased_users WHERE user_id = \(userID)", logger: logger).collect().isEmpty == false
    }

    func recipient(_ userID: UUID) async throws -> Recipient? {
        try await recipients([userID])[userID]
    }

    /// The known ones among `userIDs`, in one query.
    func recipients(_ userIDs: [UUID]) async throws -> [UUID: Recipient] {
        try await decode(connection.query("SELECT \(unescaped: Self.columns) FROM recipients WHERE user_id = ANY(\(userIDs))", logger: logger))
    }

    /// A check-in of `date` noted in one statement: the user's and the habit attempt's latest check-in day move to it
    /// when it is later. Returns the recipient as it was before, with the keys of their pending re-engagement nudges
    /// (as `recipientOnceKnown` does: nil for an erased user, `DirectoryLag` for one not known yet, which rolls the
    /// notes back with the transaction).
    func noteCheckIn(_ userID: UUID, attemptID: UUID, on date: LocalDate) async throws -> (recipient: Recipient, pendingNudges: [String])? {
        let rows = try await connection.query(
            """
            WITH noted AS (
                UPDATE recipients SET last_check_in = \(date) WHERE user_id = \(userID) AND (last_check_in IS NULL OR last_check_in < \(date))
            ), habit AS (
                UPDATE habit_attempts SET last_check_in = \(date)
                WHERE attempt_id = \(attemptID) AND (last_check_in IS NULL OR last_check_in < \(date))
            )
            SELECT \(unescaped: Self.columns),
                   ARRAY(SELECT key FROM scheduled_notifications s
                         WHERE s.user_id = recipients.user_id AND s.kind = \(NotificationKind.reEngagement.rawValue))
            FROM recipients WHERE user_id = \(userID)
            """, logger: logger)
        for try await (userID, name, zone, locale, enabled, reminder, quietStart, quietEnd, lastCheckIn, personalised, disabled, nudges) in rows.decode(
            (UUID, String, String, String?, Bool, String?, String?, String?, LocalDate?, String?, [String], [String]).self)
        {
            let recipient = Self.recipient(userID, name, zone, locale, enabled, reminder, quietStart, quietEnd, lastCheckIn, personalised, disabled)
            return (recipient, nudges)
        }
        if try await isErased(userID) { return nil }
        throw DirectoryLag(userID: userID)
    }

    private static let columns = """
        user_id, display_name, time_zone, locale, enabled, reminder_time, quiet_start, quiet_end, last_check_in, personalised_time,
        disabled_categories
        """

    private func decode(_ rows: PostgresRowSequence) async throws -> [UUID: Recipient] {
        var recipients: [UUID: Recipient] = [:]
        for try await (userID, name, zone, locale, enabled, reminder, quietStart, quietEnd, lastCheckIn, personalised, disabled) in rows.decode(
            (UUID, String, String, String?, Bool, String?, String?, String?, LocalDate?, String?, [String]).self)
        {
            recipients[userID] = Self.recipient(userID, name, zone, locale, enabled, reminder, quietStart, quietEnd, lastCheckIn, personalised, disabled)
        }
        return recipients
    }

    /// A recipient from `columns`, in their order.
    private static func recipient(
        _ userID: UUID, _ name: String, _ zone: String, _ locale: String?, _ enabled: Bool, _ reminder: String?, _ quietStart: String?,
        _ quietEnd: String?, _ lastCheckIn: LocalDate?, _ personalised: String?, _ disabled: [String]
    ) -> Recipient {
        let quiet = quietStart.flatMap(LocalTime.init).flatMap { start in quietEnd.flatMap(LocalTime.init).map { QuietPeriod(start: start, end: $0) } }
        return Recipient(
            userID: userID, displayName: name, timeZone: zone, locale: locale, enabled: enabled, reminderTime: reminder.flatMap(LocalTime.init),
            quiet: quiet, lastCheckIn: lastCheckIn, personalisedTime: personalised.flatMap(LocalTime.init),
            disabledCategories: disabled.compactMap(NotificationCategory.init))
    }

    /// The recipient; nil for an erased user. A user whose registration (on another partition) has not been handled
    /// yet is waited for: `DirectoryLag` parks the event until it has, rather than its effect being lost.
    func recipientOnceKnown(_ userID: UUID) async throws -> Recipient? {
        if let recipient = try await recipient(userID) { return recipient }
        if try await isErased(userID) { return nil }
        throw DirectoryLag(userID: userID)
    }

    /// Saves the recipient and reschedules their daily reminder from `now` (none while notifications or reminders are off).
    func save(_ recipient: Recipient, now: Date) async throws {
        guard try await !isErased(recipient.userID) else { return }
        // Overtaken notifications gathered before this change are told as things stood.
        try await BeforeCommit.writeGathered(RankChanged.self, on: connection, logger: logger)
        try await connection.query(
            """
            INSERT INTO recipients (user_id, display_name, time_zone, locale, enabled, reminder_time, quiet_start, quiet_end, last_check_in,
                                    personalised_time, disabled_categories)
            VALUES (\(recipient.userID), \(recipient.displayName), \(recipient.timeZone), \(recipient.locale), \(recipient.enabled),
                    \(recipient.reminderTime?.description), \(recipient.quiet?.start.description), \(recipient.quiet?.end.description),
                    \(recipient.lastCheckIn), \(recipient.personalisedTime?.description), \(recipient.disabledCategories.map(\.rawValue)))
            ON CONFLICT (user_id) DO UPDATE SET display_name = EXCLUDED.display_name, time_zone = EXCLUDED.time_zone, locale = EXCLUDED.locale,
                enabled = EXCLUDED.enabled, reminder_time = EXCLUDED.reminder_time, quiet_start = EXCLUDED.quiet_start,
                quiet_end = EXCLUDED.quiet_end, last_check_in = EXCLUDED.last_check_in, personalised_time = EXCLUDED.personalised_time,
                disabled_categories = EXCLUDED.disabled_categories
            """, logger: logger)
        try await schedule(recipient, after: now)
        try await ScheduledNotifications(connection: connection, logger: logger).reschedule(recipient, now: now)
    }

    /// The next daily reminder strictly after `instant`, or none while notifications or reminders are off.
    func schedule(_ recipient: Recipient, after instant: Date) async throws {
        let reminders = DailyReminders(connection: connection, logger: logger)
        if let fireAt = recipient.nextDailyReminder(after: instant, in: recipient.calendar) {
            try await reminders.move([(recipient.userID, fireAt)])
        } else {
            try await reminders.remove([recipient.userID])
        }
    }

    /// Records the minute of the day's first completion; returns the last `PersonalisedTime.window` days' minutes.
    func noteCompletion(_ userID: UUID, on date: LocalDate, minute: Int) async throws -> [Int] {
        try await connection.query(
            """
            INSERT INTO completion_times (user_id, local_date, minute) VALUES (\(userID), \(date), \(minute))
            ON CONFLICT (user_id, local_date) DO NOTHING
            """, logger: logger)
        let oldest = date.adding(days: -(PersonalisedTime.window - 1))
        try await connection.query("DELETE FROM completion_times WHERE user_id = \(userID) AND local_date < \(oldest)", logger: logger)
        return try await connection.query("SELECT minute FROM completion_times WHERE user_id = \(userID)", logger: logger)
            .collect().map { try $0.decode(Int.self) }
    }

    /// How many of the days `first`...`last` had a completion, for each range in the order given, in one query.
    func completedDays(_ ranges: [(userID: UUID, first: LocalDate, last: LocalDate)]) async throws -> [Int] {
        guard !ranges.isEmpty else { return [] }
        var counts = [Int](repeating: 0, count: ranges.count)
        let rows = try await connection.query(
            """
            SELECT r.ordinal, count(c.local_date)
            FROM unnest(\(ranges.map(\.userID)), \(ranges.map(\.first)), \(ranges.map(\.last))) WITH ORDINALITY AS r (user_id, first, last, ordinal)
            LEFT JOIN completion_times c ON c.user_id = r.user_id AND c.local_date BETWEEN r.first AND r.last
            GROUP BY r.ordinal
            """, logger: logger)
        for try await (ordinal, count) in rows.decode((Int, Int).self) { counts[ordinal - 1] = count }
        return counts
    }

    /// The attempt's run of missed days so far (`StreakRisk`).
    func misses(of attemptID: UUID) async throws -> Int {
        try await connection.query("SELECT consecutive FROM attempt_misses WHERE attempt_id = \(attemptID)", logger: logger)
            .collect().first?.decode(Int.self) ?? 0
    }

    func setMisses(_ consecutive: Int, of attemptID: UUID, userID: UUID) async throws {
        try await connection.query(
            """
            INSERT INTO attempt_misses (attempt_id, user_id, consecutive) VALUES (\(attemptID), \(userID), \(consecutive))
            ON CONFLICT (attempt_id) DO UPDATE SET consecutive = EXCLUDED.consecutive
            """, logger: logger)
    }

    func forgetAttempt(_ attemptID: UUID) async throws {
        try await connection.query("DELETE FROM attempt_misses WHERE attempt_id = \(attemptID)", logger: logger)
        try await connection.query("DELETE FROM scheduled_notifications WHERE attempt_id = \(attemptID)", logger: logger)
    }

    /// One attempt's share of a vacation (progress's `AttemptPaused` of kind vacation): days the daily reminder is silent.
    func noteVacation(_ pauseID: UUID, of userID: UUID, from first: LocalDate, through last: LocalDate?) async throws {
        guard try await !isErased(userID) else { return }
        try await connection.query(
            """
            INSERT INTO vacations (pause_id, user_id, from_date, through_date) VALUES (\(pauseID), \(userID), \(first), \(last))
            ON CONFLICT (pause_id) DO NOTHING
            """, logger: logger)
    }

    /// A vacation resumed early: it now ends on `last`, or never began.
    func shortenVacation(_ pauseID: UUID, through last: LocalDate?) async throws {
        if let last {
            try await connection.query("UPDATE vacations SET through_date = \(last) WHERE pause_id = \(pauseID)", logger: logger)
        } else {
            try await connection.query("DELETE FROM vacations WHERE pause_id = \(pauseID)", logger: logger)
        }
    }

    /// Those of the users' days that fall in one of their vacations, in one query.
    func onVacation(_ days: [UserDay]) async throws -> Set<UserDay> {
        guard !days.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            SELECT DISTINCT d.user_id, d.on_date FROM unnest(\(days.map(\.userID)), \(days.map(\.date))) AS d (user_id, on_date)
            JOIN vacations v ON v.user_id = d.user_id AND v.from_date <= d.on_date AND (v.through_date IS NULL OR v.through_date >= d.on_date)
            """, logger: logger)
        var found = Set<UserDay>()
        for try await (userID, date) in rows.decode((UUID, LocalDate).self) { found.insert(UserDay(userID: userID, date: date)) }
        return found
    }

    func erase(_ userID: UUID) async throws {
        try await BeforeCommit.writeGathered(RankChanged.self, on: connection, logger: logger)
        try await connection.query("INSERT INTO erased_users (user_id) VALUES (\(userID)) ON CONFLICT DO NOTHING", logger: logger)
        for statement: PostgresQuery in [
            "DELETE FROM recipients WHERE user_id = \(userID)",
            "DELETE FROM reminders WHERE user_id = \(userID)",
            "DELETE FROM inbox WHERE user_id = \(userID)",
            "DELETE FROM vacations WHERE user_id = \(userID)",
            "DELETE FROM push_tokens WHERE user_id = \(userID)",
            "DELETE FROM scheduled_notifications WHERE user_id = \(userID)",
            "DELETE FROM attempt_misses WHERE user_id = \(userID)",
            "DELETE FROM completion_times WHERE user_id = \(userID)",
            "DELETE FROM habit_attempts WHERE user_id = \(userID)",
            "DELETE FROM webhook_subscriptions WHERE owner_id = \(userID)",
            "DELETE FROM webhook_deliveries WHERE user_id = \(userID)",
            "DELETE FROM group_members WHERE user_id = \(userID)",
        ] {
            try await connection.query(statement, logger: logger)
        }
    }
}
