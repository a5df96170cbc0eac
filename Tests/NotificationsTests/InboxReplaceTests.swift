import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import NotificationsService

@Suite("Notifications: the latest standing replaces the earlier one", .tags(.integration), .kind(.integration, needsDatabase: true))
struct InboxReplaceTests {
    @Test("one statement writes each user's notification; the same again rewrites nothing; a later one replaces it unannounced, one from before it was written does not")
    func replace() async throws {
        try await withNotificationsDatabase("inbox") { database, logger in
        let clock = ServiceClock(simulated: false)
        let inbox = Inbox(outbox: Outbox(service: "notifications"), pushPlatforms: [], webhooks: WebhookQueue(clock: clock), clock: clock)
        let (ana, ben, cy) = (UUID(), UUID(), UUID())
        try await database.transaction(logger: logger) { connection in
            let store = RecipientStore(connection: connection, logger: logger)
            try await store.save(Recipient(userID: ana, displayName: "Ana", timeZone: "Europe/Rome", locale: "it-IT", enabled: true), now: Date())
            try await store.save(Recipient(userID: ben, displayName: "Ben", timeZone: "Asia/Tokyo", locale: "en", enabled: true), now: Date())
            let found = try await store.recipients([ana, ben, cy])
            #expect(found.keys.sorted { $0.uuidString < $1.uuidString } == [ana, ben].sorted { $0.uuidString < $1.uuidString })
            #expect(found[ana]?.language == .italian && found[ben]?.displayName == "Ben")
        }
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        func replace(by name: String, at time: Date, to users: [UUID]) async throws {
            try await database.transaction(logger: logger) { connection in
                try await inbox.replace(
                    users.map { (userID: $0, message: Message.overtaken(.english, by: name, board: "b")) }, kind: .overtaken, key: "overtaken:b:1",
                    at: time, connection: connection, logger: logger)
            }
        }
        func rows() async throws -> [UUID: (body: String, version: String)] {
            var rows: [UUID: (body: String, version: String)] = [:]
            for try await (user, body, version) in try await database.query(
                "SELECT user_id, body, xmin::text FROM inbox WHERE key = 'overtaken:b:1'", logger: logger
            ).decode((UUID, String, String).self) {
                rows[user] = (body, version)
            }
            return rows
        }
        func announced() async throws -> Int {
            try await database.query("SELECT count(*) FROM outbox WHERE type = 'surge.notifications.notification.sent.v1'", logger: logger)
                .collect().first!.decode(Int.self)
        }

        try await replace(by: "Cy", at: start, to: [ana, ben, ana])
        let first = try await rows()
        #expect(first.count == 2 && first[ana]?.body.contains("Cy") == true)
        #expect(try await announced() == 2, "each new notification is announced once; a user named twice gets one")

        try await replace(by: "Cy", at: start.addingTimeInterval(60), to: [ana, ben])
        let same = try await rows()
        #expect(same[ana]?.version == first[ana]?.version && same[ben]?.version == first[ben]?.version, "unchanged: not rewritten")

        try await replace(by: "Dee", at: start.addingTimeInterval(120), to: [ben])
        let later = try await rows()
        #expect(later[ben]?.body.contains("Dee") == true && later[ana]?.body.contains("Cy") == true)
        #expect(try await announced() == 2, "a replacement is not a new notification")

        try await replace(by: "Eve", at: start.addingTimeInterval(-30), to: [ben])
        #expect(try await rows()[ben]?.body.contains("Dee") == true, "a standing from before the notification was written does not replace it")

        try await replace(by: "Eve", at: start, to: [])
        #expect(try await announced() == 2)
        }
    }
}
