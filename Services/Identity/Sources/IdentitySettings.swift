import Foundation
import IdentityDomain
import SurgeRuntime

/// Identity's own settings, read from the environment:
///
/// | variable | default | meaning |
/// |---|---|---|
/// | `BCRYPT_COST` | 12 | bcrypt work factor (4…31; tests use a low one) |
/// | `REFRESH_TOKEN_TTL_DAYS` | 30 | lifetime of each refresh token (sliding: every refresh issues a fresh one) |
/// | `INVITE_LINK_BASE` | `https://surge.example/join/` | prefix of group invite links; the code follows |
/// | `APPLE_JWKS_URL`, `APPLE_CLIENT_IDS` | Apple's keys, none | Sign in with Apple; off without client ids |
/// | `GOOGLE_JWKS_URL`, `GOOGLE_CLIENT_IDS` | Google's keys, none | Sign in with Google; off without client ids |
/// | `PASSWORD_RESET_TTL_MINUTES`, `EMAIL_VERIFICATION_TTL_HOURS` | 30, 48 | how long mailed links work |
/// | `PASSWORD_RESET_LINK_BASE`, `EMAIL_VERIFICATION_LINK_BASE` | `https://surge.example/reset-password#token=`, `https://surge.example/verify-email#token=` | mailed links; the token follows |
/// | `NOTIFICATIONS_URL`, `MAIL_RELAY_INTERVAL_MS` | `http://127.0.0.1:8086`, 1000 | where account mails are handed over, and how often queued ones are looked for |
/// | `JWT_SIGNING_KEY`, `JWT_SIGNING_KEY_ID`, `JWT_RETIRED_PUBLIC_KEYS`, `ACCESS_TOKEN_TTL_SECONDS` | see `TokenSettings` | how access tokens are signed |
public struct IdentitySettings: Sendable {
    public var bcryptCost: UInt8
    public var refreshTokenLifetime: TimeInterval
    public var inviteLinkBase: String
    public var social: [SocialProvider: SocialProviderConfiguration]
    public var signInThrottle: SignInThrottle
    public var tokenLifetimes: AccountTokenLifetimes
    var mailLinks: MailLinks
    public var notificationsURL: String
    public var mailRelayInterval: Duration
    public var mailThrottle: MailRequestThrottle
    var tokens = TokenSettings()

    public init(
        bcryptCost: UInt8 = 12, refreshTokenLifetime: TimeInterval = 30 * 86_400, inviteLinkBase: String = "https://surge.example/join/",
        social: [SocialProvider: SocialProviderConfiguration] = [:], signInThrottle: SignInThrottle = SignInThrottle(),
        tokenLifetimes: AccountTokenLifetimes = AccountTokenLifetimes(),
        passwordResetLinkBase: String = "https://surge.example/reset-password#token=",
        emailVerificationLinkBase: String = "https://surge.example/verify-email#token=", notificationsURL: String = "http://127.0.0.1:8086",
        mailRelayInterval: Duration = .seconds(1), mailThrottle: MailRequestThrottle = MailRequestThrottle()
    ) {
        self.tokenLifetimes = tokenLifetimes
        self.mailLinks = MailLinks(passwordReset: passwordResetLinkBase, emailVerification: emailVerificationLinkBase)
        self.notificationsURL = notificationsURL
        self.mailRelayInterval = mailRelayInterval
        self.mailThrottle = mailThrottle
        self.bcryptCost = bcryptCost
        self.refreshTokenLifetime = refreshTokenLifetime
        self.inviteLinkBase = inviteLinkBase
        self.social = social
        self.signInThrottle = signInThrottle
    }

    public static func from(_ reader: EnvironmentReader, environment: DeploymentEnvironment) throws -> IdentitySettings {
        var settings = IdentitySettings(
            bcryptCost: UInt8(try reader.int("BCRYPT_COST", default: 12, range: 4...31)),
            refreshTokenLifetime: Double(try reader.int("REFRESH_TOKEN_TTL_DAYS", default: 30, range: 1...365)) * 86_400,
            inviteLinkBase: reader.string("INVITE_LINK_BASE", default: "https://surge.example/join/"),
            social: Dictionary(uniqueKeysWithValues: SocialProvider.allCases.map { ($0, SocialProviderConfiguration.from(reader, provider: $0)) }),
            tokenLifetimes: AccountTokenLifetimes(
                passwordReset: Double(try reader.int("PASSWORD_RESET_TTL_MINUTES", default: 30, range: 5...1440)) * 60,
                emailVerification: Double(try reader.int("EMAIL_VERIFICATION_TTL_HOURS", default: 48, range: 1...720)) * 3600),
            passwordResetLinkBase: reader.string("PASSWORD_RESET_LINK_BASE", default: "https://surge.example/reset-password#token="),
            emailVerificationLinkBase: reader.string("EMAIL_VERIFICATION_LINK_BASE", default: "https://surge.example/verify-email#token="),
            notificationsURL: reader.string("NOTIFICATIONS_URL", default: "http://127.0.0.1:8086"),
            mailRelayInterval: .milliseconds(try reader.int("MAIL_RELAY_INTERVAL_MS", default: 1000, range: 10...60_000)))
        settings.tokens = try TokenSettings.from(reader, environment: environment)
        return settings
    }

    public func inviteLink(_ code: String) -> String { inviteLinkBase + code }
}

extension SocialProviderConfiguration {
    /// `APPLE_JWKS_URL`, `APPLE_CLIENT_IDS`, `GOOGLE_JWKS_URL`, `GOOGLE_CLIENT_IDS`.
    public static func from(_ reader: EnvironmentReader, provider: SocialProvider) -> SocialProviderConfiguration {
        let prefix = provider.rawValue.uppercased()
        let ids = reader.string("\(prefix)_CLIENT_IDS", default: "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return SocialProviderConfiguration(
            provider: provider, jwksURL: reader.string("\(prefix)_JWKS_URL", default: provider.defaultJWKSURL),
            clientIDs: Set(ids.filter { !$0.isEmpty }))
    }
}
