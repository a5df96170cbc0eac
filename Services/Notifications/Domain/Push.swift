import Foundation
import SurgeContracts

/// Where a device's push notifications go: Firebase Cloud Messaging (Android, web) or the Apple Push Notification service.
public enum PushPlatform: String, Sendable, Codable, CaseIterable, JSONSchemaEnum {
    case fcm, apns

    /// A client cannot register a platform the server does not know, so the list is closed for requests.
    public static var isExtensible: Bool { false }
}

/// What a client may register as a device token.
public enum PushTokenRules {
    /// A user's devices; registering one more forgets the one registered longest ago.
    public static let maxTokensPerUser = 20
    public static let maxLength = 4096
    /// FCM tokens use letters, digits, `_`, `-` and `:`; APNs tokens are hex. Both travel in URLs, so nothing else is taken.
    public static let pattern = "^[A-Za-z0-9_:.-]{16,\(maxLength)}$"

    public static func validate(_ token: String) -> [FieldError] {
        guard (16...maxLength).contains(token.utf8.count), token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_:.-".contains($0)) }) else {
            return [FieldError(field: "token", message: "must be 16 to \(maxLength) letters, digits, '_', ':', '.' or '-'")]
        }
        return []
    }
}

/// What a push says: the inbox notification's words, its screen, and what it is about.
public struct PushMessage: Sendable, Equatable {
    public var notificationID: UUID
    public var kind: String
    public var title: String
    public var body: String
    public var deepLink: String

    public init(notificationID: UUID, kind: String, title: String, body: String, deepLink: String) {
        self.notificationID = notificationID
        self.kind = kind
        self.title = title
        self.body = body
        self.deepLink = deepLink
    }

    /// The app's routing data, the same on both platforms (FCM data values must be strings).
    public var data: [String: String] {
        ["deepLink": deepLink, "notificationID": notificationID.key, "kind": kind]
    }

    /// The FCM HTTP v1 `messages:send` body for one device.
    public func fcmBody(token: String) throws -> Data {
        struct Body: Encodable {
            struct Message: Encodable {
                struct Notification: Encodable { var title: String, body: String }
                var token: String
                var notification: Notification
                var data: [String: String]
            }
            var message: Message
        }
        return try SurgeJSON.apiEncode(Body(message: .init(token: token, notification: .init(title: title, body: body), data: data)))
    }

    /// The APNs payload: an alert with the app's routing data beside `aps`.
    public func apnsBody() throws -> Data {
        struct Body: Encodable {
            struct APS: Encodable {
                struct Alert: Encodable { var title: String, body: String }
                var alert: Alert
                var sound = "default"
            }
            var aps: APS
            var deepLink: String
            var notificationID: String
            var kind: String
        }
        return try SurgeJSON.apiEncode(
            Body(aps: .init(alert: .init(title: title, body: body)), deepLink: deepLink, notificationID: data["notificationID"] ?? "", kind: kind))
    }
}

/// What one attempt to hand a notification to a channel came to. Reasons are short slugs fit for events and logs:
/// never a token or a secret.
public enum DeliveryOutcome: Sendable, Equatable {
    case delivered
    /// Delivered, and the provider named its message: its later reports about it (bounces) are matched by that id.
    case accepted(providerMessageID: String)
    /// A transient failure; `after` is the provider's `Retry-After`, when it sent one.
    case retry(after: TimeInterval?, reason: String)
    /// The device is gone (uninstalled, token expired or meant for another app): forget the token.
    case targetGone(reason: String)
    /// A failure that retrying will not cure.
    case failed(reason: String)
}

extension DeliveryOutcome {
    public var providerMessageID: String? {
        if case .accepted(let id) = self { id } else { nil }
    }
}

/// How a provider's answer is read. Only the status, the `Retry-After` header and the provider's error code matter.
public enum ProviderResponse {
    /// FCM HTTP v1: 404 or `UNREGISTERED` is a token the app no longer has, `SENDER_ID_MISMATCH` one for another
    /// project; 401 (an access token gone stale), 429 and 5xx are worth another try.
    public static func fcm(status: Int, body: Data, retryAfter: TimeInterval?) -> DeliveryOutcome {
        struct ErrorBody: Decodable {
            struct Detail: Decodable { var errorCode: String? }
            struct Inner: Decodable { var status: String?, details: [Detail]? }
            var error: Inner
        }
        if (200..<300).contains(status) { return .delivered }
        let error = try? SurgeJSON.decode(ErrorBody.self, from: body).error
        let code = error?.details?.compactMap(\.errorCode).first ?? error?.status ?? ""
        switch (status, code) {
        case (_, "UNREGISTERED"), (404, _): return .targetGone(reason: "fcm-unregistered")
        case (_, "SENDER_ID_MISMATCH"): return .targetGone(reason: "fcm-sender-id-mismatch")
        case (401, _): return .retry(after: nil, reason: "fcm-unauthenticated")
        case (429, _): return .retry(after: retryAfter, reason: "fcm-quota-exceeded")
        case (500..., _): return .retry(after: retryAfter, reason: "fcm-http-\(status)")
        default: return .failed(reason: "fcm-" + (code.isEmpty ? "http-\(status)" : slug(code)))
        }
    }

    /// APNs: 410, or 400 `BadDeviceToken` / `Unregistered` / `DeviceTokenNotForTopic`, is a device gone; 403 with a
    /// stale or refused provider token, 429 and 5xx are worth another try.
    public static func apns(status: Int, body: Data, retryAfter: TimeInterval?) -> DeliveryOutcome {
        struct ErrorBody: Decodable { var reason: String? }
        if (200..<300).contains(status) { return .delivered }
        let reason = (try? SurgeJSON.decode(ErrorBody.self, from: body))?.reason ?? ""
        switch (status, reason) {
        case (410, _), (_, "Unregistered"): return .targetGone(reason: "apns-unregistered")
        case (400, "BadDeviceToken"): return .targetGone(reason: "apns-bad-device-token")
        case (400, "DeviceTokenNotForTopic"): return .targetGone(reason: "apns-device-token-not-for-topic")
        case (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"): return .retry(after: nil, reason: "apns-" + slug(reason))
        case (429, _): return .retry(after: retryAfter, reason: "apns-too-many-requests")
        case (500..., _): return .retry(after: retryAfter, reason: "apns-http-\(status)")
        default: return .failed(reason: "apns-" + (reason.isEmpty ? "http-\(status)" : slug(reason)))
        }
    }

    /// `Retry-After` as seconds from `now`: a number of seconds or an HTTP date; nil when absent or unreadable.
    public static func retryAfter(_ value: String?, now: Date) -> TimeInterval? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return seconds >= 0 ? TimeInterval(seconds) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value).map { max(0, $0.timeIntervalSince(now)) }
    }

    /// A provider's code as a slug of at most 40 letters, digits and dashes (it comes from outside: keep it small and plain).
    static func slug(_ code: String) -> String {
        var result = ""
        var previous: Character?
        for character in code where result.count < 40 {
            if character.isASCII && (character.isLetter || character.isNumber) {
                // CamelCase (`BadDeviceToken`) breaks where a capital follows a small letter.
                if character.isUppercase, previous?.isLowercase == true { result.append("-") }
                result.append(Character(character.lowercased()))
            } else if let last = result.last, last != "-" {
                result.append("-")
            }
            previous = character
        }
        while result.last == "-" { result.removeLast() }
        return result.isEmpty ? "unknown" : result
    }
}

/// What a delivery attempt settles once the retry policy has had its say, for every channel alike.
public enum DeliveryResolution: Sendable, Equatable {
    case delivered(providerMessageID: String?)
    /// Refused for good; `targetGone` when the device or address is gone and should be forgotten.
    case failed(reason: String, targetGone: Bool)
    /// Transient failures until the policy gave up; the reason starts with `gave-up: `.
    case gaveUp(reason: String)
    case retry(at: Date, reason: String)
}

extension RetryPolicy {
    /// `attempts` counts the attempt that came to `outcome`; `jitter` is a random number in 0..<1.
    public func resolve(_ outcome: DeliveryOutcome, afterAttempts attempts: Int, createdAt: Date, now: Date, jitter: Double) -> DeliveryResolution {
        switch outcome {
        case .delivered, .accepted: .delivered(providerMessageID: outcome.providerMessageID)
        case .targetGone(let reason): .failed(reason: reason, targetGone: true)
        case .failed(let reason): .failed(reason: reason, targetGone: false)
        case .retry(let after, let reason):
            switch decide(afterAttempts: attempts, createdAt: createdAt, now: now, retryAfter: after, jitter: jitter) {
            case .retry(let at): .retry(at: at, reason: reason)
            case .giveUp: .gaveUp(reason: "gave-up: \(reason)")
            }
        }
    }
}

/// When a transient failure is tried again: exponential backoff from `baseDelay`, doubling per attempt up to
/// `maxDelay`, with "equal jitter" (half the delay fixed, half random, so replicas retrying together spread out),
/// never sooner than the provider's `Retry-After`; given up after `maxAttempts` attempts or once the next try would
/// fall more than `giveUpAfter` after the notification was written (a push that late is no longer news).
public struct RetryPolicy: Sendable, Equatable {
    public var maxAttempts: Int
    public var baseDelay: TimeInterval
    public var maxDelay: TimeInterval
    public var giveUpAfter: TimeInterval

    public init(maxAttempts: Int, baseDelay: TimeInterval, maxDelay: TimeInterval, giveUpAfter: TimeInterval) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.giveUpAfter = giveUpAfter
    }

    public enum Decision: Sendable, Equatable {
        case retry(at: Date)
        case giveUp
    }

    /// The backoff after `attempts` failed attempts (1 for the first), before jitter.
    public func backoff(afterAttempts attempts: Int) -> TimeInterval {
        let doublings = Double(min(max(attempts - 1, 0), 62))
        return min(maxDelay, baseDelay * pow(2, doublings))
    }

    /// `jitter` is a random number in 0..<1, passed in so the rule stays a function.
    public func decide(afterAttempts attempts: Int, createdAt: Date, now: Date, retryAfter: TimeInterval?, jitter: Double) -> Decision {
        guard attempts < maxAttempts else { return .giveUp }
        let backoff = backoff(afterAttempts: attempts)
        let jittered = backoff / 2 + backoff / 2 * min(max(jitter, 0), 1)
        let at = now.addingTimeInterval(max(jittered, retryAfter ?? 0))
        return at.timeIntervalSince(createdAt) > giveUpAfter ? .giveUp : .retry(at: at)
    }
}
