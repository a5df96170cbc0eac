import Foundation
import SurgeContracts

/// A user's preferences. Until a user saves any, the defaults apply: notifications on, no daily reminder, no quiet
/// hours, telemetry on (003 FR-022: enabled by default, opt-out takes effect at once).
public struct Preferences: Sendable, Equatable {
    public var notificationsEnabled: Bool
    public var dailyReminderTime: LocalTime?
    public var quietHours: QuietHours?
    public var telemetryOptOut: Bool

    public static let defaults = Preferences(notificationsEnabled: true, dailyReminderTime: nil, quietHours: nil, telemetryOptOut: false)

    public init(notificationsEnabled: Bool, dailyReminderTime: LocalTime?, quietHours: QuietHours?, telemetryOptOut: Bool) {
        self.notificationsEnabled = notificationsEnabled
        self.dailyReminderTime = dailyReminderTime
        self.quietHours = quietHours
        self.telemetryOptOut = telemetryOptOut
    }

    /// A full replacement. Quiet hours that start and end at the same minute span no time: they are stored as no
    /// quiet hours (a client that wants silence all day turns notifications off), so "none" has one form.
    public static func validated(
        notificationsEnabled: Bool, dailyReminderTime: LocalTime?, quietHours: QuietHours?, telemetryOptOut: Bool
    ) throws(IdentityError) -> Preferences {
        Preferences(
            notificationsEnabled: notificationsEnabled, dailyReminderTime: dailyReminderTime,
            quietHours: quietHours.flatMap { $0.start == $0.end ? nil : $0 }, telemetryOptOut: telemetryOptOut)
    }
}
