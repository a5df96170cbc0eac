import Foundation
import NotificationsDomain
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Notifications: reminder times, quiet hours, languages", .tags(.unit), .kind(.unit))
struct NotificationsDomainTests {
    static func instant(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }
    static func time(_ text: String) -> LocalTime { LocalTime(text)! }
    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!
    static let losAngeles = LocalCalendar(zoneNamed: "America/Los_Angeles")!

    @Test("21:00 is 21:00 where the user is: Rome and Los Angeles, and across both DST changes")
    func localNine() {
        #expect(ReminderTime.instant(of: Self.time("21:00"), on: LocalDate("2026-11-24")!, in: Self.rome) == Self.instant("2026-11-24T20:00:00Z"))
        #expect(ReminderTime.instant(of: Self.time("21:00"), on: LocalDate("2026-11-24")!, in: Self.losAngeles) == Self.instant("2026-11-25T05:00:00Z"))
        // Summer time in Rome (UTC+2) and Los Angeles (UTC−7).
        #expect(ReminderTime.instant(of: Self.time("21:00"), on: LocalDate("2026-07-01")!, in: Self.rome) == Self.instant("2026-07-01T19:00:00Z"))
        #expect(ReminderTime.instant(of: Self.time("21:00"), on: LocalDate("2026-07-01")!, in: Self.losAngeles) == Self.instant("2026-07-02T04:00:00Z"))
        // The days of the changes themselves.
        #expect(ReminderTime.instant(of: Self.time("21:00"), on: LocalDate("2026-03-29")!, in: Self.rome) == Self.instant("2026-03-29T19:00:00Z"))
        #expect(ReminderTime.instant(of: Self.time("21:00"), on: LocalDate("2026-10-25")!, in: Self.rome) == Self.instant("2026-10-25T20:00:00Z"))
        #expect(ReminderTime.instant(of: Self.time("21:00"), on: LocalDate("2026-03-08")!, in: Self.losAngeles) == Self.instant("2026-03-09T04:00:00Z"))
        #expect(ReminderTime.instant(of: Self.time("21:00"), on: LocalDate("2026-11-01")!, in: Self.losAngeles) == Self.instant("2026-11-02T05:00:00Z"))
    }

    @Test("A time the clocks skip fires once when they land (02:30 → 03:00); a time that happens twice fires once, the first time")
    func dstEdges() {
        // Rome springs forward at 02:00 → 03:00 on 2026-03-29 (01:00 UTC).
        #expect(ReminderTime.instant(of: Self.time("02:30"), on: LocalDate("2026-03-29")!, in: Self.rome) == Self.instant("2026-03-29T01:00:00Z"))
        // Rome falls back at 03:00 → 02:00 on 2026-10-25: 02:30 happens at 00:30 and 01:30 UTC; the first.
        #expect(ReminderTime.instant(of: Self.time("02:30"), on: LocalDate("2026-10-25")!, in: Self.rome) == Self.instant("2026-10-25T00:30:00Z"))
        // Fired on the fall-back day, the next is the next day's, not the second 02:30.
        let next = ReminderTime.next(Self.time("02:30"), after: Self.instant("2026-10-25T00:30:00Z"), in: Self.rome)
        #expect(next == Self.instant("2026-10-26T01:30:00Z"))
        // Skipped day: once, then the following day at 02:30 again.
        let afterSkip = ReminderTime.next(Self.time("02:30"), after: Self.instant("2026-03-29T01:00:00Z"), in: Self.rome)
        #expect(afterSkip == Self.instant("2026-03-30T00:30:00Z"))
    }

    @Test("The next firing is today's while it is ahead, else tomorrow's")
    func next() {
        #expect(ReminderTime.next(Self.time("21:00"), after: Self.instant("2026-11-24T19:59:00Z"), in: Self.rome) == Self.instant("2026-11-24T20:00:00Z"))
        #expect(ReminderTime.next(Self.time("21:00"), after: Self.instant("2026-11-24T20:00:00Z"), in: Self.rome) == Self.instant("2026-11-25T20:00:00Z"))
    }

    @Test("Quiet hours across midnight; equal ends are no quiet time")
    func quietHours() {
        let night = QuietPeriod(start: Self.time("22:00"), end: Self.time("07:00"))
        #expect(night.contains(Self.time("23:30")) && night.contains(Self.time("00:00")) && night.contains(Self.time("06:59")))
        #expect(!night.contains(Self.time("07:00")) && !night.contains(Self.time("21:59")))
        let lunch = QuietPeriod(start: Self.time("12:00"), end: Self.time("13:00"))
        #expect(lunch.contains(Self.time("12:30")) && !lunch.contains(Self.time("13:00")))
        #expect(!QuietPeriod(start: Self.time("08:00"), end: Self.time("08:00")).contains(Self.time("08:00")))
        // 23:30 in Rome on the 24th: quiet until 07:00 on the 25th.
        #expect(night.end(containing: Self.instant("2026-11-24T22:30:00Z"), in: Self.rome) == Self.instant("2026-11-25T06:00:00Z"))
        // 06:00 on the 25th: until 07:00 the same morning.
        #expect(night.end(containing: Self.instant("2026-11-25T05:00:00Z"), in: Self.rome) == Self.instant("2026-11-25T06:00:00Z"))
    }

    @Test("Inside quiet hours a reminder waits for their end while it is still useful, and is dropped once it is not")
    func delivery() {
        let day = LocalDate("2026-11-24")!
        let endOfDay = Self.rome.end(of: day)
        let lunch = QuietPeriod(start: Self.time("12:00"), end: Self.time("13:00"))
        let night = QuietPeriod(start: Self.time("22:00"), end: Self.time("07:00"))
        #expect(DeliveryRule.decide(at: Self.instant("2026-11-24T08:00:00Z"), quiet: lunch, usefulUntil: endOfDay, in: Self.rome) == .now)
        #expect(DeliveryRule.decide(at: Self.instant("2026-11-24T11:30:00Z"), quiet: lunch, usefulUntil: endOfDay, in: Self.rome)
            == .deferred(until: Self.instant("2026-11-24T12:00:00Z")))
        // 22:30: the quiet hours end tomorrow, after today's reminder stopped being useful.
        #expect(DeliveryRule.decide(at: Self.instant("2026-11-24T21:30:00Z"), quiet: night, usefulUntil: endOfDay, in: Self.rome) == .dropped)
        // After downtime, a day gone by is not reminded of.
        #expect(DeliveryRule.decide(at: Self.instant("2026-11-26T08:00:00Z"), quiet: nil, usefulUntil: endOfDay, in: Self.rome) == .dropped)
    }

    @Test("Every kind has one category; switching categories off silences exactly their kinds")
    func categories() {
        #expect(NotificationKind.switchedOff(by: [NotificationCategory]()).isEmpty)
        #expect(NotificationKind.switchedOff(by: [.reminders]) == [.dailyReminder, .reEngagement, .closeToGoal, .habitReminder])
        #expect(NotificationKind.switchedOff(by: [.streaks]) == [.streakMilestone, .streakAtRisk])
        #expect(NotificationKind.switchedOff(by: [.social]) == [.friendRequest, .challengeInvitation, .overtaken])
        #expect(NotificationKind.switchedOff(by: [.badges]) == [.badgeEarned])
        #expect(NotificationKind.switchedOff(by: [.digest]) == [.weeklyDigest])
        #expect(NotificationKind.switchedOff(by: [.chores]) == [.choreDue])
        #expect(NotificationKind.switchedOff(by: [.badges, .digest]) == [.badgeEarned, .weeklyDigest])
        #expect(NotificationKind.switchedOff(by: NotificationCategory.allCases) == NotificationKind.allCases, "all off: nothing left")
    }

    @Test("Italian for it, it-IT and it_CH; English for anything else")
    func languages() {
        for locale in ["it", "it-IT", "IT_ch"] { #expect(Message.Language(locale: locale) == .italian, "\(locale)") }
        for locale in ["en-US", "de-DE", "", nil] as [String?] { #expect(Message.Language(locale: locale) == .english) }
        #expect(Message.dailyReminder(.italian).title == "È ora del check-in")
        #expect(Message.badgeEarned(.english, badge: "10 Tasks Completed").body == "Congratulations, you earned the 10 Tasks Completed badge!")
    }
}
