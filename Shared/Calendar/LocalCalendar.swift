import Foundation
import SurgeContracts

/// Calendar arithmetic in one IANA time zone: which local date an instant falls on, when a local date starts and
/// ends (23, 24 or 25 hours long across DST changes), weeks from Monday to Sunday, and months.
public struct LocalCalendar: Sendable {
    public let timeZone: TimeZone
    private let calendar: Calendar

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        calendar.firstWeekday = 2
        calendar.minimumDaysInFirstWeek = 4
        self.calendar = calendar
    }

    /// A calendar for an IANA name; nil if the name is not one.
    public init?(zoneNamed name: String) {
        guard let zone = IANATimeZone.zone(named: name) else { return nil }
        self.init(timeZone: zone)
    }

    /// The local date at `instant`.
    public func date(at instant: Date) -> LocalDate {
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        return LocalDate(year: parts.year!, month: parts.month!, day: parts.day!)!
    }

    /// The first instant of the local date (local midnight, or the first existing instant after it).
    public func start(of date: LocalDate) -> Date {
        calendar.startOfDay(for: calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day, hour: 12))!)
    }

    /// The first instant of the next local date: when `date` is over.
    public func end(of date: LocalDate) -> Date {
        start(of: date.adding(days: 1))
    }

    /// The instant a local wall-clock time happens on a date. In a DST gap the time moves forward by the gap; in a
    /// repeated hour the first occurrence is used.
    public func instant(of time: LocalTime, on date: LocalDate) -> Date {
        let components = DateComponents(year: date.year, month: date.month, day: date.day, hour: time.hour, minute: time.minute)
        return calendar.date(from: components) ?? start(of: date).addingTimeInterval(Double(time.minutesSinceMidnight * 60))
    }
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

    public init(dayNumber: Int) {
        let z = dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        self.init(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)!
    }

    public func adding(days: Int) -> LocalDate { LocalDate(dayNumber: dayNumber + days) }

    /// Whole days from `self` to `other` (negative if `other` is earlier).
    public func days(until other: LocalDate) -> Int { other.dayNumber - dayNumber }

    public var weekday: Weekday {
        // 1970-01-01 was a Thursday.
        Weekday(isoNumber: ((dayNumber % 7 + 7 + 3) % 7) + 1)!
    }

    /// The Monday of this date's Monday-to-Sunday week.
    public var startOfWeek: LocalDate { adding(days: -(weekday.isoNumber - 1)) }

    public var startOfMonth: LocalDate { LocalDate(year: year, month: month, day: 1)! }
}
