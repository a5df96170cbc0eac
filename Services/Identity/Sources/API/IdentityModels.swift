import Foundation
import Hummingbird
import NIOCore
import IdentityDomain
import NIOFoundationCompat
import SurgeContracts
import SurgeRuntime

// Request and response bodies of identity's public API. The OpenAPI schemas are derived from these types, so they
// stay plain Codable structs: validation happens in the Domain types they are turned into.

// MARK: Sessions

struct GuestRequest: Codable, Sendable {
    var displayName: String
    var timeZone: String
    var locale: String?
    var deviceName: String?
}

struct RegisterRequest: Codable, Sendable {
    var email: String
    var password: String
    var displayName: String
    var timeZone: String
    var locale: String?
    var deviceName: String?
}

struct SignInRequest: Codable, Sendable {
    var email: String
    var password: String
    var deviceName: String?
    /// The `deviceToken` of this device's last sign-in to the account.
    var deviceToken: String?
}

struct SocialSignInRequest: Codable, Sendable {
    var provider: SocialProvider
    /// The provider's ID token (a JWT).
    var idToken: String
    /// Used only when the sign-in creates an account.
    var displayName: String?
    /// Used only when the sign-in creates an account (default UTC).
    var timeZone: String?
    var deviceName: String?
}

struct RefreshTokenRequest: Codable, Sendable {
    var refreshToken: String
}

struct Tokens: Codable, Sendable {
    var accessToken: String
    var accessTokenExpiresAt: Date
    var refreshToken: String
    var refreshTokenExpiresAt: Date
}

struct SessionResponse: ResponseCodable, Sendable {
    var user: Account
    var tokens: Tokens
    /// After a password sign-in or registration: what the device presents at its next sign-in.
    var deviceToken: String?
}

struct SocialSessionResponse: ResponseCodable, Sendable {
    var user: Account
    var tokens: Tokens
    /// Whether this sign-in created the account.
    var newAccount: Bool
}

// MARK: Recovery and verification

struct ForgotPasswordRequest: Codable, Sendable {
    var email: String
}

struct ResetPasswordRequest: Codable, Sendable {
    /// The token from the mailed link.
    var token: String
    var password: String
}

struct VerifyEmailRequest: Codable, Sendable {
    /// The token from the mailed link.
    var token: String
}

struct ChangeEmailRequest: Codable, Sendable {
    var email: String
    /// The account's current password.
    var password: String
}

struct EmailStatusResponse: ResponseCodable, Sendable {
    var email: String?
    var verified: Bool
    /// The address a change waits to verify; it takes effect when the link mailed to it is followed.
    var pendingEmail: String?
}

struct ChangePasswordRequest: Codable, Sendable {
    var currentPassword: String
    var newPassword: String
    var deviceName: String?
}

// MARK: Devices

struct DeviceSessionView: Codable, Sendable {
    var sessionID: UUID
    /// The name given at sign-in, else the app's user agent.
    var name: String
    var createdAt: Date
    /// The last refresh (or the sign-in).
    var lastUsedAt: Date
    /// Whether this is the session of the access token that asked (its `sid`).
    var current: Bool
}

struct DeviceSessionList: ResponseCodable, Sendable {
    var items: [DeviceSessionView]
}

struct EndOtherSessionsRequest: Codable, Sendable {
    /// This device's refresh token: its session is the one kept.
    var refreshToken: String
}

// MARK: Account

struct AccountResponse: ResponseCodable, Sendable {
    var user: Account
}

struct ProfileUpdateRequest: Codable, Sendable {
    var displayName: String?
    /// An https URL, or an empty string to remove the avatar.
    var avatarURL: String?
    var timeZone: String?
    var locale: String?
}

struct CredentialsRequest: Codable, Sendable {
    var email: String
    var password: String
}

struct PreferencesRequest: Codable, Sendable {
    var notificationsEnabled: Bool
    /// `HH:mm` in the user's time zone.
    var dailyReminderTime: LocalTime?
    var quietHours: QuietHours?
    /// Categories of notifications switched off; leave it out for none.
    var disabledCategories: [NotificationCategory]?
    var telemetryOptOut: Bool
}

struct PreferencesResponse: ResponseCodable, Sendable {
    var notificationsEnabled: Bool
    var dailyReminderTime: LocalTime?
    var quietHours: QuietHours?
    var disabledCategories: [NotificationCategory]
    var telemetryOptOut: Bool
    /// Absent while the defaults apply.
    var updatedAt: Date?

    init(_ preferences: Preferences, updatedAt: Date?) {
        notificationsEnabled = preferences.notificationsEnabled
        dailyReminderTime = preferences.dailyReminderTime
        quietHours = preferences.quietHours
        disabledCategories = preferences.disabledCategories
        telemetryOptOut = preferences.telemetryOptOut
        self.updatedAt = updatedAt
    }
}

struct TrainingPlanRequest: Codable, Sendable {
    var activityLevel: ActivityLevel
    var maxPushUpsInOneSet: Int
    var daysPerWeek: Int
    /// Omitted: the recommendation.
    var dailyGoal: Int?
    var startingSeries: Int?
    var recoverySeconds: Int?
}

struct TrainingPlanResponse: ResponseCodable, Sendable {
    var activityLevel: ActivityLevel
    var maxPushUpsInOneSet: Int
    var daysPerWeek: Int
    var dailyGoal: Int
    var startingSeries: Int
    var recoverySeconds: Int
    /// What Surge recommends for these answers.
    var recommendation: TrainingRecommendation
    /// Absent in a preview.
    var updatedAt: Date?

    init(_ plan: TrainingPlan, updatedAt: Date?) {
        activityLevel = plan.answers.activityLevel
        maxPushUpsInOneSet = plan.answers.maxPushUpsInOneSet
        daysPerWeek = plan.answers.daysPerWeek
        dailyGoal = plan.dailyGoal
        startingSeries = plan.startingSeries
        recoverySeconds = plan.recoverySeconds
        recommendation = plan.recommendation
        self.updatedAt = updatedAt
    }
}

/// The body earlier versions confirmed `DELETE /v1/me` with; still accepted beside `?confirm=true`.
struct DeleteAccountRequest: Codable, Sendable {
    var confirm: Bool?
}

// MARK: Friends

struct FriendRequestCreation: Codable, Sendable {
    var userID: UUID
}

// MARK: Groups

struct GroupCreationRequest: Codable, Sendable {
    var name: String
    var kind: GroupKind
    var timeZone: String
}

struct GroupUpdateRequest: Codable, Sendable {
    var name: String?
    var timeZone: String?
}

struct InviteCreationRequest: Codable, Sendable {
    /// 1-720 hours; 72 when omitted.
    var expiresInHours: Int?
}

struct JoinGroupRequest: Codable, Sendable {
    var code: String
}

extension Request {
    /// Decodes a body that may be absent: no body gives nil; a body must be JSON (415 otherwise), as strict as
    /// `request.decode` about fields and types.
    func decodeOptionalBody<Body: Decodable>(_ type: Body.Type, context: SurgeRequestContext) async throws -> Body? {
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: context.maxUploadSize)
        } catch let error where (error as? HTTPError)?.status == .contentTooLarge || error is NIOTooManyBytesError {
            // The second from a body read as a sequence (checked against the signed digest as it arrives).
            throw Problem.tooLarge(limit: context.maxUploadSize)
        }
        guard buffer.readableBytes > 0 else { return nil }
        if let contentType = headers[.contentType]?.lowercased(), !(contentType.hasPrefix("application/json") || contentType.contains("+json")) {
            throw Problem(
                slug: "unsupported-media-type", title: "Unsupported media type", status: .unsupportedMediaType,
                detail: "Send the body as application/json.")
        }
        return try StrictJSONDecoder.decode(type, from: Data(buffer: buffer))
    }
}

extension Friend: ResponseEncodable {}
extension FriendRequest: ResponseEncodable {}
extension GroupSummary: ResponseEncodable {}
extension GroupInvite: ResponseEncodable {}
extension IdentityExport: ResponseEncodable {}
