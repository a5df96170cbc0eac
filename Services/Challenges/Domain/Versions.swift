import Foundation
import SurgeCalendar
import SurgeContracts

/// One version of a definition in the history list.
public struct VersionSummary: Codable, Sendable, Equatable {
    public var version: Int
    /// The first local date the version judges; absent on version 1, which judges from the start.
    public var effectiveFrom: LocalDate?
    public var createdAt: Date

    public init(version: Int, effectiveFrom: LocalDate?, createdAt: Date) {
        self.version = version
        self.effectiveFrom = effectiveFrom
        self.createdAt = createdAt
    }
}

/// When versions apply. Progress judges each day by the version in force on that day, so an edit never changes a
/// day that has already started for anyone it judges: it applies from the next local day in the owner's or group's
/// zone, or, for definitions judged in each participant's own zone (curated challenges, competitions), from the first
/// date that has not begun anywhere.
public enum VersionSchedule {
    /// The easternmost time zone (UTC+14). Its date is the latest local date anywhere on Earth.
    public static let easternmostZone = TimeZone(identifier: "Pacific/Kiritimati") ?? TimeZone(secondsFromGMT: 14 * 3600) ?? .gmt

    /// An edit made at `instant` applies from the next local date in `zone` (the owner's, or the group's).
    public static func effectiveFrom(editedAt instant: Date, in zone: TimeZone) -> LocalDate {
        LocalCalendar(timeZone: zone).date(at: instant).adding(days: 1)
    }

    /// The latest local date anywhere on Earth at `instant` (the date in the easternmost zone).
    public static func latestDate(at instant: Date) -> LocalDate {
        LocalCalendar(timeZone: easternmostZone).date(at: instant)
    }

    /// A content upgrade or a competition edit (judged in every participant's own zone) applies from the first date
    /// that has not begun anywhere: the day after the current date in the easternmost zone.
    public static func contentEffectiveFrom(at instant: Date) -> LocalDate {
        latestDate(at: instant).adding(days: 1)
    }

    /// The version in force on `date`: the latest whose effective date has come. Version 1 is always in force from
    /// the start.
    public static func versionInForce(on date: LocalDate, among versions: [VersionSummary]) -> Int? {
        versions.filter { version in version.effectiveFrom.map { $0 <= date } ?? true }.map(\.version).max()
    }
}
