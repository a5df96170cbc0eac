import Foundation
import SurgeCalendar

/// What progress knows about a person: their time zone and daily goal (from onboarding).
public struct Member: Sendable, Equatable {
    public var userID: UUID
    public var timeZone: String
    public var dailyGoal: Int?

    /// 001 uses its defaults when onboarding was skipped.
    public static let defaultDailyGoal = 20

    public init(userID: UUID, timeZone: String, dailyGoal: Int? = nil) {
        self.userID = userID
        self.timeZone = timeZone
        self.dailyGoal = dailyGoal
    }

    /// The member's calendar; UTC if the zone name identity sent is not one this build knows.
    public var calendar: LocalCalendar { LocalCalendar(zoneNamedOrUTC: timeZone) }
    public var effectiveDailyGoal: Int { dailyGoal ?? Self.defaultDailyGoal }
}
