import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeTestSupport
import Testing

@testable import NotificationsService

@Suite("Notifications: one pending notification of a kind", .tags(.integration), .kind(.integration, needsDatabase: true))
struct ScheduledNotificationsTests {
    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!

    @Test("replacing with the same key writes nothing, a new key drops the old one of its kind (not other kinds), a category switched off drops it")
    func replace() async throws {
        try await withNotificationsDatabase("scheduled") { database, logger in
        var recipient = Recipient(userID: UUID(), displayName: "Ana", timeZone: "Europe/Rome", locale: "en", enabled: true)
        let day = LocalDate("2026-03-10")!
        func pending() async throws -> [(key: String, kind: String, fireAt: Date, version: String)] {
            try await database.query(
                "SELECT key, kind, fire_at, xmin::text FROM scheduled_notifications WHERE user_id = \(recipient.userID) ORDER BY key",
                logger: logger
            ).collect().map { try $0.decode((String, String, Date, String).self) }.map { ($0.0, $0.1, $0.2, $0.3) }
        }
        func replace(_ key: String, on date: LocalDate) async throws {
            try await database.transaction(logger: logger) { connection in
                try await ScheduledNotifications(connection: connection, logger: logger).replace(
                    .reEngagement, key: key, for: recipient, on: date)
            }
        }
        try await database.transaction(logger: logger) { connection in
            try await ScheduledNotifications(connection: connection, logger: logger).schedule(
                .streakAtRisk, key: "streak-at-risk:a", for: recipient, on: day)
        }

        try await replace("re-engagement:2026-03-10", on: day.adding(days: 2))
        let first = try await pending()
        #expect(first.map(\.key) == ["re-engagement:2026-03-10", "streak-at-risk:a"])
        #expect(first[0].fireAt == Self.rome.instant(of: LocalTime("09:00")!, on: day.adding(days: 2)))

        try await replace("re-engagement:2026-03-10", on: day.adding(days: 2))
        #expect(try await pending()[0].version == first[0].version, "the same notification at the same time is not rewritten")

        try await replace("re-engagement:2026-03-11", on: day.adding(days: 3))
        let moved = try await pending()
        #expect(moved.map(\.key) == ["re-engagement:2026-03-11", "streak-at-risk:a"])
        #expect(moved[0].fireAt == Self.rome.instant(of: LocalTime("09:00")!, on: day.adding(days: 3)))

        recipient.disabledCategories = [.reminders]
        try await replace("re-engagement:2026-03-12", on: day.adding(days: 4))
        #expect(try await pending().map(\.key) == ["streak-at-risk:a"])
        }
    }

    @Test("noting a check-in answers the recipient as before it and their pending re-engagement nudges, in the same statement")
    func noteCheckIn() async throws {
        try await withNotificationsDatabase("note-check-in") { database, logger in
        let recipient = Recipient(userID: UUID(), displayName: "Ana", timeZone: "Europe/Rome", locale: "en", enabled: true)
        let (day, attemptID) = (LocalDate("2026-03-10")!, UUID())
        try await database.transaction(logger: logger) { connection in
            try await RecipientStore(connection: connection, logger: logger).save(recipient, now: Self.rome.instant(of: LocalTime("12:00")!, on: day))
        }
        func note(_ userID: UUID, on date: LocalDate) async throws -> (recipient: Recipient, pendingNudges: [String])? {
            try await database.transaction(logger: logger) { connection in
                try await RecipientStore(connection: connection, logger: logger).noteCheckIn(userID, attemptID: attemptID, on: date)
            }
        }
        let first = try #require(try await note(recipient.userID, on: day))
        #expect(first.recipient.lastCheckIn == nil && first.pendingNudges.isEmpty)
        try await database.transaction(logger: logger) { connection in
            try await ScheduledNotifications(connection: connection, logger: logger).replace(
                .reEngagement, key: "re-engagement:2026-03-10", for: recipient, on: day.adding(days: 3))
            try await ScheduledNotifications(connection: connection, logger: logger).schedule(
                .streakAtRisk, key: "streak-at-risk:a", for: recipient, on: day)
        }
        let second = try #require(try await note(recipient.userID, on: day))
        #expect(second.recipient.lastCheckIn == day && second.pendingNudges == ["re-engagement:2026-03-10"], "only the kind's")
        await #expect(throws: DirectoryLag.self, "a user not known yet is waited for") { try await note(UUID(), on: day) }
        try await database.transaction(logger: logger) { connection in
            try await RecipientStore(connection: connection, logger: logger).erase(recipient.userID)
        }
        #expect(try await note(recipient.userID, on: day) == nil, "an erased user is no one to remind")
        }
    }
}
