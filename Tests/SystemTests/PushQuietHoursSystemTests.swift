import CryptoExtras
import Foundation
import JWTKit
import PostgresNIO
import SurgeContracts
import SurgeTestSupport
import Testing

/// Quiet hours and per-kind switches as a phone meets them: identity, notifications (its clock moved by the test) and
/// the gateway as processes, FCM played by `PushProviderDouble`. The quiet hours are set around the real local time,
/// which is where the notification service's clock starts.
@Suite("Notifications: pushes wait out quiet hours and obey per-kind switches", .tags(.system), .kind(.system), .serialized)
struct PushQuietHoursSystemTests {
    typealias Push = PushSystemTests

    /// `HH:mm` in London, `offset` from now.
    static func londonTime(_ offset: TimeInterval) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "Europe/London")
        formatter.dateFormat = "HH:mm"
        return formatter.string(from: Date().addingTimeInterval(offset))
    }

    static func pending(_ notificationID: String, on stack: TestStack) async throws -> [Date] {
        try await stack.database.withAdmin { client in
            try await client.query(
                "SELECT next_attempt_at FROM notifications.push_deliveries WHERE notification_id = \(UUID(uuidString: notificationID)!)",
                logger: .test("pushes")
            ).collect().map { try $0.decode(Date.self) }
        }
    }

    @Test("a friend request inside quiet hours is pushed when they end, once; switched off, a queued push is dropped and none is queued")
    func quietHoursAndSwitches() async throws {
        let provider = try await PushProviderDouble()
        do {
            try await run(provider)
        } catch {
            await provider.stop()
            throw error
        }
        await provider.stop()
    }

    func run(_ provider: PushProviderDouble) async throws {
        let rsa = try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        let serviceAccount = try String(
            decoding: JSONSerialization.data(withJSONObject: [
                "type": "service_account", "project_id": Push.projectID, "private_key_id": "key-1", "private_key": rsa.pemRepresentation,
                "client_email": Push.clientEmail, "token_uri": provider.tokenURI,
            ]), as: UTF8.self)
        try await withTestStack("push-quiet") { stack in
            try await stack.start("identity")
            try await stack.start(
                "notifications",
                environment: ["FCM_CREDENTIALS": serviceAccount, "FCM_ENDPOINT": provider.url, "PUSH_INTERVAL_MS": "20", "SIMULATED_CLOCK": "true"])
            try await stack.start("gateway")
            let marco = try await Push.user("Marco", on: stack)
            let token = "fcm-quiet-1:APA91b" + String(repeating: "q", count: 40)
            #expect(try await marco.http.post("/v1/me/push-tokens", json: ["platform": "fcm", "token": token]).status == 200)
            // Quiet from an hour ago to an hour from now, London time (Marco's zone).
            let (start, end) = (Self.londonTime(-3600), Self.londonTime(3600))
            func preferences(_ disabled: [String]) -> [String: any Sendable] {
                ["notificationsEnabled": true, "quietHours": ["start": start, "end": end], "disabledCategories": disabled, "telemetryOptOut": false]
            }
            #expect(try await marco.http.put("/v1/me/preferences", json: preferences([])).status == 200)
            try await waitUntil("notifications has Marco's quiet hours") {
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.recipients WHERE user_id = \(marco.id) AND quiet_start = \(start)") == 1
            }

            // Inside quiet hours: in the inbox at once, the push queued for their end.
            let ann = try await Push.user("Ann", on: stack)
            let first = try await Push.befriend(marco, from: ann)
            let held = try #require(try await Self.pending(first, on: stack).first, "queued, not sent")
            #expect(held > Date().addingTimeInterval(3000), "held until the quiet hours end, about an hour from now: \(held)")
            #expect(provider.sends(to: token).isEmpty)

            // Social switched off: the queued push is dropped at once.
            #expect(try await marco.http.put("/v1/me/preferences", json: preferences(["social"])).status == 200)
            try await waitUntil("the held push dropped") { try await Self.pending(first, on: stack).isEmpty }
            // And a new friend request is filed in the inbox without any push queued.
            let bob = try await Push.user("Bob", on: stack)
            let second = try await Push.befriend(marco, from: bob)
            #expect(try await Self.pending(second, on: stack).isEmpty, "nothing queued for a switched-off kind")

            // Back on: the next one is held like the first, and goes out once when the quiet hours end.
            #expect(try await marco.http.put("/v1/me/preferences", json: preferences([])).status == 200)
            try await waitUntil("notifications has social back on") {
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.recipients WHERE user_id = \(marco.id) AND disabled_categories = '{}'") == 1
            }
            let cleo = try await Push.user("Cleo", on: stack)
            let third = try await Push.befriend(marco, from: cleo)
            let thirdHeld = try #require(try await Self.pending(third, on: stack).first)
            #expect(provider.sends(to: token).isEmpty, "nothing pushed during quiet hours")

            try await stack.setClock(thirdHeld.addingTimeInterval(1))
            try await waitUntil("the held push sent when the quiet hours ended") { try await Push.settled(third, sent: 1, on: stack) }
            // Marco's daily reminder, at its default time, may fall inside the hour the clock jumped; it waits out the
            // quiet hours too and is pushed with the third, so only the friend requests' pushes are counted.
            let sent = provider.sends(to: token).compactMap { ($0.json["message"] as? [String: Any]).flatMap { $0["data"] as? [String: String] } }
                .filter { $0["kind"] == "friend-request" }
            #expect(sent.count == 1, "once, and only the third: the first was dropped, the second never queued")
            #expect(sent.first?["notificationID"] == third)
            #expect(Set(try await Push.notificationIDs(marco)).isSuperset(of: [first, second, third]), "all three in the inbox")
        }
    }
}
