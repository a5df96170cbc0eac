import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Local calendar", .tags(.unit), .kind(.unit))
struct LocalCalendarTests {
    @Test("day numbers round-trip for every day from 1900 to 2200 and agree with Foundation")
    func dayNumbers() throws {
        let utc = LocalCalendar(timeZone: TimeZone(identifier: "UTC")!)
        var date = LocalDate(year: 1900, month: 1, day: 1)!
        var instant = utc.start(of: date)
        for _ in 0..<(300 * 366) where date.year < 2200 {
            #expect(LocalDate(dayNumber: date.dayNumber) == date)
            #expect(utc.date(at: instant) == date)
            let next = date.adding(days: 1)
            #expect(next.dayNumber == date.dayNumber + 1)
            date = next
            instant = instant.addingTimeInterval(86_400)
        }
        #expect(LocalDate(year: 1970, month: 1, day: 1)!.dayNumber == 0)
    }

    @Test("weekdays and Monday-to-Sunday weeks")
    func weeks() {
        let saturday = LocalDate("2026-11-21")!
        #expect(saturday.weekday == .saturday)
        #expect(saturday.startOfWeek == LocalDate("2026-11-16")!)
        #expect(LocalDate("2026-11-16")!.startOfWeek == LocalDate("2026-11-16")!)
        #expect(LocalDate("2026-11-22")!.weekday == .sunday)
        #expect(LocalDate("2026-11-22")!.startOfWeek == LocalDate("2026-11-16")!)
        #expect(LocalDate("2024-02-29")!.startOfMonth == LocalDate("2024-02-01")!)
    }

    @Test("local days across DST are 23 and 25 hours long, and the local date follows the zone")
    func daylightSaving() {
        let rome = LocalCalendar(zoneNamed: "Europe/Rome")!
        let springForward = LocalDate("2026-03-29")!
        #expect(rome.end(of: springForward).timeIntervalSince(rome.start(of: springForward)) == 23 * 3600)
        let fallBack = LocalDate("2026-10-25")!
        #expect(rome.end(of: fallBack).timeIntervalSince(rome.start(of: fallBack)) == 25 * 3600)
        let instant = ISO8601DateFormatter().date(from: "2026-11-21T23:30:00Z")!
        #expect(rome.date(at: instant) == LocalDate("2026-11-22")!)
        #expect(LocalCalendar(zoneNamed: "America/Los_Angeles")!.date(at: instant) == LocalDate("2026-11-21")!)
        #expect(LocalCalendar(zoneNamed: "Pacific/Kiritimati")!.date(at: instant) == LocalDate("2026-11-22")!)
    }

    @Test("a wall-clock time in a DST gap moves forward; 09:00 is 09:00 local on both sides of a change")
    func wallClock() {
        let newYork = LocalCalendar(zoneNamed: "America/New_York")!
        let gap = newYork.instant(of: LocalTime("02:30")!, on: LocalDate("2026-03-08")!)
        #expect(newYork.date(at: gap) == LocalDate("2026-03-08")!)
        let before = newYork.instant(of: LocalTime("09:00")!, on: LocalDate("2026-03-07")!)
        let after = newYork.instant(of: LocalTime("09:00")!, on: LocalDate("2026-03-09")!)
        #expect(after.timeIntervalSince(before) == 47 * 3600)
    }

    @Test("only IANA names are time zones")
    func zones() {
        #expect(IANATimeZone.isValid("Europe/Rome"))
        #expect(IANATimeZone.isValid("UTC"))
        #expect(IANATimeZone.isValid("Asia/Kolkata"))
        #expect(IANATimeZone.isValid("Europe/Kyiv"))
        #expect(IANATimeZone.isValid("America/Argentina/Buenos_Aires"))
        #expect(!IANATimeZone.isValid("America/Fake"))
        #expect(!IANATimeZone.isValid("europe/rome"))
        #expect(!IANATimeZone.isValid("CET"))
        #expect(!IANATimeZone.isValid("Mars/Base"))
        #expect(!IANATimeZone.isValid("GMT+5"))
        #expect(!IANATimeZone.isValid(""))
    }

    @Test("whole days of a window: a week from Monday 09:00 is 7 across either DST change, a minute more is 8, a part day is 1")
    func wholeDays() {
        let rome = LocalCalendar(zoneNamed: "Europe/Rome")!
        func days(_ from: String, _ fromTime: String, _ to: String, _ toTime: String) -> Int {
            rome.wholeDays(
                from: rome.instant(of: LocalTime(fromTime)!, on: LocalDate(from)!), to: rome.instant(of: LocalTime(toTime)!, on: LocalDate(to)!))
        }
        #expect(days("2026-11-16", "09:00", "2026-11-23", "09:00") == 7)
        #expect(days("2026-11-16", "09:00", "2026-11-23", "09:01") == 8)
        #expect(days("2026-11-16", "09:00", "2026-11-23", "08:59") == 7)
        // 167 hours (spring forward on 29 March 2026) and 169 hours (fall back on 25 October 2026).
        #expect(days("2026-03-23", "09:00", "2026-03-30", "09:00") == 7)
        #expect(days("2026-10-19", "09:00", "2026-10-26", "09:00") == 7)
        // A window starting on the DST day itself.
        #expect(days("2026-03-29", "09:00", "2026-04-05", "09:00") == 7)
        #expect(days("2026-11-16", "09:00", "2026-11-16", "12:00") == 1)
        #expect(days("2026-11-16", "23:00", "2026-11-17", "01:00") == 1)
        #expect(days("2026-11-16", "09:00", "2026-11-16", "09:00") == 1)
    }
}
