import Foundation
import NotificationsDomain
import SurgeRuntime

/// The operator's webhook settings.
struct WebhookSettings: Sendable {
    var policy: WebhookTargetPolicy
    /// How often due messages are looked for.
    var interval: Duration
    /// The most one attempt may take, connecting included.
    var attemptTimeout: TimeInterval
    var disableRule: WebhookDisableRule
    /// How long the previous secret keeps signing after a rotation.
    var rotationGrace: TimeInterval

    static func from(_ reader: EnvironmentReader) throws -> WebhookSettings {
        WebhookSettings(
            policy: WebhookTargetPolicy(
                allowHTTP: try reader.bool("WEBHOOKS_ALLOW_HTTP", default: false),
                allowPrivateTargets: try reader.bool("WEBHOOKS_ALLOW_PRIVATE_TARGETS", default: false)),
            interval: .milliseconds(try reader.int("WEBHOOKS_INTERVAL_MS", default: 1000, range: 10...60_000)),
            attemptTimeout: TimeInterval(try reader.int("WEBHOOKS_TIMEOUT_SECONDS", default: 10, range: 1...60)),
            disableRule: WebhookDisableRule(
                failingFor: TimeInterval(try reader.int("WEBHOOKS_DISABLE_AFTER_SECONDS", default: 5 * 86_400, range: 1...90 * 86_400)),
                consecutiveFailures: try reader.int("WEBHOOKS_DISABLE_AFTER_FAILURES", default: 0, range: 0...1_000_000)),
            rotationGrace: TimeInterval(try reader.int("WEBHOOKS_ROTATION_GRACE_SECONDS", default: 86_400, range: 0...30 * 86_400)))
    }
}
