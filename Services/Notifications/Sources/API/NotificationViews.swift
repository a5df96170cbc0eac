import Foundation
import Hummingbird
import NotificationsDomain
import SurgeContracts
import SurgeRuntime

struct NotificationView: ResponseCodable {
    var notificationID: UUID
    /// `daily-reminder`, `badge-earned`, `friend-request`, `challenge-invitation`, `overtaken`; the list may grow.
    var kind: String
    var title: String
    var body: String
    /// The screen the app opens: `surge://badges`, `surge://today`...
    var deepLink: String
    var createdAt: Date
    var read: Bool
    var archived: Bool
}

struct NotificationPageView: ResponseCodable {
    var items: [NotificationView]
    var nextCursor: String?
    var unread: Int
}

struct UnreadCountView: ResponseCodable {
    var unread: Int
}

/// The caller's part of the data export: their notifications and push devices.
struct NotificationsExport: ResponseCodable {
    var notifications: [NotificationView]
    var pushTokens: [PushTokenView]
}

/// A device to send push notifications to.
struct PushTokenRequest: Codable, Sendable {
    var platform: PushPlatform
    /// The token the platform's SDK gave the app (FCM registration token, APNs device token in hex).
    var token: String
}

extension PushTokenRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "platform": .init(description: "`fcm` (Firebase Cloud Messaging: Android, web) or `apns` (Apple)."),
        "token": .init(
            minLength: 16, maxLength: PushTokenRules.maxLength, pattern: PushTokenRules.pattern,
            description: "The device token from the platform's SDK. Registering it again refreshes it; a user keeps at most "
                + "\(PushTokenRules.maxTokensPerUser) devices, the one registered longest ago making way.",
            example: "f3Jk9pQ2RwS:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"),
    ]
}

struct PushTokenView: ResponseCodable {
    var pushTokenID: UUID
    var platform: PushPlatform
    var token: String
    var registeredAt: Date

    init(_ token: PushToken) {
        pushTokenID = token.tokenID
        platform = token.platform
        self.token = token.token
        registeredAt = token.registeredAt
    }
}

struct PushTokenListView: ResponseCodable {
    /// The latest registered first; at most 20.
    var items: [PushTokenView]
}
