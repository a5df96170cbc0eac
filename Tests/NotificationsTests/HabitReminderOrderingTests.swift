import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeTestSupport
import Synchronization
import Testing

@testable import NotificationsService

/// A habit's definition (challenges' topic) and an attempt at it (progress's topic) are applied by concurrent
/// transactions. Whichever commits second must see the first: the reminder is scheduled either way.
@Suite("Habit reminders: a definition and an attempt applied at the same time", .tags(.integration), .kind(.integration, needsDatabase: true))
struct HabitReminderOrderingTests {
    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!

    @Test("the attempt's transaction still open when the definition arrives: the definition waits for it, and today's reminder is pending")
    func definitionDuringAttempt() async throws {
        try await withNotificationsDatabase("habit-ordering") { database, logger in
        let userID = UUID(), attemptID = UUID(), challengeID = UUID()
        let day = LocalDate("2026-03-10")!
        let now = Self.rome.instant(of: LocalTime("06:00")!, on: day)
        let recipient = Recipient(userID: userID, displayName: "Ana", timeZone: "Europe/Rome", locale: "en", enabled: true)
        try await database.transaction(logger: logger) { connection in
            try await RecipientStore(connection: connection, logger: logger).save(recipient, now: now)
        }
        let definition = ChallengeDefinition(
            challengeID: challengeID, version: 1, effectiveFrom: nil, kind: .habit, name: "Stretch", description: "", category: "health",
            difficulty: .beginner, visibility: .private, ownerID: userID, groupID: nil, durationDays: nil, estimatedDailyMinutes: nil,
            tasks: [ChallengeTask(taskID: "stretch", title: "Stretch", kind: .checkbox)], rules: ChallengeRules(failure: FailureRule(mode: .none)),
            habit: HabitDetails(colour: nil, notes: nil, priority: nil, reminderTime: LocalTime("07:30")))

        let attemptNoted = AsyncStream.makeStream(of: Void.self)
        let mayCommit = AsyncStream.makeStream(of: Void.self)
        async let attempt: Void = database.transaction(logger: logger) { connection in
            let habits = HabitReminders(connection: connection, logger: logger)
            try await habits.noteAttempt(attemptID, of: userID, challengeID: challengeID)
            try await habits.reschedule(recipient, now: now)
            attemptNoted.continuation.yield()
            for await _ in mayCommit.stream { break }
        }
        for await _ in attemptNoted.stream { break }
        let finished = Finished()
        let definitionApplied = Task {
            defer { finished.value.withLock { $0 = true } }
            try await database.transaction(logger: logger) { connection in
                try await ReminderHandlers.habitDefinition(definition, at: now, stores: NotificationStores(connection: connection, logger: logger))
            }
        }
        // The definition's transaction either finished (it did not wait) or waits for a lock: either way, the
        // attempt's may commit now and the outcome is decided.
        try await waitUntil("the definition applied or waiting for a lock") {
            let waiting = try await database.query(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'", logger: logger
            ).collect().first?.decode(Int.self) ?? 0
            return waiting > 0 || finished.value.withLock { $0 }
        }
        mayCommit.continuation.yield()
        try await attempt
        try await definitionApplied.value

        let pending = try await database.query(
            "SELECT key, fire_at FROM scheduled_notifications WHERE user_id = \(userID) AND kind = 'habit-reminder'", logger: logger
        ).collect().map { try $0.decode((String, Date).self) }
        #expect(pending.map(\.0) == [HabitReminder.key(attemptID: attemptID, on: day)])
        #expect(pending.map(\.1) == [Self.rome.instant(of: LocalTime("07:30")!, on: day)])
        }
    }
}

private final class Finished: Sendable {
    let value = Mutex(false)
}
