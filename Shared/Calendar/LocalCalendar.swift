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
