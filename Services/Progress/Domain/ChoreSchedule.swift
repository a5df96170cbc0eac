import Foundation
import SurgeCalendar
import SurgeContracts

/// When a household chore is due next (004): after an occurrence is completed, the next one falls on the first
/// recurrence date after both its due date and today, so an early completion does not skip ahead twice and a late
/// one does not leave a trail of overdue occurrences behind.
public enum ChoreSchedule {
    /// - Parameter anchorDay: the day of the month a monthly chore without `dayOfMonth` keeps (its first due day), so
    ///   one first due on the 31st does not drift to the 28th after February.
    ///
    /// Nil when the chore does not recur, or when its next date would be past the last supported date
    /// (`LocalDate.supportedRange`): the chore ends there rather than produce dates no consumer accepts.
    public static func nextDue(after dueOn: LocalDate, completedOn: LocalDate, recurrence: ChoreRecurrence, anchorDay: Int) -> LocalDate? {
        guard let next = recurrenceDate(after: max(dueOn, completedOn), dueOn: dueOn, recurrence: recurrence, anchorDay: anchorDay),
            next <= LocalDate.supportedRange.upperBound
        else { return nil }
        return next
    }

    private static func recurrenceDate(after: LocalDate, dueOn: LocalDate, recurrence: ChoreRecurrence, anchorDay: Int) -> LocalDate? {
        switch recurrence.kind {
        case .none:
            return nil
        case .daily:
            return after.adding(days: 1)
        case .weekly:
            let listed = recurrence.weekdays ?? []
            let days = Set(listed.isEmpty ? [dueOn.weekday] : listed)
            return (1...7).map { after.adding(days: $0) }.first { days.contains($0.weekday) }
        case .monthly:
            let wanted = recurrence.dayOfMonth ?? anchorDay
            var year = after.year
            var month = after.month
            for _ in 0..<2 {
                let day = min(wanted, LocalDate.daysIn(month: month, year: year))
                if let candidate = LocalDate(year: year, month: month, day: day), candidate > after { return candidate }
                month += 1
                if month > 12 {
                    month = 1
                    year += 1
                }
            }
            return nil
        }
    }

    /// The instant an occurrence is due: its due time on its due date in the household's zone, or the end of that day.
    public static func dueAt(_ dueOn: LocalDate, dueTime: LocalTime?, calendar: LocalCalendar) -> Date {
        dueTime.map { calendar.instant(of: $0, on: dueOn) } ?? calendar.end(of: dueOn)
    }

    /// 004's "about an hour before a chore is due", when the chore does not say otherwise.
    public static let defaultReminderLeadMinutes = 60

    /// The chore's lead time; nil when it has none (no due time, or a lead of 0).
    public static func reminderLead(of chore: ChoreDetails) -> Int? {
        let lead = chore.reminderLeadMinutes ?? defaultReminderLeadMinutes
        return chore.dueTime != nil && lead > 0 ? lead : nil
    }

    /// When the assignee is reminded ahead of an occurrence due at `dueAt`: the lead time before it; nil for none.
    public static func remindAt(_ dueAt: Date, chore: ChoreDetails) -> Date? {
        reminderLead(of: chore).map { dueAt.addingTimeInterval(-Double($0) * 60) }
    }
}
