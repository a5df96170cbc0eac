import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// Calendar and date arithmetic are total: whatever instant or date reaches them, they answer without trapping, and
/// over the supported range (1970...2200) they answer exactly.
@Suite("Calendar bounds", .tags(.unit), .kind(.unit))
struct CalendarBoundsTests {
    static let zones = [
        "UTC", "Europe/Rome", "America/New_York", "America/Los_Angeles", "America/Santiago", "America/Sao_Paulo", "Asia/Beirut",
        "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Pacific/Apia",
    ]

    static func instant(_ text: String) -> Date { Timestamp.parse(text)! }
    static func date(_ text: String) -> LocalDate { LocalDate(text)! }

    @Test("LocalDate arithmetic saturates at 0001-01-01 and 9999-12-31 instead of trapping")
    func arithmeticAtTheExtremes() {
        #expect(LocalDate.earliest == Self.date("0001-01-01"))
        #expect(LocalDate.latest == Self.date("9999-12-31"))
        #expect(LocalDate(dayNumber: .max) == .latest)
        #expect(LocalDate(dayNumber: .min) == .earliest)
        #expect(LocalDate.latest.adding(days: 1) == .latest)
        #expect(LocalDate.latest.adding(days: .max) == .latest)
        #expect(LocalDate.earliest.adding(days: -1) == .earliest)
        #expect(LocalDate.earliest.adding(days: .min) == .earliest)
        #expect(Self.date("2026-01-01").adding(days: .max) == .latest)
        #expect(Self.date("2026-01-01").adding(days: .min) == .earliest)
        #expect(Self.date("9999-12-30").adding(days: 1) == .latest)
        // Proleptic Gregorian weekdays at both ends.
        #expect(LocalDate.earliest.weekday == .monday)
        #expect(LocalDate.latest.weekday == .friday)
        #expect(LocalDate.earliest.startOfWeek == .earliest)
        #expect(LocalDate.latest.startOfWeek == Self.date("9999-12-27"))
        #expect(LocalDate.latest.startOfMonth == Self.date("9999-12-01"))
        #expect(LocalDate.earliest.endOfMonth == Self.date("0001-01-31"))
        #expect(Self.date("2200-02-10").endOfMonth == Self.date("2200-02-28"))
        #expect(Self.date("2000-02-10").endOfMonth == Self.date("2000-02-29"))
        #expect(LocalDate.earliest.days(until: .latest) == 3_652_058)
        #expect(LocalDate(year: 10_000, month: 1, day: 1) == nil)
        #expect(LocalDate(year: 0, month: 12, day: 31) == nil)
    }

    @Test("dates round-trip through their day numbers and weekdays cycle, over the supported range and at both ends")
    func roundTrips() {
        let spans = [
            (LocalDate.earliest, 2000), (Self.date("1969-01-01"), LocalDate.supportedRange.lowerBound.days(until: LocalDate.supportedRange.upperBound) + 731),
            (LocalDate.latest.adding(days: -1999), 2000),
        ]
        var mismatches: [LocalDate] = []
        for (first, count) in spans {
            var date = first
            var weekday = first.weekday
            for number in first.dayNumber..<(first.dayNumber + count) {
                if date.dayNumber != number || LocalDate(dayNumber: number) != date || date.weekday != weekday { mismatches.append(date) }
                let next = date.adding(days: 1)
                if next != .latest && (next.year, next.month, next.day) <= (date.year, date.month, date.day) { mismatches.append(next) }
                date = next
                weekday = Weekday(isoNumber: weekday.isoNumber % 7 + 1) ?? .monday
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test("the supported range is 1970-01-01 to 2200-12-31")
    func supportedRange() {
        #expect(LocalDate.supportedRange == Self.date("1970-01-01")...Self.date("2200-12-31"))
        #expect(!Self.date("1969-12-31").isSupported)
        #expect(Self.date("1970-01-01").isSupported)
        #expect(Self.date("2200-12-31").isSupported)
        #expect(!Self.date("2201-01-01").isSupported)
        #expect(!Self.date("9999-12-31").isSupported)
        #expect(Timestamp.supportedRange.lowerBound == Self.instant("1970-01-01T00:00:00Z"))
        #expect(Timestamp.supportedRange.upperBound == Self.instant("2201-01-01T00:00:00Z"))
        #expect(LocalCalendar.supportedEverywhere == Self.instant("1970-01-01T12:00:00Z")...Self.instant("2200-12-31T10:00:00Z"))
    }

    @Test("the instants that crashed services map to a date without trapping, in every zone")
    func productionCrashes() throws {
        let rome = try #require(LocalCalendar(zoneNamed: "Europe/Rome"))
        // 9999-12-31T23:59:59Z is 10000-01-01 in Rome: beyond what LocalDate holds, so it saturates.
        #expect(rome.date(at: Self.instant("9999-12-31T23:59:59Z")) == .latest)
        #expect(rome.date(at: Self.instant("10000-01-01T00:00:00Z")) == .latest)
        #expect(rome.date(at: Self.instant("9999-12-31T22:59:59Z")) == .latest)
        #expect(LocalCalendar.utc.date(at: Self.instant("9999-12-31T23:59:59Z")) == .latest)
        #expect(LocalCalendar.utc.date(at: Self.instant("9999-12-30T23:59:59Z")) == Self.date("9999-12-30"))
        #expect(LocalCalendar.utc.date(at: .distantFuture) == Self.date("4001-01-01"))
        // A chore first due on 9999-12-31 is due at the end of a day LocalDate can hold.
        for name in Self.zones {
            let calendar = try #require(LocalCalendar(zoneNamed: name), "\(name)")
            _ = calendar.end(of: .latest)
            _ = calendar.instant(of: LocalTime("23:30")!, on: .latest)
        }
    }

    @Test("no instant traps the calendar, however far or strange")
    func anyInstant() throws {
        let instants = [
            Date.distantPast, Date.distantFuture, Date(timeIntervalSince1970: 1e15), Date(timeIntervalSince1970: -1e15),
            Date(timeIntervalSince1970: .infinity), Date(timeIntervalSince1970: -.infinity), Date(timeIntervalSince1970: .nan),
            Date(timeIntervalSince1970: .greatestFiniteMagnitude), Date(timeIntervalSince1970: -.greatestFiniteMagnitude),
            Self.instant("0001-01-01T00:00:00Z"), Self.instant("1969-12-31T23:59:59Z"), Self.instant("1970-01-01T00:00:00Z"),
            Self.instant("2200-12-31T23:59:59.999Z"), Self.instant("2201-01-01T00:00:00Z"), Self.instant("9999-12-31T23:59:59Z"),
            Self.instant("10000-01-01T00:00:00Z"),
        ]
        for name in Self.zones {
            let calendar = try #require(LocalCalendar(zoneNamed: name), "\(name)")
            for instant in instants {
                let date = calendar.date(at: instant)
                #expect((LocalDate.earliest...LocalDate.latest).contains(date))
                _ = calendar.start(of: date)
                _ = calendar.end(of: date)
                _ = calendar.instant(of: LocalTime("00:00")!, on: date)
            }
            #expect(calendar.date(at: Date(timeIntervalSince1970: .infinity)) == .latest)
            #expect(calendar.date(at: Date(timeIntervalSince1970: -.infinity)) == .earliest)
        }
    }

    @Test("around the edges of the supported range, days start, end and map back exactly, in every zone")
    func edgesOfTheSupportedRange() throws {
        let edges = [Self.date("1969-12-30"), Self.date("1970-01-01"), Self.date("2200-12-30"), Self.date("2201-01-02")]
        for name in Self.zones {
            let calendar = try #require(LocalCalendar(zoneNamed: name), "\(name)")
            for edge in edges {
                for date in (0..<3).map({ edge.adding(days: $0) }) {
                    let start = calendar.start(of: date)
                    let end = calendar.end(of: date)
                    #expect(calendar.date(at: start) == date, "\(name) \(date)")
                    #expect(calendar.date(at: start.addingTimeInterval(-0.001)) == date.adding(days: -1), "\(name) \(date)")
                    #expect(calendar.date(at: end.addingTimeInterval(-0.001)) == date, "\(name) \(date)")
                    #expect(calendar.date(at: end) == date.adding(days: 1), "\(name) \(date)")
                    #expect((22 * 3600...26 * 3600).contains(end.timeIntervalSince(start)), "\(name) \(date)")
                }
            }
        }
    }

    @Test("the local date agrees with Foundation's calendar hour by hour across DST changes and at the range's edges")
    func agreesWithFoundation() throws {
        let spans = [
            (Self.instant("2026-01-01T00:00:00Z"), 366 * 24), (Self.instant("1970-01-01T00:00:00Z"), 8 * 24),
            (Self.instant("2200-12-24T00:00:00Z"), 8 * 24), (Self.instant("2200-03-01T00:00:00Z"), 62 * 24),
        ]
        for name in Self.zones {
            let zone = try #require(TimeZone(identifier: name))
            let calendar = LocalCalendar(timeZone: zone)
            var foundation = Calendar(identifier: .gregorian)
            foundation.timeZone = zone
            var mismatches: [String] = []
            for (first, hours) in spans {
                for hour in 0..<hours {
                    // Half past, so instants on both sides of every whole- and half-hour change are covered.
                    let instant = first.addingTimeInterval(Double(hour) * 3600 + 1800)
                    let parts = foundation.dateComponents([.year, .month, .day], from: instant)
                    let expected = LocalDate(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0)
                    if calendar.date(at: instant) != expected { mismatches.append(Timestamp.format(instant)) }
                }
            }
            #expect(mismatches.isEmpty, "\(name): \(mismatches.prefix(5))")
        }
    }

    @Test("a zone name this build does not know falls back to UTC where a service must not stop")
    func fallbackToUTC() {
        #expect(LocalCalendar(zoneNamedOrUTC: "Mars/Olympus").timeZone == LocalCalendar.utc.timeZone)
        #expect(LocalCalendar(zoneNamedOrUTC: "Europe/Rome").timeZone.identifier == "Europe/Rome")
    }
}
