import Foundation

/// IANA time zone names ("Europe/Rome", "America/New_York"), as opposed to the abbreviations and offsets Foundation
/// also accepts ("CET", "GMT+2"), which have no daylight-saving rules of their own.
public enum IANATimeZone {
    private static let known = Set(TimeZone.knownTimeZoneIdentifiers).union(["UTC", "Etc/UTC"])

    /// The zone for an IANA name, or nil if the name is not one.
    public static func zone(named name: String) -> TimeZone? {
        guard known.contains(name) else { return nil }
        return TimeZone(identifier: name)
    }

    public static func isValid(_ name: String) -> Bool { zone(named: name) != nil }
}
