import Crypto
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeTestSupport
import Testing

/// Signed webhooks as a subscriber meets them: identity, notifications (its clock moved by the test) and the gateway
/// as processes, and a receiver in the test that checks every signature with the secrets the API handed out.
@Suite("Webhooks: signed deliveries, retries, rotation and disabling through the gateway", .tags(.system), .kind(.system), .serialized)
struct WebhookSystemTests {
    static let failuresBeforeDisabling = 4

    static func withStack(_ name: String, _ body: (TestStack, WebhookReceiver) async throws -> Void) async throws {
        let receiver = try await WebhookReceiver()
        do {
            try await withTestStack(name) { stack in
                try await stack.start("identity")
                try await stack.start(
                    "notifications",
                    environment: [
                        "SIMULATED_CLOCK": "true", "WEBHOOKS_INTERVAL_MS": "50", "WEBHOOKS_ALLOW_HTTP": "true", "WEBHOOKS_ALLOW_PRIVATE_TARGETS": "true",
                        "WEBHOOKS_DISABLE_AFTER_FAILURES": "\(failuresBeforeDisabling)",
                    ])
                try await stack.start("gateway")
                try await body(stack, receiver)
            }
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    /// A user whose daily reminder is twelve hours away, so the clock the test moves by minutes brings none.
    static func user(_ name: String, on stack: TestStack) async throws -> NotificationsSystemTests.User {
        let user = try await NotificationsSystemTests.user(name, zone: "UTC", on: stack)
        let hour = (Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date()).hour! + 12) % 24
        let time = String(format: "%02d:00", hour)
        let saved = try await user.http.put("/v1/me/preferences", json: ["notificationsEnabled": true, "dailyReminderTime": time, "telemetryOptOut": false])
        #expect(saved.status == 200, "\(saved.text)")
        _ = try await NotificationsSystemTests.nextReminder(of: user, at: time, on: stack)
        return user
    }

    /// Subscribes `user` to the receiver (at a path of its own); returns the webhook's id and secret.
    static func subscribe(
        _ user: NotificationsSystemTests.User, receiver: WebhookReceiver, path: String, host: String = "127.0.0.1", groupID: UUID? = nil
    ) async throws -> (id: String, secret: String) {
        var body: [String: any Sendable] = ["url": receiver.url(path, host: host)]
        if let groupID { body["groupID"] = groupID.uuidString }
        let created = try await user.http.post("/v1/webhooks", json: body)
        #expect(created.status == 201, "\(created.text)")
        let secret = try #require(created.json["secret"] as? String)
        let id = try #require((created.json["webhook"] as? [String: Any])?["webhookID"] as? String)
        #expect(created.headers.first(name: "location") == "/v1/webhooks/\(id)")
        return (id, secret)
    }

    /// `from` asks `to` to be friends: `to` gets a notification.
    static func befriend(_ from: NotificationsSystemTests.User, _ to: NotificationsSystemTests.User) async throws {
        let request = try await from.http.post("/v1/friend-requests", json: ["userID": to.id.uuidString])
        #expect(request.status == 201, "\(request.text)")
    }

    /// Walks one message through its retries: after each recorded attempt, moves the service's clock just past the
    /// next one's due time, until `attempts` were made.
    static func driveRetries(of deliveryID: UUID, through attempts: Int, on stack: TestStack) async throws {
        for made in 1..<attempts {
            let next = try await eventually("attempt \(made) recorded with its retry scheduled") { () -> Date? in
                try await stack.database.withAdmin { client in
                    try await client.query(
                        """
                        SELECT next_attempt_at FROM notifications.webhook_deliveries
                        WHERE delivery_id = \(deliveryID) AND attempts = \(made) AND next_attempt_at IS NOT NULL
                        """, logger: .test("webhooks")
                    ).collect().first?.decode(Date.self)
                }
            }
            try await stack.setClock(next.addingTimeInterval(1))
        }
    }

    static func webhook(_ id: String, of user: NotificationsSystemTests.User) async throws -> [String: Any] {
        let response = try await user.http.get("/v1/webhooks/\(id)")
        #expect(response.status == 200, "\(response.text)")
        return response.json
    }

    @Test("a notification reaches the receiver once, signed; 500s are retried on schedule until a 200; a rotation sends both signatures")
    func deliveryRetriesRotation() async throws {
        try await Self.withStack("webhooks-delivery") { stack, receiver in
            let marco = try await Self.user("Marco", on: stack)
            // By name: each attempt connects to the address the check resolved, not to a second lookup's.
            let (webhookID, secret) = try await Self.subscribe(marco, receiver: receiver, path: "/marco", host: "localhost")
            #expect(secret.hasPrefix("whsec_") && (Data(base64Encoded: String(secret.dropFirst(6)))?.count ?? 0) >= 24)
            receiver.trust(secret)

            // Delivered once, signed, with the notification in the body.
            let ann = try await Self.user("Ann", on: stack)
            try await Self.befriend(ann, marco)
            let first = try await eventually("the first message") { receiver.messages(at: "/marco").first }
            #expect(first.verified, "signature \(first.signature) does not verify")
            #expect(first.id.hasPrefix("msg_"))
            #expect(abs(Double(first.timestamp) - Date().timeIntervalSince1970) < 300)
            let data = try #require(first.json["data"] as? [String: Any])
            #expect(first.json["type"] as? String == "notification.created")
            #expect(data["kind"] as? String == "friend-request")
            #expect(data["userID"] as? String == marco.id.key)
            #expect(data["body"] as? String == "Ann wants to be your friend.")
            #expect(data["deepLink"] as? String != nil && data["title"] as? String != nil && data["notificationID"] as? String != nil)
            try await waitUntil("the attempt is recorded as delivered") {
                let attempts = try await Self.webhook(webhookID, of: marco)["recentAttempts"] as? [[String: Any]] ?? []
                return attempts.count == 1 && attempts.first?["outcome"] as? String == "delivered" && attempts.first?["statusCode"] as? Int == 200
            }
            try await waitUntil("notification.sent with channel webhook is in the outbox") {
                try await stack.database.count(
                    """
                    SELECT count(*) FROM notifications.outbox
                    WHERE type = 'surge.notifications.notification.sent.v1' AND payload->>'channel' = 'webhook'
                    """) == 1
            }
            #expect(receiver.messages(at: "/marco").count == 1, "delivered once")

            // Three 500s, then a 200: the same message (same webhook-id, same body) four times, each signed.
            receiver.answer(at: "/marco") { attempt in attempt <= 3 ? 500 : 200 }
            let bea = try await Self.user("Bea", on: stack)
            try await Self.befriend(bea, marco)
            let failing = try await eventually("Bea's request reaches the receiver") {
                receiver.messages(at: "/marco").first { ($0.json["data"] as? [String: Any])?["body"] as? String == "Bea wants to be your friend." }
            }
            let deliveryID = try #require(UUID(uuidString: String(failing.id.dropFirst(4))))
            try await Self.driveRetries(of: deliveryID, through: 4, on: stack)
            try await waitUntil("the fourth attempt is delivered") {
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.webhook_deliveries WHERE delivery_id = \(deliveryID) AND outcome = 'delivered'") == 1
            }
            let tries = receiver.messages(at: "/marco").filter { $0.id == failing.id }
            #expect(tries.count == 4)
            #expect(tries.allSatisfy { $0.verified })
            #expect(Set(tries.map(\.body)).count == 1, "every retry carries the same body")
            #expect(tries.map(\.status) == [500, 500, 500, 200])
            // The retries came after the schedule's delays on the service's clock: 5 s, then 5 min, then 30 min (±10 %).
            let gaps = zip(tries.dropFirst(), tries).map { $0.timestamp - $1.timestamp }
            #expect(gaps.count == 3 && gaps[0] >= 4 && gaps[0] <= 7 && gaps[1] >= 269 && gaps[1] <= 332 && gaps[2] >= 1619 && gaps[2] <= 1982, "\(gaps)")
            let shown = try await Self.webhook(webhookID, of: marco)
            let attempts = shown["recentAttempts"] as? [[String: Any]] ?? []
            #expect(attempts.filter { $0["statusCode"] as? Int == 500 && $0["outcome"] as? String == "failed" }.count == 3)
            #expect(shown["status"] as? String == "active")
            #expect(shown["failingSince"] == nil, "a success clears the failure run")
            #expect(shown["lastFailure"] as? String == "HTTP 500: answered 500", "the status and the start of the answer")

            // A rotation: the next message carries two signatures, one by each secret.
            let rotated = try await marco.http.post("/v1/webhooks/\(webhookID)/rotate-secret")
            #expect(rotated.status == 200, "\(rotated.text)")
            let newSecret = try #require(rotated.json["secret"] as? String)
            #expect(newSecret != secret)
            #expect((rotated.json["webhook"] as? [String: Any])?["previousSecretValidUntil"] != nil)
            receiver.trust(newSecret)
            let cleo = try await Self.user("Cleo", on: stack)
            try await Self.befriend(cleo, marco)
            let signedTwice = try await eventually("Cleo's request reaches the receiver") {
                receiver.messages(at: "/marco").first { ($0.json["data"] as? [String: Any])?["body"] as? String == "Cleo wants to be your friend." }
            }
            #expect(signedTwice.signature.split(separator: " ").count == 2)
            #expect(receiver.verifies(signedTwice, with: secret) && receiver.verifies(signedTwice, with: newSecret))

            // The secret is never shown again; the list has the subscription; another user cannot see it.
            #expect(shown["secret"] == nil)
            let list = try await marco.http.get("/v1/webhooks")
            #expect((list.json["items"] as? [[String: Any]])?.map { $0["webhookID"] as? String } == [webhookID])
            #expect(try await ann.http.get("/v1/webhooks/\(webhookID)").status == 404)
            #expect(try await ann.http.post("/v1/webhooks/\(webhookID)/rotate-secret").status == 404)
            #expect(try await ann.http.delete("/v1/webhooks/\(webhookID)").status == 404)
        }
    }

    @Test("410 disables at once; failing N times in a row disables; the reason is shown; re-enable; a group subscription hears its members")
    func disablingAndGroups() async throws {
        try await Self.withStack("webhooks-disabling") { stack, receiver in
            let marco = try await Self.user("Marco", on: stack)
            let (goneID, _) = try await Self.subscribe(marco, receiver: receiver, path: "/gone")
            receiver.answer(at: "/gone") { _ in 410 }
            let ann = try await Self.user("Ann", on: stack)
            try await Self.befriend(ann, marco)
            let gone = try await eventually("the 410 disables the subscription") { () -> [String: Any]? in
                let shown = try await Self.webhook(goneID, of: marco)
                return shown["status"] as? String == "disabled" ? shown : nil
            }
            #expect((gone["disabledReason"] as? String)?.contains("410") == true, "\(gone)")
            #expect(receiver.messages(at: "/gone").count == 1, "no retry after 410")
            try await waitUntil("notification.failed is in the outbox") {
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.outbox WHERE type = 'surge.notifications.notification.failed.v1' AND payload->>'channel' = 'webhook'")
                    >= 1
            }

            // Always 500: disabled after the configured failures in a row, each retry on schedule.
            let zed = try await Self.user("Zed", on: stack)
            let (brokenID, brokenSecret) = try await Self.subscribe(zed, receiver: receiver, path: "/broken")
            receiver.trust(brokenSecret)
            receiver.answer(at: "/broken") { _ in 500 }
            try await Self.befriend(ann, zed)
            let message = try await eventually("Zed's first attempt") { receiver.messages(at: "/broken").first }
            try await Self.driveRetries(of: try #require(UUID(uuidString: String(message.id.dropFirst(4)))), through: Self.failuresBeforeDisabling, on: stack)
            let broken = try await eventually("the failures disable the subscription") { () -> [String: Any]? in
                let shown = try await Self.webhook(brokenID, of: zed)
                return shown["status"] as? String == "disabled" ? shown : nil
            }
            #expect(broken["disabledReason"] as? String == "\(Self.failuresBeforeDisabling) delivery attempts failed in a row.", "\(broken)")
            #expect(broken["lastFailure"] as? String == "HTTP 500: answered 500")
            #expect(receiver.messages(at: "/broken").count == Self.failuresBeforeDisabling)

            // Re-enabled: the next notification goes out again.
            receiver.answer(at: "/broken") { _ in 200 }
            let enabled = try await zed.http.post("/v1/webhooks/\(brokenID)/enable")
            #expect(enabled.status == 200 && enabled.json["status"] as? String == "active", "\(enabled.text)")
            #expect(enabled.json["disabledReason"] == nil)
            let bea = try await Self.user("Bea", on: stack)
            try await Self.befriend(bea, zed)
            try await waitUntil("the re-enabled subscription delivers") {
                receiver.messages(at: "/broken").contains { $0.status == 200 && $0.verified }
            }

            // A group subscription hears every member; one for a group the caller is not in is refused.
            let group = try await marco.http.post("/v1/groups", json: ["name": "Flat 4B", "kind": "household", "timeZone": "Europe/London"])
            #expect(group.status == 201, "\(group.text)")
            let home = try #require((group.json["id"] as? String).flatMap(UUID.init(uuidString:)))
            let code = try #require(try await marco.http.post("/v1/groups/\(home.key)/invites").json["code"] as? String)
            #expect(try await zed.http.post("/v1/groups/join", json: ["code": code]).status == 200)
            let outsider = try await ann.http.post("/v1/webhooks", json: ["url": receiver.url("/nope"), "groupID": home.uuidString])
            #expect(outsider.status == 404, "a group the caller is not in does not exist for them: \(outsider.text)")
            try await waitUntil("notifications learned the household") {
                try await stack.database.count("SELECT count(*) FROM notifications.group_members WHERE group_id = \(home)") == 2
            }
            let (householdID, householdSecret) = try await Self.subscribe(marco, receiver: receiver, path: "/household", groupID: home)
            receiver.trust(householdSecret)
            try await Self.befriend(bea, marco)
            let cleo = try await Self.user("Cleo", on: stack)
            try await Self.befriend(cleo, zed)
            try await waitUntil("the household hook hears both members") {
                let users = Set(receiver.messages(at: "/household").compactMap { ($0.json["data"] as? [String: Any])?["userID"] as? String })
                return users == [marco.id.key, zed.id.key]
            }
            #expect(receiver.messages(at: "/household").allSatisfy { $0.verified && ($0.json["data"] as? [String: Any])?["groupID"] as? String == home.key })
            let deleted = try await marco.http.delete("/v1/webhooks/\(householdID)")
            #expect(deleted.status == 204, "\(deleted.text)")
            #expect(try await marco.http.get("/v1/webhooks/\(householdID)").status == 404)

            // Not https (http is allowed here, ftp never): refused with its own problem type.
            let ftp = try await marco.http.post("/v1/webhooks", json: ["url": "ftp://127.0.0.1/hook"])
            #expect(ftp.status == 422 && (ftp.json["type"] as? String)?.hasSuffix("/webhook-target-refused") == true, "\(ftp.text)")
        }
    }

    @Test("without the operator's leave, a URL that resolves to loopback, link-local or private addresses is refused")
    func privateTargetsRefused() async throws {
        let receiver = try await WebhookReceiver()
        try await withTestStack("webhooks-ssrf") { stack in
            try await stack.start("identity")
            try await stack.start("notifications", environment: ["WEBHOOKS_ALLOW_HTTP": "true"])
            try await stack.start("gateway")
            let marco = try await NotificationsSystemTests.user("Marco", zone: "UTC", on: stack)
            for url in [
                receiver.url("/hook"), "https://localhost/hook", "https://[::1]/hook", "https://169.254.169.254/latest/meta-data",
                "https://10.0.0.7/", "https://[::ffff:192.168.1.1]/", "https://0.0.0.0/",
            ] {
                let refused = try await marco.http.post("/v1/webhooks", json: ["url": url])
                #expect(refused.status == 422, "\(url): \(refused.text)")
                #expect((refused.json["type"] as? String)?.hasSuffix("/webhook-target-refused") == true, "\(url): \(refused.text)")
                #expect((refused.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "url")
            }
            let list = try await marco.http.get("/v1/webhooks")
            #expect((list.json["items"] as? [Any])?.isEmpty == true, "\(list.text)")
        }
        await receiver.stop()
    }
}

/// A webhook receiver on 127.0.0.1: records every request, verifies its signature against the secrets it was told
/// to trust, and answers what the test scripts per path (by how many times it has seen that message), 200 otherwise.
final class WebhookReceiver: Sendable {
    struct Message: Sendable {
        var path: String
        var id: String
        var timestamp: Int
        var signature: String
        var body: String
        var status: Int
        var verified: Bool
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    }

    private let received = LockedValue<[Message]>([])
    private let secrets = LockedValue<[String]>([])
    private let scripts = LockedValue<[String: @Sendable (Int) -> Int]>([:])
    private let server: LoopbackHTTPServer

    init() async throws {
        let (received, secrets, scripts) = (self.received, self.secrets, self.scripts)
        server = try await LoopbackHTTPServer { request in
            guard request.method == .POST else { return .init(status: 405, body: "") }
            let id = request.headers.first(name: "webhook-id") ?? ""
            let timestamp = Int(request.headers.first(name: "webhook-timestamp") ?? "") ?? 0
            let signature = request.headers.first(name: "webhook-signature") ?? ""
            let verified = secrets.value.contains {
                Self.verifies(signature: signature, id: id, timestamp: timestamp, body: request.body, secret: $0)
            }
            let status = received.withLock { messages -> Int in
                let seen = messages.filter { $0.id == id }.count
                let status = scripts.value[request.path]?(seen + 1) ?? 200
                messages.append(
                    Message(path: request.path, id: id, timestamp: timestamp, signature: signature, body: request.body, status: status, verified: verified))
                return status
            }
            return .init(status: status, body: "answered \(status)")
        }
    }

    func url(_ path: String, host: String = "127.0.0.1") -> String { "http://\(host):\(server.port)\(path)" }
    func trust(_ secret: String) { secrets.withLock { $0.append(secret) } }
    func answer(at path: String, _ script: @escaping @Sendable (Int) -> Int) { scripts.withLock { $0[path] = script } }
    func messages(at path: String) -> [Message] { received.value.filter { $0.path == path } }
    func verifies(_ message: Message, with secret: String) -> Bool {
        Self.verifies(signature: message.signature, id: message.id, timestamp: message.timestamp, body: message.body, secret: secret)
    }

    /// The receiver's side of the Standard Webhooks specification: HMAC-SHA256 with the base64 key after `whsec_`,
    /// over `id.timestamp.body`; any `v1` signature of the space-separated list may match.
    static func verifies(signature: String, id: String, timestamp: Int, body: String, secret: String) -> Bool {
        guard secret.hasPrefix("whsec_"), let key = Data(base64Encoded: String(secret.dropFirst(6))) else { return false }
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(id).\(timestamp).\(body)".utf8), using: SymmetricKey(data: key))
        let expected = "v1," + Data(mac).base64EncodedString()
        return signature.split(separator: " ").contains { $0 == expected }
    }

    func stop() async { await server.stop() }
}
