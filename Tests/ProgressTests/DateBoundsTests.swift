import Foundation
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ProgressService

/// The inputs that crashed progress (a check-in, log or photo happening in 10000, a chore first due on 9999-12-31) are
/// refused with field errors, and the rules they reach never trap even if such a value gets through.
@Suite("Progress date bounds", .tags(.unit), .kind(.unit))
struct ProgressDateBoundsTests {
    static func instant(_ text: String) -> Date { Timestamp.parse(text)! }
    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!

    @Test("a happenedAt or date outside 1970...2200 is a field error naming it")
    func checkInFields() {
        #expect(CheckInWindow.unsupportedFields(happenedAt: nil, date: nil).isEmpty)
        #expect(CheckInWindow.unsupportedFields(happenedAt: Self.instant("2200-12-31T23:59:59.999Z"), date: LocalDate("2200-12-31")).isEmpty)
        #expect(CheckInWindow.unsupportedFields(happenedAt: Self.instant("1970-01-01T00:00:00Z"), date: LocalDate("1970-01-01")).isEmpty)
        #expect(CheckInWindow.unsupportedFields(happenedAt: Self.instant("10000-01-01T00:00:00Z"), date: nil).map(\.field) == ["happenedAt"])
        #expect(CheckInWindow.unsupportedFields(happenedAt: Self.instant("1969-12-31T23:59:59Z"), date: nil).map(\.field) == ["happenedAt"])
        #expect(CheckInWindow.unsupportedFields(happenedAt: Self.instant("2201-01-01T00:00:00Z"), date: nil).map(\.field) == ["happenedAt"])
        #expect(
            CheckInWindow.unsupportedFields(happenedAt: Self.instant("9999-12-31T23:59:59Z"), date: LocalDate("9999-12-31")).map(\.field)
                == ["happenedAt", "date"])
        #expect(CheckInWindow.unsupportedFields(happenedAt: nil, date: LocalDate("2201-01-01")).first?.message.contains("2200-12-31") == true)
    }

    @Test("the check-in window judges a check-in from the year 10000 as in the future, without trapping")
    func windowFarFuture() {
        let now = Self.instant("2026-03-28T10:00:00Z")
        let happenedAt = Self.instant("10000-01-01T00:00:00Z")
        let refusal = CheckInWindow.check(
            date: Self.rome.date(at: happenedAt), happenedAt: happenedAt, now: now, startedOn: LocalDate("2026-03-01")!, endOn: nil,
            calendar: Self.rome, graceMinutes: 60)
        #expect(refusal == .inFuture)
        _ = CheckInWindow.closes(.latest, calendar: Self.rome, graceMinutes: 2880)
    }

    @Test("a chore first due on 9999-12-31 gets a due instant, and chores stop recurring after 2200-12-31")
    func choresAtTheEnd() {
        let last = LocalDate.supportedRange.upperBound
        _ = ChoreSchedule.dueAt(.latest, dueTime: nil, calendar: Self.rome)
        _ = ChoreSchedule.dueAt(.latest, dueTime: LocalTime("23:30"), calendar: Self.rome)
        for recurrence in [
            ChoreRecurrence(kind: .daily), ChoreRecurrence(kind: .weekly, weekdays: [.monday]), ChoreRecurrence(kind: .weekly),
            ChoreRecurrence(kind: .monthly, dayOfMonth: 31), ChoreRecurrence(kind: .monthly),
        ] {
            #expect(ChoreSchedule.nextDue(after: last, completedOn: last, recurrence: recurrence, anchorDay: 31) == nil, "\(recurrence)")
            #expect(ChoreSchedule.nextDue(after: .latest, completedOn: .latest, recurrence: recurrence, anchorDay: 31) == nil, "\(recurrence)")
            #expect(ChoreSchedule.nextDue(after: last, completedOn: .latest, recurrence: recurrence, anchorDay: 31) == nil, "\(recurrence)")
        }
        // The last supported day is still due when the recurrence lands on it.
        let eve = LocalDate("2200-12-30")!
        #expect(ChoreSchedule.nextDue(after: eve, completedOn: eve, recurrence: ChoreRecurrence(kind: .daily), anchorDay: 30) == last)
        #expect(ChoreSchedule.nextDue(after: eve, completedOn: eve, recurrence: ChoreRecurrence(kind: .monthly, dayOfMonth: 31), anchorDay: 31) == last)
        // A weekly chore without weekdays keeps its first due date's weekday.
        let monday = LocalDate("2026-11-16")!
        #expect(ChoreSchedule.nextDue(after: monday, completedOn: monday, recurrence: ChoreRecurrence(kind: .weekly), anchorDay: 16) == LocalDate("2026-11-23"))
        #expect(ChoreSchedule.nextDue(after: monday, completedOn: monday, recurrence: ChoreRecurrence(kind: .weekly, weekdays: []), anchorDay: 16) == LocalDate("2026-11-23"))
    }

    @Test("judging and week goals at the representable end do not trap")
    func judgingAtTheEnd() throws {
        let definition = ProgressDomainTests.definition(
            tasks: [ChallengeTask(taskID: "gym", title: "Gym", kind: .checkbox, cadence: Cadence(kind: .timesPerWeek, timesPerWeek: 2))],
            duration: 10)
        let timeline = try #require(DefinitionTimeline([definition]))
        var state = AttemptState()
        let start = LocalDate.latest.adding(days: -3)
        while let periodEnd = Judge.nextPeriodEnd(state, startedOn: start, endOn: .latest, period: .day), state.status == .active {
            _ = Judge.judge(periodEnding: periodEnd, startedOn: start, endOn: .latest, state: &state, timeline: timeline, records: [:], dailyGoal: 20)
        }
        #expect(state.judgedThrough == .latest)
        // Open-ended: once the last representable day is judged, nothing is left (not the same day again).
        var openEnded = AttemptState()
        openEnded.judgedThrough = .latest
        #expect(Judge.nextPeriodEnd(openEnded, startedOn: start, endOn: nil, period: .day) == nil)
        #expect(Judge.nextPeriodEnd(openEnded, startedOn: start, endOn: nil, period: .week) == nil)
        #expect(WeekGoal.days(of: LocalDate.latest.startOfWeek, startedOn: start, endOn: nil).last == .latest)
    }

    @Test("a timeline needs a version: none is no timeline rather than a trap")
    func emptyTimeline() {
        #expect(DefinitionTimeline([]) == nil)
    }

    @Test("a member or household whose zone name this build does not know is judged in UTC")
    func unknownZone() {
        #expect(Member(userID: UUID(), timeZone: "Mars/Olympus").calendar.timeZone == LocalCalendar.utc.timeZone)
        #expect(Member(userID: UUID(), timeZone: "Europe/Rome").calendar.timeZone.identifier == "Europe/Rome")
    }
}
