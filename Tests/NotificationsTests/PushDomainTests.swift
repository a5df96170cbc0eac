import Foundation
import NotificationsDomain
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Notifications: push outcomes, retry schedule, payloads, device tokens", .tags(.unit), .kind(.unit))
struct PushDomainTests {
    static func json(_ text: String) -> Data { Data(text.utf8) }
    static let empty = Data()

    static func fcmError(_ status: Int, _ code: String, errorCode: String? = nil) -> Data {
        let details = errorCode.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
        return json(#"{"error":{"code":\#(status),"message":"m","status":"\#(code)"\#(details)}}"#)
    }

    @Test("FCM: 2xx delivered; unregistered and 404 forget the device; 401, 429 and 5xx retried with Retry-After; the rest fail")
    func fcmOutcomes() {
        #expect(ProviderResponse.fcm(status: 200, body: Self.json(#"{"name":"projects/p/messages/1"}"#), retryAfter: nil) == .delivered)
        #expect(ProviderResponse.fcm(status: 404, body: Self.fcmError(404, "NOT_FOUND", errorCode: "UNREGISTERED"), retryAfter: nil)
            == .targetGone(reason: "fcm-unregistered"))
        #expect(ProviderResponse.fcm(status: 404, body: Self.empty, retryAfter: nil) == .targetGone(reason: "fcm-unregistered"))
        #expect(ProviderResponse.fcm(status: 400, body: Self.fcmError(400, "INVALID_ARGUMENT", errorCode: "UNREGISTERED"), retryAfter: nil)
            == .targetGone(reason: "fcm-unregistered"))
        #expect(ProviderResponse.fcm(status: 403, body: Self.fcmError(403, "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH"), retryAfter: nil)
            == .targetGone(reason: "fcm-sender-id-mismatch"))
        #expect(ProviderResponse.fcm(status: 401, body: Self.fcmError(401, "UNAUTHENTICATED"), retryAfter: nil)
            == .retry(after: nil, reason: "fcm-unauthenticated"))
        #expect(ProviderResponse.fcm(status: 429, body: Self.fcmError(429, "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED"), retryAfter: 30)
            == .retry(after: 30, reason: "fcm-quota-exceeded"))
        #expect(ProviderResponse.fcm(status: 503, body: Self.empty, retryAfter: 5) == .retry(after: 5, reason: "fcm-http-503"))
        #expect(ProviderResponse.fcm(status: 500, body: Self.fcmError(500, "INTERNAL"), retryAfter: nil) == .retry(after: nil, reason: "fcm-http-500"))
        #expect(ProviderResponse.fcm(status: 400, body: Self.fcmError(400, "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT"), retryAfter: nil)
            == .failed(reason: "fcm-invalid-argument"))
        #expect(ProviderResponse.fcm(status: 403, body: Self.json("<html>"), retryAfter: nil) == .failed(reason: "fcm-http-403"))
    }

    @Test("APNs: 2xx delivered; 410, BadDeviceToken, Unregistered, DeviceTokenNotForTopic forget the device; stale provider tokens, 429, 5xx retried")
    func apnsOutcomes() {
        #expect(ProviderResponse.apns(status: 200, body: Self.empty, retryAfter: nil) == .delivered)
        #expect(ProviderResponse.apns(status: 410, body: Self.json(#"{"reason":"Unregistered","timestamp":1}"#), retryAfter: nil)
            == .targetGone(reason: "apns-unregistered"))
        #expect(ProviderResponse.apns(status: 410, body: Self.json(#"{"reason":"ExpiredToken"}"#), retryAfter: nil)
            == .targetGone(reason: "apns-unregistered"))
        #expect(ProviderResponse.apns(status: 400, body: Self.json(#"{"reason":"BadDeviceToken"}"#), retryAfter: nil)
            == .targetGone(reason: "apns-bad-device-token"))
        #expect(ProviderResponse.apns(status: 400, body: Self.json(#"{"reason":"Unregistered"}"#), retryAfter: nil)
            == .targetGone(reason: "apns-unregistered"))
        #expect(ProviderResponse.apns(status: 400, body: Self.json(#"{"reason":"DeviceTokenNotForTopic"}"#), retryAfter: nil)
            == .targetGone(reason: "apns-device-token-not-for-topic"))
        #expect(ProviderResponse.apns(status: 403, body: Self.json(#"{"reason":"ExpiredProviderToken"}"#), retryAfter: nil)
            == .retry(after: nil, reason: "apns-expired-provider-token"))
        #expect(ProviderResponse.apns(status: 429, body: Self.json(#"{"reason":"TooManyRequests"}"#), retryAfter: 12)
            == .retry(after: 12, reason: "apns-too-many-requests"))
        #expect(ProviderResponse.apns(status: 503, body: Self.json(#"{"reason":"ServiceUnavailable"}"#), retryAfter: nil)
            == .retry(after: nil, reason: "apns-http-503"))
        #expect(ProviderResponse.apns(status: 400, body: Self.json(#"{"reason":"BadTopic"}"#), retryAfter: nil) == .failed(reason: "apns-bad-topic"))
        #expect(ProviderResponse.apns(status: 403, body: Self.json(#"{"reason":"BadCertificateEnvironment"}"#), retryAfter: nil)
            == .failed(reason: "apns-bad-certificate-environment"))
        #expect(ProviderResponse.apns(status: 413, body: Self.empty, retryAfter: nil) == .failed(reason: "apns-http-413"))
    }

    @Test("a provider's code becomes a short plain slug, whatever it holds")
    func slugs() {
        #expect(ProviderResponse.apns(status: 400, body: Self.json(#"{"reason":"token abc/def?x=1 \u0000 ☃"}"#), retryAfter: nil)
            == .failed(reason: "apns-token-abc-def-x-1"))
        let long = String(repeating: "a", count: 500)
        guard case .failed(let reason) = ProviderResponse.apns(status: 400, body: Self.json(#"{"reason":"\#(long)"}"#), retryAfter: nil) else {
            Issue.record("a refusal")
            return
        }
        #expect(reason.count <= "apns-".count + 40)
    }

    @Test("Retry-After: seconds or an HTTP date, relative to now; anything else is none")
    func retryAfter() {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        #expect(ProviderResponse.retryAfter("120", now: now) == 120)
        #expect(ProviderResponse.retryAfter(" 0 ", now: now) == 0)
        #expect(ProviderResponse.retryAfter(nil, now: now) == nil)
        #expect(ProviderResponse.retryAfter("", now: now) == nil)
        #expect(ProviderResponse.retryAfter("-5", now: now) == nil)
        #expect(ProviderResponse.retryAfter("soon", now: now) == nil)
        let date = Date(timeIntervalSince1970: 1_795_000_090)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        #expect(ProviderResponse.retryAfter(formatter.string(from: date), now: now) == 90)
        #expect(ProviderResponse.retryAfter(formatter.string(from: now.addingTimeInterval(-60)), now: now) == 0, "a date gone by: at once")
    }

    static let policy = RetryPolicy(maxAttempts: 5, baseDelay: 2, maxDelay: 10, giveUpAfter: 3600)
    static let created = Date(timeIntervalSince1970: 1_795_000_000)

    @Test("backoff doubles from the base up to the cap")
    func backoff() {
        #expect((1...6).map { Self.policy.backoff(afterAttempts: $0) } == [2, 4, 8, 10, 10, 10])
        #expect(Self.policy.backoff(afterAttempts: 10_000) == 10, "no overflow after many attempts")
    }

    @Test("equal jitter: between half the backoff and all of it; never before Retry-After")
    func jitter() {
        let now = Self.created.addingTimeInterval(10)
        #expect(Self.policy.decide(afterAttempts: 2, createdAt: Self.created, now: now, retryAfter: nil, jitter: 0) == .retry(at: now.addingTimeInterval(2)))
        #expect(Self.policy.decide(afterAttempts: 2, createdAt: Self.created, now: now, retryAfter: nil, jitter: 0.5) == .retry(at: now.addingTimeInterval(3)))
        #expect(Self.policy.decide(afterAttempts: 2, createdAt: Self.created, now: now, retryAfter: nil, jitter: 1) == .retry(at: now.addingTimeInterval(4)))
        #expect(Self.policy.decide(afterAttempts: 2, createdAt: Self.created, now: now, retryAfter: nil, jitter: 7) == .retry(at: now.addingTimeInterval(4)))
        #expect(Self.policy.decide(afterAttempts: 1, createdAt: Self.created, now: now, retryAfter: 30, jitter: 1) == .retry(at: now.addingTimeInterval(30)))
        #expect(Self.policy.decide(afterAttempts: 3, createdAt: Self.created, now: now, retryAfter: 1, jitter: 0) == .retry(at: now.addingTimeInterval(4)))
    }

    @Test("given up after the last attempt, or when the next try would come too late")
    func givingUp() {
        let now = Self.created.addingTimeInterval(10)
        #expect(Self.policy.decide(afterAttempts: 4, createdAt: Self.created, now: now, retryAfter: nil, jitter: 0) != .giveUp)
        #expect(Self.policy.decide(afterAttempts: 5, createdAt: Self.created, now: now, retryAfter: nil, jitter: 0) == .giveUp)
        #expect(Self.policy.decide(afterAttempts: 1, createdAt: Self.created, now: Self.created.addingTimeInterval(3600), retryAfter: nil, jitter: 0) == .giveUp)
        #expect(Self.policy.decide(afterAttempts: 1, createdAt: Self.created, now: Self.created.addingTimeInterval(3599), retryAfter: nil, jitter: 0) != .giveUp, "just in time")
        #expect(Self.policy.decide(afterAttempts: 1, createdAt: Self.created, now: now, retryAfter: 7200, jitter: 0) == .giveUp, "Retry-After beyond the limit")
        let once = RetryPolicy(maxAttempts: 1, baseDelay: 1, maxDelay: 1, giveUpAfter: 60)
        #expect(once.decide(afterAttempts: 1, createdAt: Self.created, now: Self.created, retryAfter: nil, jitter: 0) == .giveUp)
    }

    static let message = PushMessage(
        notificationID: UUID(uuidString: "0C6D1D36-3B2C-4F2D-9D7E-6E1A1B2C3D4E")!, kind: "friend-request", title: "Friend request",
        body: "Ann wants to be your friend.", deepLink: "surge://friends/requests")

    @Test("the FCM body: the device token, the notification's title and body, the routing data as strings")
    func fcmBody() throws {
        let body = try JSONSerialization.jsonObject(with: try Self.message.fcmBody(token: "device-token-123456")) as? [String: Any]
        let message = try #require(body?["message"] as? [String: Any])
        #expect(message["token"] as? String == "device-token-123456")
        #expect(message["notification"] as? [String: String] == ["title": "Friend request", "body": "Ann wants to be your friend."])
        #expect(message["data"] as? [String: String] == [
            "deepLink": "surge://friends/requests", "notificationID": "0c6d1d36-3b2c-4f2d-9d7e-6e1a1b2c3d4e", "kind": "friend-request",
        ])
    }

    @Test("the APNs body: an alert in aps, the routing data beside it")
    func apnsBody() throws {
        let body = try #require(try JSONSerialization.jsonObject(with: try Self.message.apnsBody()) as? [String: Any])
        let aps = try #require(body["aps"] as? [String: Any])
        #expect(aps["alert"] as? [String: String] == ["title": "Friend request", "body": "Ann wants to be your friend."])
        #expect(body["deepLink"] as? String == "surge://friends/requests")
        #expect(body["notificationID"] as? String == "0c6d1d36-3b2c-4f2d-9d7e-6e1a1b2c3d4e")
        #expect(body["kind"] as? String == "friend-request")
    }

    @Test("device tokens: 16 to 4096 URL-safe characters, as the schema's pattern says")
    func tokens() throws {
        let pattern = try Regex(PushTokenRules.pattern)
        let accepted = [
            String(repeating: "a1", count: 32), "f3Jk9pQ2RwS:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx_z", String(repeating: "x", count: 16),
            String(repeating: "y", count: 4096),
        ]
        let refused = [
            "", "short", String(repeating: "z", count: 15), String(repeating: "z", count: 4097), "abcdefghijklmnop/../x", "abcdefghijklmnopq r",
            "abcdefghijklmnopé", "abcdefghijklmnop?x=1", "abcdefghijklmnop\u{0}",
        ]
        for token in accepted {
            #expect(PushTokenRules.validate(token).isEmpty, "\(token.prefix(20))")
            #expect(token.wholeMatch(of: pattern) != nil)
        }
        for token in refused {
            #expect(PushTokenRules.validate(token) == [FieldError(field: "token", message: "must be 16 to 4096 letters, digits, '_', ':', '.' or '-'")])
            #expect(token.wholeMatch(of: pattern) == nil, "\(token.prefix(20))")
        }
    }
}
