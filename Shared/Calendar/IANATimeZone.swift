import Foundation

/// IANA time zone names ("Europe/Rome", "America/New_York", "Asia/Kolkata"), as opposed to the abbreviations and
/// offsets Foundation also accepts ("CET", "GMT+2"), which carry no daylight-saving rules of their own. Foundation's
/// `knownTimeZoneIdentifiers` cannot decide this: it lists only ICU's canonical names and misses valid aliases such as
/// Asia/Kolkata.
public enum IANATimeZone {
    /// The zone for an IANA name, or nil if the name is not one.
    public static func zone(named name: String) -> TimeZone? {
        if name == "UTC" || name == "Etc/UTC" { return TimeZone(identifier: "UTC") }
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2, segments.count <= 3,
            segments.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || "_-+".contains($0) } }),
            segments[0].first?.isUppercase == true,
            let zone = TimeZone(identifier: name), zone.identifier == name
        else { return nil }
        return zone
    }

    public static func isValid(_ name: String) -> Bool { zone(named: name) != nil }
}
