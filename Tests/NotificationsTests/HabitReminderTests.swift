import Foundation
import NotificationsDomain
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Habit reminders: each habit at its own local time, once a day, DST-correct; skipped on a day already checked in", .tags(.unit), .kind(.unit))
struct HabitReminderTests {
    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!
    static let losAngeles = LocalCalendar(zoneNamed: "America/Los_Angeles")!
    static func instant(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }
    static let attempt = UUID(uuidString: "6F1C2A8E-0B4D-4E55-9A3B-2C7D8E9F0A1B")!

    @Test("07:30 is 07:30 where the user is: Rome and Los Angeles, before and after the time, the day and key it is for")
    func localTime() {
        let time = LocalTime(hour: 7, minute: 30)!
        // Rome, winter (UTC+1): 06:00 local is 05:00Z; today's 07:30 is ahead.
        let rome = HabitReminder.next(time, after: Self.instant("2026-01-12T05:00:00Z"), in: Self.rome)
        #expect(rome.fireAt == Self.instant("2026-01-12T06:30:00Z"))
        #expect(rome.date == LocalDate("2026-01-12")!)
        // Right at the time: strictly after, so the next day's (once a day).
        let again = HabitReminder.next(time, after: rome.fireAt, in: Self.rome)
        #expect(again.fireAt == Self.instant("2026-01-13T06:30:00Z"))
        #expect(again.date == LocalDate("2026-01-13")!)
        // Los Angeles (UTC-8): at 09:00Z it is still 01:00 on the 12th there.
        let la = HabitReminder.next(time, after: Self.instant("2026-01-12T09:00:00Z"), in: Self.losAngeles)
        #expect(la.fireAt == Self.instant("2026-01-12T15:30:00Z"))
        #expect(la.date == LocalDate("2026-01-12")!)
        #expect(HabitReminder.key(attemptID: Self.attempt, on: rome.date) == "habit-reminder:6f1c2a8e-0b4d-4e55-9a3b-2c7d8e9f0a1b:2026-01-12")
    }

    @Test("across spring-forward: 07:30 keeps its wall-clock time; a time in the gap fires once when the gap ends")
    func daylightSaving() {
        // Rome springs forward 02:00 → 03:00 on 2026-03-29 (01:00Z): 07:30 is now UTC+2.
        let rome = HabitReminder.next(LocalTime(hour: 7, minute: 30)!, after: Self.instant("2026-03-28T07:00:00Z"), in: Self.rome)
        #expect(rome.fireAt == Self.instant("2026-03-29T05:30:00Z"))
        #expect(rome.date == LocalDate("2026-03-29")!)
        // Los Angeles springs forward 02:00 → 03:00 on 2026-03-08 (10:00Z); 02:30 does not exist: 03:00 PDT, once.
        let gap = LocalTime(hour: 2, minute: 30)!
        let first = HabitReminder.next(gap, after: Self.instant("2026-03-08T08:00:00Z"), in: Self.losAngeles)
        #expect(first.fireAt == Self.instant("2026-03-08T10:00:00Z"))
        #expect(first.date == LocalDate("2026-03-08")!)
        let second = HabitReminder.next(gap, after: first.fireAt, in: Self.losAngeles)
        #expect(second.fireAt == Self.instant("2026-03-09T09:30:00Z"), "the next day's, at 02:30 PDT")
        #expect(second.date == LocalDate("2026-03-09")!)
    }

    @Test("a day the habit already has a check-in gets no reminder; an earlier check-in does not count")
    func skippedWhenCheckedIn() {
        let day = LocalDate("2026-03-29")!
        #expect(HabitReminder.isDue(on: day, lastCheckIn: nil))
        #expect(HabitReminder.isDue(on: day, lastCheckIn: day.adding(days: -1)))
        #expect(!HabitReminder.isDue(on: day, lastCheckIn: day))
    }

    @Test("words in English and Italian, opening the attempt; a reminder, with a reminder's quiet-hours rule")
    func words() {
        let english = Message.habitReminder(.english, habit: "Stretch", attemptID: Self.attempt)
        #expect(english.title == "Habit reminder")
        #expect(english.body == "Time for “Stretch”.")
        #expect(english.deepLink == "surge://attempts/6f1c2a8e-0b4d-4e55-9a3b-2c7d8e9f0a1b")
        let italian = Message.habitReminder(.italian, habit: "Stretching", attemptID: Self.attempt)
        #expect(italian.title == "Promemoria abitudine")
        #expect(italian.body == "È il momento di «Stretching».")
        #expect(italian.deepLink == english.deepLink)
        #expect(NotificationKind.habitReminder.category == .reminders)
        #expect(NotificationKind.habitReminder.rawValue == "habit-reminder")
        #expect(NotificationKind.habitReminder.pushUsefulness == .untilEndOfDay)
    }
}
