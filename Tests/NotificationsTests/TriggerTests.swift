import Foundation
import NotificationsDomain
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Notification triggers: milestones, streaks at risk, personalised time, re-engagement, the weekly digest", .tags(.unit), .kind(.unit))
struct TriggerTests {
    @Test("a milestone is told when a streak grows onto it, never when a freeze holds it there or it breaks")
    func milestones() {
        #expect(StreakMilestone.reached(.extended, previous: 6, current: 7) == 7)
        #expect(StreakMilestone.reached(.extended, previous: 29, current: 30) == 30)
        #expect(StreakMilestone.reached(.extended, previous: 7, current: 8) == nil)
        #expect(StreakMilestone.reached(.frozen, previous: 7, current: 7) == nil)
        #expect(StreakMilestone.reached(.broken, previous: 14, current: 0) == nil)
        let told = (1...400).compactMap { StreakMilestone.reached(.extended, previous: $0 - 1, current: $0) }
        #expect(told == [7, 14, 30, 60, 75, 100, 150, 200, 365])
    }

    @Test("a check-in tells a milestone when it completes its day onto one: not when the day is still incomplete, not off a milestone, not from an event without the live streak")
    func milestonesOfCheckIns() {
        #expect(StreakMilestone.reached(completingDay: true, liveStreak: 7) == 7)
        #expect(StreakMilestone.reached(completingDay: true, liveStreak: 30) == 30)
        #expect(StreakMilestone.reached(completingDay: false, liveStreak: 7) == nil)
        #expect(StreakMilestone.reached(completingDay: true, liveStreak: 8) == nil)
        #expect(StreakMilestone.reached(completingDay: true, liveStreak: nil) == nil)
    }

    @Test("two missed days in a row put a streak at risk, once per run; activity starts the count again; rest and pauses do not count")
    func streakAtRisk() {
        func run(_ outcomes: [PeriodOutcome]) -> [Bool] {
            var misses = 0
            return outcomes.map { outcome in
                let next = StreakRisk.misses(after: outcome, previous: misses)
                defer { misses = next }
                return StreakRisk.becomesAtRisk(previous: misses, now: next)
            }
        }
        #expect(run([.missed, .missed]) == [false, true])
        #expect(run([.missed, .missed, .missed, .missed]) == [false, true, false, false], "once per run of misses")
        #expect(run([.missed, .completed, .missed]) == [false, false, false])
        #expect(run([.missed, .kept, .missed]) == [false, false, false], "some activity is not a missed day")
        #expect(run([.missed, .rest, .missed]) == [false, false, true], "a rest day leaves the count as it is")
        #expect(run([.missed, .paused, .paused, .frozen]) == [false, false, false, true], "a freeze keeps the streak, not the habit")
        #expect(run([.missed, .missed, .completed, .missed, .missed]) == [false, true, false, false, true], "a new run is told again")
    }

    @Test("the personalised time is the start of the median two-hour bin of completions, with at least seven days of data")
    func personalisedTime() {
        let at = { (hour: Int, minute: Int) in hour * 60 + minute }
        #expect(PersonalisedTime.from([at(7, 30), at(7, 45), at(8, 10), at(7, 5), at(6, 50), at(7, 20)]) == nil, "six days are not enough")
        #expect(PersonalisedTime.from([at(7, 30), at(7, 45), at(7, 10), at(7, 5), at(6, 50), at(7, 20), at(7, 59)]) == LocalTime("06:00"))
        #expect(PersonalisedTime.from(Array(repeating: at(19, 15), count: 7)) == LocalTime("18:00"))
        // Mostly evenings, two early mornings: the median is in the evening.
        #expect(PersonalisedTime.from([at(6, 0), at(6, 30), at(20, 0), at(20, 40), at(21, 10), at(20, 5), at(21, 59)]) == LocalTime("20:00"))
        // An even count takes the earlier of the two middle bins.
        #expect(PersonalisedTime.from([at(8, 0), at(8, 0), at(8, 0), at(8, 0), at(12, 0), at(12, 0), at(12, 0), at(12, 0)]) == LocalTime("08:00"))
        #expect(PersonalisedTime.from(Array(repeating: at(23, 59), count: 9)) == LocalTime("22:00"))
        #expect(PersonalisedTime.from(Array(repeating: 0, count: 9)) == LocalTime("00:00"))
    }

    @Test("re-engagement comes on the third day after the last activity")
    func reEngagement() {
        #expect(ReEngagement.day(after: LocalDate("2026-11-20")!) == LocalDate("2026-11-23")!)
        #expect(ReEngagement.day(after: LocalDate("2026-12-30")!) == LocalDate("2027-01-02")!)
    }

    @Test("the weekly digest goes on Sunday at 08:00 in the user's own zone, across DST changes")
    func weeklyDigest() {
        let rome = LocalCalendar(zoneNamed: "Europe/Rome")!
        let angeles = LocalCalendar(zoneNamed: "America/Los_Angeles")!
        let wednesday = rome.instant(of: LocalTime("10:00")!, on: LocalDate("2026-11-25")!)
        #expect(WeeklyDigest.next(after: wednesday, in: rome) == rome.instant(of: LocalTime("08:00")!, on: LocalDate("2026-11-29")!))
        #expect(WeeklyDigest.next(after: wednesday, in: angeles) == angeles.instant(of: LocalTime("08:00")!, on: LocalDate("2026-11-29")!))
        let sundayEight = rome.instant(of: LocalTime("08:00")!, on: LocalDate("2026-11-29")!)
        #expect(WeeklyDigest.next(after: sundayEight, in: rome) == rome.instant(of: LocalTime("08:00")!, on: LocalDate("2026-12-06")!), "strictly after")
        #expect(WeeklyDigest.next(after: sundayEight.addingTimeInterval(-60), in: rome) == sundayEight)
        // The Sundays the clocks change: 08:00 local all the same.
        let beforeSpring = rome.instant(of: LocalTime("12:00")!, on: LocalDate("2027-03-27")!)
        let spring = WeeklyDigest.next(after: beforeSpring, in: rome)
        #expect(rome.date(at: spring) == LocalDate("2027-03-28")! && rome.localTime(at: spring) == LocalTime("08:00"))
        let beforeFall = angeles.instant(of: LocalTime("12:00")!, on: LocalDate("2026-10-31")!)
        let fall = WeeklyDigest.next(after: beforeFall, in: angeles)
        #expect(angeles.date(at: fall) == LocalDate("2026-11-01")! && angeles.localTime(at: fall) == LocalTime("08:00"))
    }

    @Test("each new kind has English and Italian words and a deep link")
    func messages() {
        let attempt = UUID()
        for language in [Message.Language.english, .italian] {
            let all = [
                Message.streakMilestone(language, days: 7, attemptID: attempt), .streakAtRisk(language, attemptID: attempt),
                .reEngagement(language), .weeklyDigest(language, completedDays: 5),
            ]
            for message in all {
                #expect(!message.title.isEmpty && !message.body.isEmpty && message.deepLink.hasPrefix("surge://"))
            }
        }
        #expect(Message.streakMilestone(.italian, days: 30, attemptID: attempt).title.contains("30 giorni"))
        #expect(Message.weeklyDigest(.english, completedDays: 5).deepLink == "surge://statistics")
        #expect(Message.streakAtRisk(.english, attemptID: attempt).deepLink == "surge://attempts/\(attempt.uuidString.lowercased())")
    }

    @Test("close to the daily goal (001 NOTIF-02): at most five units left and at least half done, not yet done")
    func closeToGoal() {
        // 50 push-ups: from 45 (five left) up to 49.5; 44 is six away; 50 is done.
        #expect(!CloseToGoal.isClose(44, target: 50))
        #expect(CloseToGoal.isClose(45, target: 50))
        #expect(CloseToGoal.isClose(49.5, target: 50))
        #expect(!CloseToGoal.isClose(50, target: 50))
        #expect(!CloseToGoal.isClose(60, target: 50), "beyond the goal is done, not close")
        // A small target: half of it governs (6: from 3; 2 litres: from 1).
        #expect(!CloseToGoal.isClose(2.9, target: 6))
        #expect(CloseToGoal.isClose(3, target: 6))
        #expect(!CloseToGoal.isClose(0.9, target: 2))
        #expect(CloseToGoal.isClose(1, target: 2))
        // 10: five left is exactly half.
        #expect(CloseToGoal.isClose(5, target: 10))
        #expect(!CloseToGoal.isClose(4, target: 10))
        // Nothing to reach.
        #expect(!CloseToGoal.isClose(0, target: 0))
        #expect(!CloseToGoal.isClose(0, target: -1))
    }

    @Test("close to goal says what is left, whole or to a tenth, with the task's unit, in both languages")
    func closeToGoalWords() {
        let attempt = UUID()
        let english = Message.closeToGoal(.english, remaining: 5, unit: "push-ups", attemptID: attempt)
        #expect(english.title == "Almost there")
        #expect(english.body == "Only 5 push-ups to go to reach today's goal!")
        #expect(english.deepLink == "surge://attempts/\(attempt.uuidString.lowercased())")
        #expect(Message.closeToGoal(.italian, remaining: 0.5, unit: "litres", attemptID: attempt).body == "Mancano solo 0.5 litres per l'obiettivo di oggi!")
        #expect(Message.closeToGoal(.english, remaining: 3, unit: nil, attemptID: attempt).body == "Only 3 to go to reach today's goal!")
        #expect(NotificationKind.closeToGoal.category == .reminders)
    }

    @Test("a chore due now names the chore and opens the household's chores, in both languages")
    func choreDueWords() {
        let household = UUID()
        let english = Message.choreDue(.english, chore: "Take out the bins", groupID: household)
        #expect(english.title == "Chore due")
        #expect(english.body == "Reminder: “Take out the bins” is due now.")
        #expect(english.deepLink == "surge://groups/\(household.uuidString.lowercased())/chores")
        #expect(Message.choreDue(.italian, chore: "Buttare la spazzatura", groupID: household).body == "Promemoria: «Buttare la spazzatura» è da fare adesso.")
        #expect(NotificationKind.choreDue.category == .chores)
    }

    @Test("a chore due soon names the chore and its due time, in both languages")
    func choreDueSoonWords() {
        let household = UUID()
        let english = Message.choreDueSoon(.english, chore: "Take out the bins", dueAt: LocalTime(hour: 18, minute: 0)!, groupID: household)
        #expect(english.title == "Chore due soon")
        #expect(english.body == "Reminder: “Take out the bins” is due at 18:00.")
        #expect(english.deepLink == "surge://groups/\(household.uuidString.lowercased())/chores")
        #expect(Message.choreDueSoon(.italian, chore: "Buttare la spazzatura", dueAt: LocalTime(hour: 7, minute: 5)!, groupID: household).body
            == "Promemoria: «Buttare la spazzatura» è da fare entro le 07:05.")
    }

    @Test("a reminder is late beyond its bound, not at it")
    func lateness() {
        let due = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(!ReminderLateness.isTooLate(dueAt: due, now: due.addingTimeInterval(7200), bound: ReminderLateness.defaultBound))
        #expect(ReminderLateness.isTooLate(dueAt: due, now: due.addingTimeInterval(7201), bound: ReminderLateness.defaultBound))
    }
}
