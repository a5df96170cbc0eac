import Foundation
import SurgeContracts
import Synchronization

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
        if let known = Self.known.withLock({ $0[name] }) {
            self = known
            return
        }
        guard let zone = IANATimeZone.zone(named: name) else { return nil }
        self.init(timeZone: zone)
        let made = self
        Self.known.withLock { $0[name] = made }
    }

    /// Calendars made so far, by zone name: making one (a time zone and a calendar) costs far more than the
    /// arithmetic it then does. Only valid names are kept, so it holds at most the few hundred IANA zones.
    private static let known = Mutex<[String: LocalCalendar]>([:])

    /// UTC: the fallback for a zone name that is not (or no longer) valid here.
    public static let utc = LocalCalendar(timeZone: TimeZone(identifier: "UTC") ?? .gmt)

    /// The calendar for an IANA name, or UTC if the name is not one. For names that arrive from elsewhere (events,
    /// stored rows), where a bad name must not stop the service.
    public init(zoneNamedOrUTC name: String) {
        self = LocalCalendar(zoneNamed: name) ?? .utc
    }

    /// The local date at `instant`. Total: the zone's offset at that instant, then whole days since 1970-01-01
    /// (proleptic Gregorian, like `LocalDate` itself). Instants whose date `LocalDate` cannot hold (or that are not
    /// finite) saturate at `LocalDate.earliest` or `LocalDate.latest`; accepted instants are far from either.
    public func date(at instant: Date) -> LocalDate {
        let local = instant.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: instant))
        let days = (local / 86_400).rounded(.down)
        guard days.isFinite, days > Double(LocalDate.earliest.dayNumber) else {
            return days == .infinity ? .latest : .earliest
        }
        guard days < Double(LocalDate.latest.dayNumber) else { return .latest }
        return LocalDate(dayNumber: Int(days))
    }

    /// The first instant of the local date (local midnight, or the first existing instant after it).
    public func start(of date: LocalDate) -> Date {
        let key = DayKey(zone: timeZone.identifier, day: date.dayNumber)
        if let known = Self.starts.withLock({ $0[key] }) { return known }
        let start = computedStart(of: date)
        Self.starts.withLock { starts in
            if starts.count >= Self.startsKept { starts.removeAll(keepingCapacity: true) }
            starts[key] = start
        }
        return start
    }

    private struct DayKey: Hashable {
        var zone: String
        var day: Int
    }

    /// Starts of days computed so far (Foundation's calendar arithmetic costs microseconds; a day's start never
    /// changes), at most `startsKept` of them.
    private static let starts = Mutex<[DayKey: Date]>([:])
    private static let startsKept = 100_000

    private func computedStart(of date: LocalDate) -> Date {
        if date.year > Self.lastJulianYear,
            let noon = calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day, hour: 12))
        {
            return calendar.startOfDay(for: noon)
        }
        // Foundation's Gregorian calendar is Julian before October 1582 while `LocalDate` is proleptic Gregorian, so
        // those dates (and any Foundation could not build) start at local midnight by the zone's offset there.
        let midnight = Double(date.dayNumber) * 86_400
        let offset = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: midnight))
        return Date(timeIntervalSince1970: midnight - Double(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: midnight - Double(offset)))))
    }

    /// 1582, the year Foundation's Gregorian calendar switches from Julian dates.
    private static let lastJulianYear = 1582

    /// The first instant of the next local date: when `date` is over. (At `LocalDate.latest`, which accepted input
    /// cannot reach, that is its own start.)
    public func end(of date: LocalDate) -> Date {
        start(of: date.adding(days: 1))
    }

    /// The instant a local wall-clock time happens on a date. In a DST gap the time moves forward by the gap; in a
    /// repeated hour the first occurrence is used.
    public func instant(of time: LocalTime, on date: LocalDate) -> Date {
        let components = DateComponents(year: date.year, month: date.month, day: date.day, hour: time.hour, minute: time.minute)
        if date.year > Self.lastJulianYear, let instant = calendar.date(from: components) { return instant }
        return start(of: date).addingTimeInterval(Double(time.minutesSinceMidnight * 60))
    }

    /// Local days from one instant to a later one, a part day counting as a whole: 09:00 Monday to 09:00 the next
    /// Monday is 7 across a DST change too (167 or 169 hours), to 09:01 it is 8. At least 1.
    public func wholeDays(from start: Date, to end: Date) -> Int {
        guard start < end else { return 1 }
        let elapsed = date(at: start).days(until: date(at: end))
        // The same wall-clock time `elapsed` local days later.
        guard let sameTimeLater = calendar.date(byAdding: .day, value: elapsed, to: start) else { return max(1, elapsed) }
        return max(1, sameTimeLater < end ? elapsed + 1 : elapsed)
    }
}

extension LocalCalendar {
    /// The instants that fall on a supported date (`LocalDate.supportedRange`) in every time zone on Earth, UTC−12 to
    /// UTC+14: from 1970-01-01T12:00:00Z (when 1970-01-01 begins at UTC−12) to 2200-12-31T10:00:00Z (when
    /// 2200-12-31 ends at UTC+14). Rules judged in each participant's own zone (competitions) must stay inside it, or
    /// someone's local dates would leave the supported range.
    public static let supportedEverywhere =
        Timestamp.supportedRange.lowerBound.addingTimeInterval(12 * 3600)...Timestamp.supportedRange.upperBound.addingTimeInterval(-14 * 3600)
}
