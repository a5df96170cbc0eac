import CryptoExtras
import Foundation
import JWTKit
import NIOHTTP1
import PostgresNIO
import SurgeContracts
import SurgeTestSupport
import Testing

/// Push as a user meets it: devices registered through the gateway, a friend request pushed to the project's own
/// FCM and APNs double, devices the provider calls gone forgotten, transient failures retried, persistent ones
/// reported. Identity, two replicas of notifications and the gateway run as processes on the real clock (retries wait
/// real time).
@Suite("Notifications: push to FCM and APNs through the gateway", .tags(.system), .kind(.system), .serialized)
struct PushSystemTests {
    struct User {
        var id: UUID
        var http: TestHTTP
    }

    static let projectID = "surge-test"
    static let clientEmail = "push@surge-test.iam.gserviceaccount.com"
    static let apnsKeyID = "ABC123DEFG"
    static let apnsTeamID = "TEAM123456"
    static let apnsTopic = "app.surge.test"

    static func user(_ name: String, on stack: TestStack) async throws -> User {
        let response = try await stack.http().post("/v1/auth/guest", json: ["displayName": name, "timeZone": "Europe/London", "locale": "en-GB"])
        let token = try #require((response.json["tokens"] as? [String: Any])?["accessToken"] as? String, "\(response.text)")
        let id = try #require(((response.json["user"] as? [String: Any])?["id"] as? String).flatMap { UUID(uuidString: $0) })
        // The friend-request handler ignores an addressee it does not know yet (their registration travels on another
        // partition): wait until the notification service has the user.
        try await waitUntil("notifications knows \(name)") {
            try await stack.database.count("SELECT count(*) FROM notifications.recipients WHERE user_id = \(id)") == 1
        }
        return User(id: id, http: try stack.http().authorized(token))
    }

    static func events(_ type: String, on stack: TestStack) async throws -> [[String: Any]] {
        let texts = try await stack.database.withAdmin { client in
            try await client.query("SELECT payload::text FROM notifications.outbox WHERE type = \(type) ORDER BY position", logger: .test("events"))
                .collect().map { try $0.decode(String.self) }
        }
        return texts.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) ?? [:] }
    }

    static func pushEvents(_ type: String, about notificationID: String, on stack: TestStack) async throws -> [[String: Any]] {
        try await events(type, on: stack).filter { $0["notificationID"] as? String == notificationID && $0["channel"] as? String == "push" }
    }

    /// Nothing left to push, and `sent` pushes of the notification delivered.
    static func settled(_ notificationID: String, sent: Int, on stack: TestStack) async throws -> Bool {
        let pending = try await stack.database.count("SELECT count(*) FROM notifications.push_deliveries")
        let delivered = try await pushEvents(NotificationSent.descriptor.type, about: notificationID, on: stack).count
        return pending == 0 && delivered == sent
    }

    static func notificationIDs(_ user: User) async throws -> [String] {
        (try await user.http.get("/v1/me/notifications").json["items"] as? [[String: Any]] ?? []).compactMap { $0["notificationID"] as? String }
    }

    /// A friend request from `from` to `to`; returns the notification's id once it is in `to`'s inbox.
    static func befriend(_ to: User, from: User) async throws -> String {
        let before = Set(try await notificationIDs(to))
        let request = try await from.http.post("/v1/friend-requests", json: ["userID": to.id.uuidString.lowercased()])
        #expect(request.status == 201, "\(request.text)")
        return try await eventually("the friend request's notification") { try await notificationIDs(to).first { !before.contains($0) } }
    }

    static func verifiedClaims<Claims: JWTPayload>(_ jwt: String, as type: Claims.Type, keys: JWTKeyCollection) async throws -> Claims {
        try await keys.verify(jwt, as: type)
    }

    struct AssertionClaims: JWTPayload {
        var iss: IssuerClaim
        var scope: String
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
    }

    struct ProviderClaims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static func header(of jwt: String) throws -> [String: Any] {
        let encoded = try #require(jwt.split(separator: ".").first)
        var part = String(encoded).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while part.count % 4 != 0 { part += "=" }
        let data = try #require(Data(base64Encoded: part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("FCM and APNs receive well-formed pushes once from two replicas; a device gone is forgotten; 503 then success is sent once; persistent failure is reported")
    func push() async throws {
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
        let ec = ES256PrivateKey()
        let serviceAccount = try String(
            decoding: JSONSerialization.data(withJSONObject: [
                "type": "service_account", "project_id": Self.projectID, "private_key_id": "key-1", "private_key": rsa.pemRepresentation,
                "client_email": Self.clientEmail, "token_uri": provider.tokenURI,
            ]), as: UTF8.self)
        try await withTestStack("push") { stack in
            try await stack.start("identity")
            let pushSettings = [
                "FCM_CREDENTIALS": serviceAccount, "FCM_ENDPOINT": provider.url, "APNS_KEY": ec.pemRepresentation, "APNS_KEY_ID": Self.apnsKeyID,
                "APNS_TEAM_ID": Self.apnsTeamID, "APNS_TOPIC": Self.apnsTopic, "APNS_ENDPOINT": provider.url, "PUSH_INTERVAL_MS": "20",
                "PUSH_RETRY_BASE_MS": "100", "PUSH_MAX_ATTEMPTS": "3",
            ]
            // Two replicas, each with its dispatcher polling often: every push below must still be sent once.
            try await stack.start("notifications", environment: pushSettings)
            try await stack.start("notifications", instance: "notifications-2", environment: pushSettings)
            try await stack.start("gateway")
            let marco = try await Self.user("Marco", on: stack)
            let fcmToken = "fcm-device-1:APA91b" + String(repeating: "x", count: 40)
            let apnsToken = String(repeating: "ab12", count: 16)

            // Registering: validation problems, then both devices, listed; another user's device does not exist.
            let bad = try await marco.http.post("/v1/me/push-tokens", json: ["platform": "fcm", "token": "short"])
            #expect(bad.status == 422 && bad.header("content-type") == "application/problem+json", "\(bad.text)")
            #expect((bad.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "token")
            for body in [
                #"{"platform":"pigeon","token":"\#(fcmToken)"}"#, #"{"platform":"FCM","token":"\#(fcmToken)"}"#, #"{"platform":"fcm"}"#,
                #"{"platform":"fcm","token":null}"#, #"{"platform":"fcm","token":42}"#, #"{"platform":"fcm","token":"\#(fcmToken)","extra":1}"#,
                #"{"platform":"fcm","token":"\#(String(repeating: "a", count: 4097))"}"#, #"{"platform":"fcm","token":"abcdefghijklmnop\u0000"}"#,
                #"{"platform":"apns","token":"abcdefghijklmnop/../../x"}"#, "[]", "not json", "",
            ] {
                let refused = try await marco.http.send(.POST, "/v1/me/push-tokens", body: Data(body.utf8))
                #expect((400..<500).contains(refused.status) && refused.header("content-type") == "application/problem+json", "\(body.prefix(60)): \(refused.text)")
            }
            #expect(try await marco.http.delete("/v1/me/push-tokens/not-a-uuid").status == 404)
            let fcm = try await marco.http.post("/v1/me/push-tokens", json: ["platform": "fcm", "token": fcmToken])
            #expect(fcm.status == 200, "\(fcm.text)")
            let again = try await marco.http.post("/v1/me/push-tokens", json: ["platform": "fcm", "token": fcmToken])
            #expect(again.json["pushTokenID"] as? String == fcm.json["pushTokenID"] as? String, "registering again refreshes, not duplicates")
            #expect(try await marco.http.post("/v1/me/push-tokens", json: ["platform": "apns", "token": apnsToken]).status == 200)
            let listed = try await marco.http.get("/v1/me/push-tokens").json["items"] as? [[String: Any]] ?? []
            #expect(Set(listed.compactMap { $0["token"] as? String }) == [fcmToken, apnsToken])
            let ann = try await Self.user("Ann", on: stack)
            let fcmID = try #require(fcm.json["pushTokenID"] as? String)
            #expect(try await ann.http.delete("/v1/me/push-tokens/\(fcmID)").status == 404, "Marco's device is not Ann's to remove")
            #expect((try await ann.http.get("/v1/me/push-tokens").json["items"] as? [Any])?.isEmpty == true)
            #expect(try await marco.http.delete("/v1/me/push-tokens/\(UUID().uuidString)").status == 404)

            // A friend request reaches both providers once, well formed.
            let first = try await Self.befriend(marco, from: ann)
            try await waitUntil("both pushes of the first notification delivered") { try await Self.settled(first, sent: 2, on: stack) }
            #expect(provider.sends(to: fcmToken).count == 1)
            #expect(provider.sends(to: apnsToken).count == 1)

            let exchange = try #require(provider.tokenExchanges.first)
            #expect(provider.tokenExchanges.count == 1, "the access token is cached")
            #expect(exchange.form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
            #expect(exchange.headers["content-type"] == "application/x-www-form-urlencoded")
            let fcmKeys = await JWTKeyCollection().add(rsa: rsa.publicKey, digestAlgorithm: .sha256, kid: "key-1")
            let assertion = try await Self.verifiedClaims(try #require(exchange.form["assertion"]), as: AssertionClaims.self, keys: fcmKeys)
            #expect(assertion.iss.value == Self.clientEmail)
            #expect(assertion.aud.value == [provider.tokenURI])
            #expect(assertion.scope == "https://www.googleapis.com/auth/firebase.messaging")
            #expect(try Self.header(of: try #require(exchange.form["assertion"]))["alg"] as? String == "RS256")

            let send = try #require(provider.sends(to: fcmToken).first)
            #expect(send.path == "/v1/projects/\(Self.projectID)/messages:send")
            #expect(send.headers["authorization"] == "Bearer \(try #require(provider.accessTokensIssued.first))")
            let message = try #require(send.json["message"] as? [String: Any])
            #expect(message["token"] as? String == fcmToken)
            #expect(message["notification"] as? [String: String] == ["title": "Friend request", "body": "Ann wants to be your friend."])
            #expect(message["data"] as? [String: String] == ["deepLink": "surge://friends/requests", "notificationID": first, "kind": "friend-request"])

            let push = try #require(provider.sends(to: apnsToken).first)
            #expect(push.path == "/3/device/\(apnsToken)")
            #expect(push.headers["apns-topic"] == Self.apnsTopic)
            #expect(push.headers["apns-push-type"] == "alert")
            let bearer = try #require(push.headers["authorization"])
            #expect(bearer.hasPrefix("bearer "))
            let providerToken = String(bearer.dropFirst("bearer ".count))
            let apnsKeys = await JWTKeyCollection().add(ecdsa: ec.publicKey, kid: JWKIdentifier(string: Self.apnsKeyID))
            let claims = try await Self.verifiedClaims(providerToken, as: ProviderClaims.self, keys: apnsKeys)
            #expect(claims.iss.value == Self.apnsTeamID)
            #expect(abs(claims.iat.value.timeIntervalSinceNow) < 120)
            let header = try Self.header(of: providerToken)
            #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == Self.apnsKeyID)
            let aps = try #require(push.json["aps"] as? [String: Any])
            #expect(aps["alert"] as? [String: String] == ["title": "Friend request", "body": "Ann wants to be your friend."])
            #expect(push.json["deepLink"] as? String == "surge://friends/requests" && push.json["notificationID"] as? String == first)

            // FCM calls the device unregistered: it is forgotten, and the next notification goes to APNs only.
            provider.script(fcmToken, [.init(status: 404, body: #"{"error":{"code":404,"status":"NOT_FOUND","details":[{"errorCode":"UNREGISTERED"}]}}"#)])
            let bob = try await Self.user("Bob", on: stack)
            let second = try await Self.befriend(marco, from: bob)
            let gone = try await eventually("the unregistered device's failure") { () -> [String: Any]? in
                try await Self.pushEvents(NotificationFailed.descriptor.type, about: second, on: stack).first
            }
            #expect(gone["reason"] as? String == "fcm-unregistered")
            try await waitUntil("the APNs push of the second notification delivered") { try await Self.settled(second, sent: 1, on: stack) }
            let remaining = try await marco.http.get("/v1/me/push-tokens").json["items"] as? [[String: Any]] ?? []
            #expect(remaining.compactMap { $0["token"] as? String } == [apnsToken], "the unregistered FCM device is no longer listed")
            #expect(provider.sends(to: fcmToken).count == 2)

            // A new FCM device answers 503 once, then accepts: sent once. APNs keeps answering 503: given up, reported.
            let newFCMToken = "fcm-device-2:APA91b" + String(repeating: "y", count: 40)
            #expect(try await marco.http.post("/v1/me/push-tokens", json: ["platform": "fcm", "token": newFCMToken]).status == 200)
            provider.script(newFCMToken, [.init(status: 503, headers: ["Retry-After": "0"]), .init(status: 200, body: #"{"name":"projects/surge-test/messages/2"}"#)])
            provider.script(apnsToken, [.init(status: 503, body: #"{"reason":"ServiceUnavailable"}"#)])
            let cleo = try await Self.user("Cleo", on: stack)
            let third = try await Self.befriend(marco, from: cleo)
            let failed = try await eventually("the APNs push given up", timeout: .seconds(30)) { () -> [String: Any]? in
                try await Self.pushEvents(NotificationFailed.descriptor.type, about: third, on: stack).first
            }
            #expect(failed["reason"] as? String == "gave-up: apns-http-503")
            #expect(failed["attempts"] as? Int == 3)
            try await waitUntil("the retried FCM push delivered") { try await Self.settled(third, sent: 1, on: stack) }
            #expect(provider.sends(to: newFCMToken).count == 2, "503, then the success")
            #expect(provider.sends(to: apnsToken).count == 2 + 3, "two delivered before, three tries of the third")
            #expect(provider.sends(to: fcmToken).count == 2, "the forgotten device got nothing more")
            #expect(try await Self.pushEvents(NotificationSent.descriptor.type, about: third, on: stack).count == 1, "sent once")

            // A deleted account's devices are erased.
            let deleted = try await marco.http.delete("/v1/me?confirm=true")
            #expect(deleted.status == 204, "\(deleted.text)")
            try await waitUntil("Marco's devices erased") {
                try await stack.database.count("SELECT count(*) FROM notifications.push_tokens WHERE user_id = \(marco.id)") == 0
            }
        }
    }
}
