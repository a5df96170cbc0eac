import Foundation
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeKafka
import SurgeTestSupport
import Testing

/// Reminders and the inbox as a user meets them: identity, notifications and the gateway as processes, the
/// notification service's clock moved by the test (identity keeps the real one, so tokens stay valid).
@Suite("Notifications: reminders and the inbox through the gateway", .tags(.system), .kind(.system), .serialized)
struct NotificationsSystemTests {
    struct User {
        var id: UUID
        var http: TestHTTP
        var zone: String
    }

    static func withStack(_ name: String, _ body: (TestStack) async throws -> Void) async throws {
        try await withTestStack(name) { stack in
            try await stack.start("identity")
            try await stack.start("notifications", environment: ["SIMULATED_CLOCK": "true", "REMINDER_INTERVAL_MS": "50"])
            try await stack.start("gateway")
            try await body(stack)
        }
    }

    static func user(_ name: String, zone: String, locale: String = "en-US", on stack: TestStack) async throws -> User {
        let response = try await stack.http().post("/v1/auth/guest", json: ["displayName": name, "timeZone": zone, "locale": locale])
        let token = try #require((response.json["tokens"] as? [String: Any])?["accessToken"] as? String, "\(response.text)")
        let idText = (response.json["user"] as? [String: Any])?["id"] as? String
        let id = try #require(idText.flatMap { UUID(uuidString: $0) })
        return User(id: id, http: try stack.http().authorized(token), zone: zone)
    }

    /// The user's next reminder, once the service has scheduled it at `time` local.
    static func nextReminder(of user: User, at time: String, on stack: TestStack) async throws -> Date {
        try await eventually("\(user.zone) reminder at \(time)") { () -> Date? in
            try await stack.database.withAdmin { client in
                try await client.query(
                    """
                    SELECT fire_at FROM notifications.reminders
                    WHERE user_id = \(user.id) AND to_char(fire_at AT TIME ZONE \(user.zone), 'HH24:MI') = \(time)
                    """, logger: .test("reminders")
                ).collect().first?.decode(Date.self)
            }
        }
    }

    static func items(_ user: User) async throws -> [[String: Any]] {
        try await user.http.get("/v1/me/notifications").json["items"] as? [[String: Any]] ?? []
    }

    static func reminders(_ user: User) async throws -> Int {
        try await items(user).filter { $0["kind"] as? String == "daily-reminder" }.count
    }

    @Test("kill -9 mid-burst of due reminders: after the restart every one of them is sent exactly once")
    func crashMidBurst() async throws {
        try await withTestStack("notifications-crash") { stack in
            try await stack.start("identity")
            let notifications = try await stack.start(
                "notifications", environment: ["SIMULATED_CLOCK": "true", "REMINDER_INTERVAL_MS": "50", "REMINDER_BATCH_SIZE": "1"])
            try await stack.start("gateway")
            // Enough that the burst cannot end between noticing it and killing the process: a reminder is sent in a
            // millisecond or two once nothing else is going on.
            let users = 240
            // Their first reminder at the default 09:00, on one day for all of them.
            let zone = zoneWhereNowIsFar(from: 9)
            for index in 0..<users { _ = try await Self.user("Sleeper \(index)", zone: zone, on: stack) }
            try await waitUntil("\(users) reminders scheduled", timeout: .seconds(60)) {
                try await stack.database.count("SELECT count(*) FROM notifications.reminders") == users
            }
            let latest = try await stack.database.withAdmin { client in
                try await client.query("SELECT max(fire_at) FROM notifications.reminders", logger: .test("reminders")).collect().first?.decode(Date.self)
            }
            let due = try #require(latest).addingTimeInterval(1)
            let sent = { try await stack.database.count("SELECT count(*) FROM notifications.inbox WHERE kind = 'daily-reminder'") }

            try await stack.setClock(due)
            try await waitUntil("the burst under way", every: .milliseconds(5)) { try await sent() >= 1 }
            await notifications.crash()
            let before = try await sent()
            #expect(before < users, "killed mid-burst (\(before) of \(users) sent)")
            try await notifications.start()
            try await stack.setClock(due)
            try await waitUntil("every reminder sent after the restart", timeout: .seconds(60)) { try await sent() == users }
            #expect(try await stack.database.count(
                """
                SELECT count(*) FROM (SELECT user_id FROM notifications.inbox WHERE kind = 'daily-reminder' GROUP BY user_id HAVING count(*) = 1) once
                """) == users, "one each")
            // Only the reminders: on some dates the simulated clock also passes the users' weekly digest.
            #expect(try await stack.database.count(
                """
                SELECT count(*) FROM notifications.outbox
                WHERE type = 'surge.notifications.notification.sent.v1' AND payload->>'kind' = 'daily-reminder'
                """) == users, "announced once each")
        }
    }

    @Test("a 21:00 reminder in Rome and one in Los Angeles each arrive at their own 21:00, once; switched off, nothing more")
    func dailyReminders() async throws {
        try await Self.withStack("notifications-reminders") { stack in
            let rome = try await Self.user("Giulia", zone: "Europe/Rome", locale: "it-IT", on: stack)
            let angeles = try await Self.user("Lena", zone: "America/Los_Angeles", on: stack)
            for user in [rome, angeles] {
                let saved = try await user.http.put(
                    "/v1/me/preferences", json: ["notificationsEnabled": true, "dailyReminderTime": "21:00", "telemetryOptOut": false])
                #expect(saved.status == 200, "\(saved.text)")
            }
            let romeAt = try await Self.nextReminder(of: rome, at: "21:00", on: stack)
            let angelesAt = try await Self.nextReminder(of: angeles, at: "21:00", on: stack)
            #expect(romeAt != angelesAt)

            // Whichever evening comes first (it depends on the hour the test runs), each arrives at its own 21:00.
            let (first, second) = romeAt < angelesAt ? ((rome, romeAt), (angeles, angelesAt)) : ((angeles, angelesAt), (rome, romeAt))
            try await stack.setClock(first.1.addingTimeInterval(-60))
            try await stack.setClock(first.1.addingTimeInterval(1))
            _ = try await eventually("the first 21:00 reminder (\(first.0.zone))") { try await Self.reminders(first.0) == 1 ? true : nil }
            #expect(try await Self.reminders(second.0) == 0, "\(second.0.zone) is not at 21:00 yet")
            try await stack.setClock(second.1.addingTimeInterval(1))
            _ = try await eventually("the second 21:00 reminder (\(second.0.zone))") { try await Self.reminders(second.0) == 1 ? true : nil }
            let arrived = try await Self.items(rome).filter { $0["kind"] as? String == "daily-reminder" }
            #expect(arrived.count == 1)
            #expect(arrived.first?["title"] as? String == "È ora del check-in", "Italian for an Italian locale")
            #expect(arrived.first?["deepLink"] as? String == "surge://today")
            // Minutes later, still one each: the next is tomorrow's.
            try await stack.setClock(max(romeAt, angelesAt).addingTimeInterval(600))
            let tomorrow = try await Self.nextReminder(of: rome, at: "21:00", on: stack)
            #expect(tomorrow.timeIntervalSince(romeAt) >= 23 * 3600)
            #expect(try await Self.reminders(rome) == 1)
            #expect(try await Self.reminders(angeles) == 1)

            // Switched off: the next evening brings nothing.
            #expect(try await rome.http.put("/v1/me/preferences", json: ["notificationsEnabled": false, "dailyReminderTime": "21:00", "telemetryOptOut": false])
                .status == 200)
            try await waitUntil("the reminder is cancelled") {
                try await stack.database.count("SELECT count(*) FROM notifications.reminders WHERE user_id = \(rome.id)") == 0
            }
            try await stack.setClock(tomorrow.addingTimeInterval(60))
            _ = try await eventually("Los Angeles's second evening") { () -> Bool? in
                try await stack.database.count("SELECT count(*) FROM notifications.inbox WHERE user_id = \(angeles.id)") >= 1 ? true : nil
            }
            #expect(try await Self.reminders(rome) == 1)
        }
    }

    @Test("a 21:00 reminder first looked at 2 h 30 min late (the clock jumped past it) is dropped and counted; the next evening's, 1 h 30 min late, is sent")
    func lateReminder() async throws {
        try await withTestStack("notifications-late") { stack in
            try await stack.start("identity")
            let notifications = try await stack.start("notifications", environment: ["SIMULATED_CLOCK": "true", "REMINDER_INTERVAL_MS": "50"])
            try await stack.start("gateway")
            let giulia = try await Self.user("Giulia", zone: "Europe/Rome", on: stack)
            let saved = try await giulia.http.put(
                "/v1/me/preferences", json: ["notificationsEnabled": true, "dailyReminderTime": "21:00", "telemetryOptOut": false])
            #expect(saved.status == 200, "\(saved.text)")
            let evening = try await Self.nextReminder(of: giulia, at: "21:00", on: stack)
            let nextAfter = { (instant: Date) in
                try await eventually("the reminder after \(instant)") { () -> Date? in
                    try await stack.database.withAdmin { client in
                        try await client.query(
                            "SELECT fire_at FROM notifications.reminders WHERE user_id = \(giulia.id) AND fire_at > \(instant)", logger: .test("reminders")
                        ).collect().first?.decode(Date.self)
                    }
                }
            }
            let dropped = { try await MetricsPage.scrape(notifications).sum("surge_reminders_dropped_total", ["kind": "daily-reminder", "reason": "late"]) }

            // Past the default bound of two hours: the evening's reminder goes unsent, and the next is tomorrow's.
            try await stack.setClock(evening.addingTimeInterval(2.5 * 3600))
            let tomorrow = try await nextAfter(evening)
            #expect(tomorrow.timeIntervalSince(evening) >= 23 * 3600)
            #expect(try await Self.reminders(giulia) == 0, "not sent at 23:30")
            #expect(try await dropped() == 1)

            // Within the bound: sent late, once.
            try await stack.setClock(tomorrow.addingTimeInterval(1.5 * 3600))
            _ = try await eventually("the reminder sent at 22:30") { try await Self.reminders(giulia) == 1 ? true : nil }
            _ = try await nextAfter(tomorrow)
            #expect(try await Self.reminders(giulia) == 1)
            #expect(try await dropped() == 1)
        }
    }

    @Test("reminders switched off: no reminder at 21:00 while a neighbour gets hers; back on, the next evening's is scheduled")
    func categorySwitchedOff() async throws {
        try await Self.withStack("notifications-categories") { stack in
            let giulia = try await Self.user("Giulia", zone: "Europe/Rome", on: stack)
            let paola = try await Self.user("Paola", zone: "Europe/Rome", on: stack)
            func preferences(_ categories: [String]) -> [String: any Sendable] {
                ["notificationsEnabled": true, "dailyReminderTime": "21:00", "disabledCategories": categories, "telemetryOptOut": false]
            }
            #expect(try await paola.http.put("/v1/me/preferences", json: preferences(["social"])).status == 200)
            let evening = try await Self.nextReminder(of: paola, at: "21:00", on: stack)
            #expect(try await giulia.http.put("/v1/me/preferences", json: preferences([])).status == 200)
            _ = try await Self.nextReminder(of: giulia, at: "21:00", on: stack)
            #expect(try await giulia.http.put("/v1/me/preferences", json: preferences(["reminders"])).status == 200)
            try await waitUntil("Giulia's reminder cancelled") {
                try await stack.database.count("SELECT count(*) FROM notifications.reminders WHERE user_id = \(giulia.id)") == 0
            }

            try await stack.setClock(evening.addingTimeInterval(1))
            _ = try await eventually("Paola's 21:00 reminder: her social switch does not touch reminders") {
                try await Self.reminders(paola) == 1 ? true : nil
            }
            #expect(try await Self.reminders(giulia) == 0, "Giulia switched reminders off")

            // Social off still files a friend request in the inbox (the in-app history); only pushes stop (PushSystemTests).
            let request = try await giulia.http.post("/v1/friend-requests", json: ["userID": paola.id.uuidString])
            #expect(request.status == 201, "\(request.text)")
            _ = try await eventually("Paola's friend request in her inbox") {
                try await Self.items(paola).first { $0["kind"] as? String == "friend-request" }
            }

            #expect(try await giulia.http.put("/v1/me/preferences", json: preferences([])).status == 200)
            let tomorrow = try await Self.nextReminder(of: giulia, at: "21:00", on: stack)
            #expect(tomorrow.timeIntervalSince(evening) >= 23 * 3600, "back on: the next one is the next evening's")
        }
    }

    /// A guest registered at identity directly (as the gateway forwards it): its id and access token.
    static func guest(_ name: String, zone: String, locale: String = "en-US", at identity: TestHTTP) async throws -> (id: UUID, token: String) {
        let response = try await identity.post("/v1/auth/guest", json: ["displayName": name, "timeZone": zone, "locale": locale])
        let token = try #require((response.json["tokens"] as? [String: Any])?["accessToken"] as? String, "\(response.text)")
        let id = try #require(((response.json["user"] as? [String: Any])?["id"] as? String).flatMap { UUID(uuidString: $0) })
        return (id, token)
    }

    @Test("a friend request read before a registration it needs (held back on another partition) waits for it, then lands in the inbox once, in the addressee's language; read, read all, archive; nobody else's")
    func inbox() async throws {
        try await withTestStack("notifications-inbox") { stack in
            // Both users register before notifications runs. The request travels on the partition of the smaller user
            // id (its key); the other user's registration sits on another partition, held without a leader until
            // notifications has read the request, which needs both names: whatever order partitions are read in,
            // notifications meets the request first, and it must wait for the registration rather than lose it.
            try await stack.start("identity")
            let identity = try stack.signedHTTP("identity", caller: nil)
            let partition = { (id: UUID) in KafkaPartitioner.murmur2(Data(id.key.utf8), partitions: 4) }
            let annGuest = try await Self.guest("Ann", zone: "Europe/London", at: identity)
            var marcoGuest = try await Self.guest("Marco", zone: "Europe/Rome", locale: "it", at: identity)
            while partition(marcoGuest.id) == partition(annGuest.id) {
                marcoGuest = try await Self.guest("Marco", zone: "Europe/Rome", locale: "it", at: identity)
            }
            let late = annGuest.id.key < marcoGuest.id.key ? marcoGuest.id : annGuest.id
            try await waitUntil("identity's events published") {
                try await stack.database.count("SELECT count(*) FROM identity.outbox_pending") == 0
            }
            let kafka = try #require(stack.kafka).cluster
            try kafka.setLeader(of: Topic.identity.name, partition: partition(late), to: nil)

            // A leaderless partition's metadata is asked for again within a second once it is back.
            let consumerProperties = stack.environment(for: "notifications")["KAFKA_CONSUMER_PROPERTIES", default: ""]
                + ",topic.metadata.refresh.interval.ms=1000"
            let notifications = try await stack.start(
                "notifications",
                environment: ["SIMULATED_CLOCK": "true", "REMINDER_INTERVAL_MS": "50", "KAFKA_CONSUMER_PROPERTIES": consumerProperties])
            try await stack.start("gateway")
            let ann = User(id: annGuest.id, http: try stack.http().authorized(annGuest.token), zone: "Europe/London")
            let marco = User(id: marcoGuest.id, http: try stack.http().authorized(marcoGuest.token), zone: "Europe/Rome")
            let request = try await ann.http.post("/v1/friend-requests", json: ["userID": marco.id.uuidString])
            #expect(request.status == 201, "\(request.text)")

            let reason = try await eventually("the request parked, waiting for the held registration", timeout: .seconds(60)) { () -> String? in
                try await stack.database.withAdmin { client in
                    try await client.query(
                        "SELECT reason FROM notifications.deferred_events WHERE event_type = \(FriendshipChanged.eventType)", logger: .test("parked")
                    ).collect().first?.decode(String.self)
                }
            }
            #expect(reason.lowercased().contains(late.key), "\(reason)")
            #expect(try await Self.items(marco).isEmpty)
            try kafka.setLeader(of: Topic.identity.name, partition: partition(late), to: 1)

            let note = try await eventually("Marco's friend request notification", timeout: .seconds(60)) { () -> [String: Any]? in
                try await Self.items(marco).first { $0["kind"] as? String == "friend-request" }
            }
            try await waitUntil("nothing parked") { try await stack.database.count("SELECT count(*) FROM notifications.deferred_events") == 0 }
            let metrics = try await MetricsPage.scrape(notifications)
            #expect(metrics.sum("surge_events_handled_total", ["type": FriendshipChanged.eventType, "result": "deferred"]) == 1)
            #expect(metrics.sum("surge_events_handled_total", ["type": FriendshipChanged.eventType, "result": "applied"]) == 1)
            #expect(metrics.sum("surge_events_handled_total", ["result": "deadlettered"]) == 0)
            #expect(try await Self.items(marco).filter { $0["kind"] as? String == "friend-request" }.count == 1)
            #expect(note["body"] as? String == "Ann vuole essere tuo amico.")
            #expect(note["read"] as? Bool == false)
            #expect(try await marco.http.get("/v1/me/notifications/unread-count").json["unread"] as? Int == 1)
            let id = try #require(note["notificationID"] as? String)

            // Someone else's notification does not exist for Ann.
            #expect(try await ann.http.post("/v1/me/notifications/\(id)/read").status == 404)
            #expect(try await marco.http.post("/v1/me/notifications/\(UUID().uuidString)/read").status == 404)

            let read = try await marco.http.post("/v1/me/notifications/\(id)/read")
            #expect(read.status == 200 && read.json["read"] as? Bool == true, "\(read.text)")
            #expect(try await marco.http.get("/v1/me/notifications/unread-count").json["unread"] as? Int == 0)
            #expect(try await marco.http.post("/v1/me/notifications/read-all").json["unread"] as? Int == 0)
            let archived = try await marco.http.post("/v1/me/notifications/\(id)/archive")
            #expect(archived.json["archived"] as? Bool == true)
            #expect(try await Self.items(marco).isEmpty, "archived notifications are not listed")
        }
    }
}
