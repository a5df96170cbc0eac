import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeCalendar
import SurgeContracts

/// Per-habit reminders (docs/notifications.md, *Habit reminders*): what notifications keeps of habits (challenges'
/// definitions: name and reminder time, latest version) and of each user's active habit attempts (progress's attempt
/// events), and the one pending `habit-reminder` row per attempt in `scheduled_notifications`.
struct HabitReminders {
    let connection: PostgresConnection
    let logger: Logger

    /// A habit's definition, kept only if it is newer than the one known (the challenges topic may redeliver).
    /// Returns whether it was kept.
    @discardableResult
    func noteDefinition(_ definition: ChallengeDefinition) async throws -> Bool {
        guard definition.kind == .habit else { return false }
        try await lock(definition.challengeID)
        let rows = try await connection.query(
            """
            INSERT INTO habit_definitions (challenge_id, version, name, reminder_time)
            VALUES (\(definition.challengeID), \(definition.version), \(definition.name), \(definition.habit?.reminderTime?.description))
            ON CONFLICT (challenge_id) DO UPDATE SET version = EXCLUDED.version, name = EXCLUDED.name, reminder_time = EXCLUDED.reminder_time
            WHERE habit_definitions.version < EXCLUDED.version
            RETURNING challenge_id
            """, logger: logger
        ).collect()
        return !rows.isEmpty
    }

    /// Held until the transaction ends. A habit's definition and an attempt at it arrive on two topics, applied
    /// concurrently: without it, each transaction would miss the other's uncommitted row (the attempt finds no reminder
    /// time, the definition no attempt) and no reminder would ever be scheduled.
    private func lock(_ challengeID: UUID) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(challengeID.uuidString), 21))", logger: logger)
    }

    func forgetDefinition(_ challengeID: UUID) async throws {
        try await connection.query("DELETE FROM habit_definitions WHERE challenge_id = \(challengeID)", logger: logger)
    }

    func noteAttempt(_ attemptID: UUID, of userID: UUID, challengeID: UUID) async throws {
        try await lock(challengeID)
        try await connection.query(
            """
            INSERT INTO habit_attempts (attempt_id, user_id, challenge_id) VALUES (\(attemptID), \(userID), \(challengeID))
            ON CONFLICT (attempt_id) DO NOTHING
            """, logger: logger)
    }

    func forgetAttempt(_ attemptID: UUID) async throws {
        try await connection.query("DELETE FROM habit_attempts WHERE attempt_id = \(attemptID)", logger: logger)
    }

    /// The users with an active attempt at this habit.
    func users(of challengeID: UUID) async throws -> [UUID] {
        try await connection.query(
            "SELECT DISTINCT user_id FROM habit_attempts WHERE challenge_id = \(challengeID)", logger: logger
        ).collect().map { try $0.decode(UUID.self) }
    }

    struct Attempt {
        var name: String
        var reminderTime: LocalTime?
        var lastCheckIn: LocalDate?
    }

    /// The active ones among `attemptIDs` with their habit's name and reminder time, in one query; an attempt that
    /// ended or whose habit is unknown is not among them.
    func attempts(_ attemptIDs: [UUID]) async throws -> [UUID: Attempt] {
        guard !attemptIDs.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT a.attempt_id, d.name, d.reminder_time, a.last_check_in FROM habit_attempts a JOIN habit_definitions d ON d.challenge_id = a.challenge_id
            WHERE a.attempt_id = ANY(\(attemptIDs))
            """, logger: logger)
        var attempts: [UUID: Attempt] = [:]
        for try await (attemptID, name, time, lastCheckIn) in rows.decode((UUID, String, String?, LocalDate?).self) {
            attempts[attemptID] = Attempt(name: name, reminderTime: time.flatMap(LocalTime.init), lastCheckIn: lastCheckIn)
        }
        return attempts
    }

    /// Follows a change of anything a user's habit reminders depend on (an attempt started, a habit's reminder time,
    /// the user's zone or switches): a pending reminder keeps its day and moves to the habit's (new) time in the
    /// (new) zone; an attempt with none gets the next one after `now`; a habit without a reminder time, or a user who
    /// switched reminders off, gets none.
    func reschedule(_ recipient: Recipient, now: Date) async throws {
        let kind = NotificationKind.habitReminder.rawValue
        guard recipient.wants(.habitReminder) else {
            try await connection.query(
                "DELETE FROM scheduled_notifications WHERE user_id = \(recipient.userID) AND kind = \(kind)", logger: logger)
            return
        }
        let rows = try await connection.query(
            """
            SELECT a.attempt_id, d.reminder_time, s.key, s.on_date
            FROM habit_attempts a
            LEFT JOIN habit_definitions d ON d.challenge_id = a.challenge_id
            LEFT JOIN scheduled_notifications s ON s.user_id = a.user_id AND s.attempt_id = a.attempt_id AND s.kind = \(kind)
            WHERE a.user_id = \(recipient.userID)
            """, logger: logger
        ).collect().map { try $0.decode((UUID, String?, String?, LocalDate?).self) }
        let calendar = recipient.calendar
        for (attemptID, reminderTime, pendingKey, pendingDate) in rows {
            guard let time = reminderTime.flatMap(LocalTime.init) else {
                try await connection.query(
                    "DELETE FROM scheduled_notifications WHERE user_id = \(recipient.userID) AND attempt_id = \(attemptID) AND kind = \(kind)",
                    logger: logger)
                continue
            }
            if let pendingKey, let pendingDate {
                // Moved to a moment already past: due now, not late.
                let fireAt = max(ReminderTime.instant(of: time, on: pendingDate, in: calendar), now)
                try await connection.query(
                    "UPDATE scheduled_notifications SET fire_at = \(fireAt) WHERE user_id = \(recipient.userID) AND key = \(pendingKey)",
                    logger: logger)
            } else {
                try await schedule(attemptID, of: recipient.userID, at: time, after: now, in: calendar)
            }
        }
    }

    /// The attempt's next reminder strictly after `instant`.
    func schedule(_ attemptID: UUID, of userID: UUID, at time: LocalTime, after instant: Date, in calendar: LocalCalendar) async throws {
        try await schedule([Next(attemptID: attemptID, userID: userID, time: time, after: instant, calendar: calendar)])
    }

    struct Next {
        var attemptID: UUID
        var userID: UUID
        var time: LocalTime
        var after: Date
        var calendar: LocalCalendar
    }

    /// Each attempt's next reminder strictly after its instant, in one statement (an attempt named twice gets one).
    func schedule(_ next: [Next]) async throws {
        var rows: [String: (userID: UUID, attemptID: UUID, date: LocalDate, fireAt: Date)] = [:]
        for reminder in next {
            let (date, fireAt) = HabitReminder.next(reminder.time, after: reminder.after, in: reminder.calendar)
            rows[HabitReminder.key(attemptID: reminder.attemptID, on: date)] = (reminder.userID, reminder.attemptID, date, fireAt)
        }
        guard !rows.isEmpty else { return }
        let keys = Array(rows.keys)
        let values = keys.map { rows[$0]! }
        try await connection.query(
            """
            INSERT INTO scheduled_notifications (user_id, key, kind, attempt_id, on_date, at_reminder_time, fire_at)
            SELECT user_id, key, \(NotificationKind.habitReminder.rawValue), attempt_id, on_date, false, fire_at
            FROM unnest(\(values.map(\.userID)), \(keys), \(values.map(\.attemptID)), \(values.map(\.date)), \(values.map(\.fireAt)))
                 AS new (user_id, key, attempt_id, on_date, fire_at)
            ORDER BY user_id
            ON CONFLICT (user_id, key) DO UPDATE SET fire_at = EXCLUDED.fire_at
            """, logger: logger)
    }
}
