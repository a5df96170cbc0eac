import Foundation
import NotificationsDomain
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Notifications: pushes inside quiet hours, per kind", .tags(.unit), .kind(.unit))
struct QuietPushTests {
    static func instant(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }
    static func time(_ text: String) -> LocalTime { LocalTime(text)! }
    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!
    static let losAngeles = LocalCalendar(zoneNamed: "America/Los_Angeles")!
    static let night = QuietPeriod(start: time("22:00"), end: time("07:00"))

    static func decide(_ kind: NotificationKind, at text: String, quiet: QuietPeriod? = night, in calendar: LocalCalendar = rome) -> Delivery {
        QuietPush.decide(kind, createdAt: instant(text), now: instant(text), quiet: quiet, in: calendar)
    }

    @Test("Outside quiet hours, or with none, every kind is pushed at once")
    func outside() {
        for kind in NotificationKind.allCases {
            #expect(Self.decide(kind, at: "2026-11-24T17:00:00Z") == .now, "\(kind) at 18:00 Rome")
            #expect(Self.decide(kind, at: "2026-11-24T23:00:00Z", quiet: nil) == .now, "\(kind) at midnight without quiet hours")
        }
    }

    @Test("Inside quiet hours: a badge, friend request, invitation, milestone or chore due waits for their end, even into the next day")
    func deferredKinds() {
        for kind in [NotificationKind.badgeEarned, .friendRequest, .challengeInvitation, .streakMilestone, .choreDue] {
            #expect(kind.pushUsefulness == .whenever)
            // 23:30 in Rome: held until 07:00 the next morning.
            #expect(Self.decide(kind, at: "2026-11-24T22:30:00Z") == .deferred(until: Self.instant("2026-11-25T06:00:00Z")), "\(kind)")
            // 03:00 in Rome: held until 07:00 the same morning.
            #expect(Self.decide(kind, at: "2026-11-25T02:00:00Z") == .deferred(until: Self.instant("2026-11-25T06:00:00Z")), "\(kind)")
        }
    }

    @Test("Inside quiet hours: a reminder, nudge, streak at risk, close to goal or digest is pushed when they end only if its day lasts")
    func dayBoundKinds() {
        let lunch = QuietPeriod(start: Self.time("12:00"), end: Self.time("13:00"))
        for kind in [NotificationKind.dailyReminder, .reEngagement, .streakAtRisk, .weeklyDigest, .closeToGoal] {
            #expect(kind.pushUsefulness == .untilEndOfDay)
            #expect(Self.decide(kind, at: "2026-11-24T11:30:00Z", quiet: lunch) == .deferred(until: Self.instant("2026-11-24T12:00:00Z")), "\(kind)")
            // 23:30: the quiet hours end tomorrow, when today's reminder is no longer useful.
            #expect(Self.decide(kind, at: "2026-11-24T22:30:00Z") == .dropped, "\(kind)")
            // 05:00 the same day: pushed at 07:00.
            #expect(Self.decide(kind, at: "2026-11-25T04:00:00Z") == .deferred(until: Self.instant("2026-11-25T06:00:00Z")), "\(kind)")
        }
    }

    @Test("Overtaken is news for an hour: held only if the quiet hours end within it")
    func overtaken() {
        #expect(NotificationKind.overtaken.pushUsefulness == .forDuration(3600))
        #expect(Self.decide(.overtaken, at: "2026-11-24T22:30:00Z") == .dropped, "23:30, quiet until 07:00")
        #expect(Self.decide(.overtaken, at: "2026-11-25T05:30:00Z") == .deferred(until: Self.instant("2026-11-25T06:00:00Z")), "06:30")
        #expect(Self.decide(.overtaken, at: "2026-11-25T05:00:00Z") == .dropped, "06:00: 07:00 is exactly an hour later, too late")
    }

    @Test("Looked at late (a backlog after downtime): judged at the time it is queued, useful from when it was made")
    func late() {
        let made = Self.instant("2026-11-24T17:00:00Z")
        // A day-bound push made at 18:00, queued at 23:30: quiet, and the day ends before 07:00.
        #expect(QuietPush.decide(.dailyReminder, createdAt: made, now: Self.instant("2026-11-24T22:30:00Z"), quiet: Self.night, in: Self.rome) == .dropped)
        // The next day, out of quiet hours: the day is gone.
        #expect(QuietPush.decide(.streakAtRisk, createdAt: made, now: Self.instant("2026-11-25T09:00:00Z"), quiet: Self.night, in: Self.rome) == .dropped)
        // A friend request made at 18:00 and queued at 23:30 waits for the morning.
        #expect(QuietPush.decide(.friendRequest, createdAt: made, now: Self.instant("2026-11-24T22:30:00Z"), quiet: Self.night, in: Self.rome)
            == .deferred(until: Self.instant("2026-11-25T06:00:00Z")))
        // Overtaken, queued two hours late outside quiet hours: stale.
        #expect(QuietPush.decide(.overtaken, createdAt: made, now: made.addingTimeInterval(7200), quiet: nil, in: Self.rome) == .dropped)
    }

    @Test("Quiet hours are local: the same instant is quiet in Rome and not in Los Angeles; DST nights end at local 07:00")
    func zones() {
        // 23:30 in Rome is 14:30 in Los Angeles.
        #expect(Self.decide(.badgeEarned, at: "2026-11-24T22:30:00Z", in: Self.losAngeles) == .now)
        #expect(Self.decide(.badgeEarned, at: "2026-11-24T22:30:00Z") != .now)
        // Rome's spring-forward night (2026-03-29): 07:00 is 05:00 UTC, not 06:00.
        #expect(Self.decide(.badgeEarned, at: "2026-03-28T23:00:00Z") == .deferred(until: Self.instant("2026-03-29T05:00:00Z")))
        // Los Angeles's fall-back night (2026-11-01): 07:00 is 15:00 UTC (UTC−8 again).
        #expect(Self.decide(.friendRequest, at: "2026-11-01T08:00:00Z", in: Self.losAngeles) == .deferred(until: Self.instant("2026-11-01T15:00:00Z")))
    }
}
