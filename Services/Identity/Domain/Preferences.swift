import Foundation
import SurgeContracts

/// A user's preferences. Until a user saves any, the defaults apply: notifications on with every category, no daily
/// reminder, no quiet hours, telemetry on (003 FR-022: enabled by default, opt-out takes effect at once).
public struct Preferences: Sendable, Equatable {
    public var notificationsEnabled: Bool
    public var dailyReminderTime: LocalTime?
    public var quietHours: QuietHours?
    /// The notification categories switched off, in declaration order, each once.
    public var disabledCategories: [NotificationCategory]
    public var telemetryOptOut: Bool

    public static let defaults = Preferences(
        notificationsEnabled: true, dailyReminderTime: nil, quietHours: nil, disabledCategories: [], telemetryOptOut: false)

    public init(
        notificationsEnabled: Bool, dailyReminderTime: LocalTime?, quietHours: QuietHours?, disabledCategories: [NotificationCategory],
        telemetryOptOut: Bool
    ) {
        self.notificationsEnabled = notificationsEnabled
        self.dailyReminderTime = dailyReminderTime
        self.quietHours = quietHours
        self.disabledCategories = disabledCategories
        self.telemetryOptOut = telemetryOptOut
    }

    /// A full replacement. Quiet hours that start and end at the same minute span no time: they are stored as no
    /// quiet hours (a client that wants silence all day turns notifications off), so "none" has one form. Categories
    /// are a set: a repeated one counts once, and their order is the declaration's, so equal choices compare equal.
    public static func validated(
        notificationsEnabled: Bool, dailyReminderTime: LocalTime?, quietHours: QuietHours?, disabledCategories: [NotificationCategory],
        telemetryOptOut: Bool
    ) throws(IdentityError) -> Preferences {
        Preferences(
            notificationsEnabled: notificationsEnabled, dailyReminderTime: dailyReminderTime,
            quietHours: quietHours.flatMap { $0.start == $0.end ? nil : $0 },
            disabledCategories: NotificationCategory.allCases.filter(disabledCategories.contains), telemetryOptOut: telemetryOptOut)
    }
}
