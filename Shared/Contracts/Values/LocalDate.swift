import Foundation

/// A calendar date in someone's own time zone, without a time: `2026-11-21`.
///
/// Two ranges matter. A `LocalDate` can hold any proleptic Gregorian date from 0001-01-01 to 9999-12-31 (what
/// `YYYY-MM-DD` can write), and its arithmetic stays inside that range without trapping. Surge *accepts* only
/// `supportedRange` (1970-01-01 to 2200-12-31): decoding refuses the rest, and services refuse rules that would reach
/// past it, so arithmetic on accepted dates never comes near the representable ends.
public struct LocalDate: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, JSONSchemaDescribing {
    public let year: Int
    public let month: Int
    public let day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard Self.representableYears.contains(year), (1...12).contains(month), (1...31).contains(day),
            day <= Self.daysIn(month: month, year: year)
        else { return nil }
        self.init(validYear: year, month: month, day: day)
    }

    /// For parts already known to name a real date in `representableYears`.
    private init(validYear year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The years a `LocalDate` can hold.
    public static let representableYears = 1...9999
    /// The first and last dates a `LocalDate` can hold; arithmetic saturates at them.
    public static let earliest = LocalDate(validYear: 1, month: 1, day: 1)
    public static let latest = LocalDate(validYear: 9999, month: 12, day: 31)

    /// The years Surge accepts, on the wire and in rules: far enough back for any real history (Unix time starts in
    /// 1970) and far enough ahead for any real plan, while leaving centuries of headroom before the representable end.
    public static let supportedYears = 1970...2200
    /// 1970-01-01 ... 2200-12-31.
    public static let supportedRange = LocalDate(validYear: 1970, month: 1, day: 1)...LocalDate(validYear: 2200, month: 12, day: 31)

    /// Whether Surge accepts this date (see `supportedRange`).
    public var isSupported: Bool { Self.supportedRange.contains(self) }

    /// Parses `YYYY-MM-DD`.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    public var description: String {
        String(format: "%04d-%02d-%02d", year, month, day)
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    public static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = LocalDate(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a date as YYYY-MM-DD, got \(text)")
        }
        guard date.isSupported else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: Self.unsupportedMessage(text))
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// The field message for a well-formed date outside `supportedRange`.
    public static func unsupportedMessage(_ text: String) -> String {
        "expected a date from \(supportedRange.lowerBound) to \(supportedRange.upperBound), got \(text)"
    }

    /// A full date from 1970-01-01 to 2200-12-31.
    public static let jsonSchema = JSONSchema.string(format: "date").refined(
        .init(pattern: "^(19[7-9][0-9]|2[01][0-9]{2}|2200)-[0-9]{2}-[0-9]{2}$", example: "2026-03-14"))
    public static let schemaPlaceholder = LocalDate(validYear: 2026, month: 1, day: 1)
}

extension LocalDate {
    /// Days since 1970-01-01 (proleptic Gregorian), independent of any time zone.
    public var dayNumber: Int {
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = (month + 9) % 12
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `dayNumber` days after 1970-01-01. Total: a day number beyond the representable range saturates at
    /// `earliest` or `latest` rather than trapping. Accepted input never gets there (see `supportedRange`); a
    /// saturated date is as wrong as any other far-off date, but it cannot bring a service down.
    public init(dayNumber: Int) {
        let clamped = min(max(dayNumber, Self.earliestDayNumber), Self.latestDayNumber)
        // Howard Hinnant's civil_from_days; for clamped input it yields a valid date in representableYears.
        let z = clamped + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        self.init(validYear: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    private static let earliestDayNumber = earliest.dayNumber
    private static let latestDayNumber = latest.dayNumber

    /// `days` later (earlier if negative), saturating at `earliest` and `latest`.
    public func adding(days: Int) -> LocalDate {
        let (sum, overflow) = dayNumber.addingReportingOverflow(days)
        if overflow { return days < 0 ? .earliest : .latest }
        return LocalDate(dayNumber: sum)
    }

    /// Whole days from `self` to `other` (negative if `other` is earlier).
    public func days(until other: LocalDate) -> Int { other.dayNumber - dayNumber }

    public var weekday: Weekday {
        // 1970-01-01 (day 0) was a Thursday; the remainder is 0 for Mondays.
        switch ((dayNumber % 7) + 7 + 3) % 7 {
        case 0: .monday
        case 1: .tuesday
        case 2: .wednesday
        case 3: .thursday
        case 4: .friday
        case 5: .saturday
        default: .sunday
        }
    }

    /// The Monday of this date's Monday-to-Sunday week.
    public var startOfWeek: LocalDate { adding(days: -(weekday.isoNumber - 1)) }

    public var startOfMonth: LocalDate { LocalDate(validYear: year, month: month, day: 1) }

    /// The last day of this date's month.
    public var endOfMonth: LocalDate { LocalDate(validYear: year, month: month, day: Self.daysIn(month: month, year: year)) }
}

/// A wall-clock time of day: `07:30`.
public struct LocalTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, JSONSchemaDescribing {
    public let hour: Int
    public let minute: Int

    public init?(hour: Int, minute: Int) {
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        self.init(validHour: hour, minute: minute)
    }

    private init(validHour hour: Int, minute: Int) {
        self.hour = hour
        self.minute = minute
    }

    /// Parses `HH:mm`.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]) else {
            return nil
        }
        self.init(hour: hour, minute: minute)
    }

    public var minutesSinceMidnight: Int { hour * 60 + minute }
    public var description: String { String(format: "%02d:%02d", hour, minute) }

    public static func < (lhs: LocalTime, rhs: LocalTime) -> Bool { lhs.minutesSinceMidnight < rhs.minutesSinceMidnight }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let time = LocalTime(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a time as HH:mm, got \(text)")
        }
        self = time
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// `HH:mm`, not RFC 3339's `full-time` (no seconds, no offset).
    public static let jsonSchema = JSONSchema.string().refined(.init(pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", example: "18:00"))
    public static let schemaPlaceholder = LocalTime(validHour: 9, minute: 0)
}

/// ISO weekdays, Monday first.
public enum Weekday: String, Codable, Sendable, CaseIterable, JSONSchemaEnum, Comparable {
    case monday, tuesday, wednesday, thursday, friday, saturday, sunday

    /// There will not be an eighth.
    public static var isExtensible: Bool { false }

    /// 1 (Monday) ... 7 (Sunday).
    public var isoNumber: Int {
        switch self {
        case .monday: 1
        case .tuesday: 2
        case .wednesday: 3
        case .thursday: 4
        case .friday: 5
        case .saturday: 6
        case .sunday: 7
        }
    }

    public init?(isoNumber: Int) {
        guard (1...7).contains(isoNumber) else { return nil }
        self = Self.allCases[isoNumber - 1]
    }

    public static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.isoNumber < rhs.isoNumber }
}
