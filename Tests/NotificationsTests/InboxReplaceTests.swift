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
                    users.map {
                        Inbox.Replacement(
                            notification: NewNotification(
                                userID: $0, kind: .overtaken, key: "overtaken:b:1", message: Message.overtaken(.english, by: name, board: "b")),
                            time: time)
                    }, connection: connection, logger: logger)
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

    @Test("a batch's rank changes are told once its body ends, the latest standing of each user winning; an erasure tells those before it first; an unknown user fails the batch")
    func gathered() async throws {
        try await withNotificationsDatabase("inbox-gathered") { database, logger in
        let clock = ServiceClock(simulated: false)
        let inbox = Inbox(outbox: Outbox(service: "notifications"), pushPlatforms: [], webhooks: WebhookQueue(clock: clock), clock: clock)
        let (ana, ben, cy, dee) = (UUID(), UUID(), UUID(), UUID())
        let start = Date(timeIntervalSince1970: 1_795_000_200)
        try await database.transaction(logger: logger) { connection in
            let store = RecipientStore(connection: connection, logger: logger)
            for (user, name) in [(ana, "Ana"), (ben, "Ben"), (cy, "Cy"), (dee, "Dee")] {
                try await store.save(Recipient(userID: user, displayName: name, timeZone: "Europe/Rome", locale: "en", enabled: true), now: start)
            }
        }
        func change(_ userID: UUID, overtook: [UUID], at time: Date) -> RankChanged {
            RankChanged(
                board: "b", scope: .group, subjectID: UUID(), window: "all-time", userID: userID, previousRank: 3, rank: 1, score: 10,
                overtook: overtook, overtakenBy: [], changedAt: time)
        }
        func inboxCount(on connection: PostgresConnection) async throws -> Int {
            try await connection.query("SELECT count(*) FROM inbox", logger: logger).collect().first!.decode(Int.self)
        }
        try await database.transaction(logger: logger) { connection in
            let stores = NotificationStores(connection: connection, logger: logger)
            try await InboxHandlers.overtaken(change(cy, overtook: [ana, ben], at: start), inbox: inbox, stores: stores)
            #expect(try await inboxCount(on: connection) == 0, "gathered, not yet told")
            try await stores.recipients.erase(ana)
            #expect(try await inboxCount(on: connection) == 1, "told before the erasure, which removed Ana's")
            try await InboxHandlers.overtaken(change(dee, overtook: [ben], at: start.addingTimeInterval(60)), inbox: inbox, stores: stores)
            try await InboxHandlers.overtaken(change(ana, overtook: [ben], at: start.addingTimeInterval(90)), inbox: inbox, stores: stores)
            try await InboxHandlers.overtaken(change(cy, overtook: [ben], at: start.addingTimeInterval(-30)), inbox: inbox, stores: stores)
        }
        let bodies = try await database.query("SELECT user_id, body FROM inbox", logger: logger).collect().map { try $0.decode((UUID, String).self) }
        #expect(bodies.count == 1 && bodies.first?.0 == ben)
        #expect(bodies.first?.1.contains("Someone") == true, "the latest standing wins, an erased user's name told as someone")
        let announced = try await database.query(
            "SELECT count(*) FROM outbox WHERE type = 'surge.notifications.notification.sent.v1'", logger: logger
        ).collect().first!.decode(Int.self)
        #expect(announced == 2, "each user's first notification, once")

        await #expect(throws: DirectoryLag.self, "a user not known yet fails the batch, which then goes one event at a time") {
            try await database.transaction(logger: logger) { connection in
                try await InboxHandlers.overtaken(
                    change(UUID(), overtook: [ben], at: start.addingTimeInterval(120)), inbox: inbox,
                    stores: NotificationStores(connection: connection, logger: logger))
            }
        }
        }
    }
}
