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

    /// Validates a full replacement. Quiet hours must not start and end at the same minute (that would be either
    /// nothing or the whole day; say which by turning notifications off instead).
    public static func validated(
        notificationsEnabled: Bool, dailyReminderTime: LocalTime?, quietHours: QuietHours?, telemetryOptOut: Bool
    ) throws(IdentityError) -> Preferences {
        if let quietHours, quietHours.start == quietHours.end {
            throw IdentityError.invalidFields([FieldError(field: "quietHours.end", message: "must differ from quietHours.start")])
        }
        return Preferences(
            notificationsEnabled: notificationsEnabled, dailyReminderTime: dailyReminderTime, quietHours: quietHours,
            telemetryOptOut: telemetryOptOut)
    }
}
