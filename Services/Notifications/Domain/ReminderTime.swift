import Foundation
import SurgeCalendar
import SurgeContracts

/// When a reminder set for a local time of day fires: at that wall-clock time in the user's zone, once a day. On a
/// spring-forward day a time inside the gap (02:30 in Europe/Rome) fires once, when the gap ends (03:00); on a
/// fall-back day a time that happens twice fires once, the first time.
public enum ReminderTime {
    /// The reminder's instant on `date`.
    public static func instant(of time: LocalTime, on date: LocalDate, in calendar: LocalCalendar) -> Date {
        let instant = calendar.instant(of: time, on: date)
        guard calendar.localTime(at: instant) != time else { return instant }
        // The time does not exist that day: the clocks jumped over it. Fire when they land.
        return calendar.timeZone.nextDaylightSavingTimeTransition(after: instant.addingTimeInterval(-3 * 3600)) ?? instant
    }

    /// The first firing strictly after `now`: today's if it is still ahead, else tomorrow's.
    public static func next(_ time: LocalTime, after now: Date, in calendar: LocalCalendar) -> Date {
        let today = calendar.date(at: now)
        let candidate = instant(of: time, on: today, in: calendar)
        return candidate > now ? candidate : instant(of: time, on: today.adding(days: 1), in: calendar)
    }
}

/// Quiet hours in the user's zone, from `start` to `end` (across midnight when `end` is earlier); equal times are
/// no quiet time at all.
public struct QuietPeriod: Sendable, Equatable {
    public var start: LocalTime
    public var end: LocalTime

    public init(start: LocalTime, end: LocalTime) {
        self.start = start
        self.end = end
    }

    public func contains(_ time: LocalTime) -> Bool {
        if start == end { return false }
        return start < end ? (start <= time && time < end) : (time >= start || time < end)
    }

    /// When the quiet period that holds `instant` ends; nil if `instant` is not quiet.
    public func end(containing instant: Date, in calendar: LocalCalendar) -> Date? {
        let local = calendar.localTime(at: instant)
        guard contains(local) else { return nil }
        let today = calendar.date(at: instant)
        let endDate = (start < end || local < end) ? today : today.adding(days: 1)
        return ReminderTime.instant(of: end, on: endDate, in: calendar)
    }
}

/// What a notification becomes when it falls inside quiet hours, and until when it is still worth sending.
public enum Delivery: Sendable, Equatable {
    /// Send now.
    case now
    /// Send when the quiet hours end.
    case deferred(until: Date)
    /// Too late to be useful: not sent.
    case dropped
}

public enum DeliveryRule {
    /// Deferred out of quiet hours if the result is still before `usefulUntil`; dropped otherwise (also when it is
    /// already too late, as after downtime).
    public static func decide(at now: Date, quiet: QuietPeriod?, usefulUntil: Date, in calendar: LocalCalendar) -> Delivery {
        guard now < usefulUntil else { return .dropped }
        guard let quiet, let end = quiet.end(containing: now, in: calendar) else { return .now }
        return end < usefulUntil ? .deferred(until: end) : .dropped
    }
}

/// A reminder looked at late (the scheduler was down, the clock jumped forward) is worth sending only within a bound
/// of the moment it was due: a 21:00 reminder at 22:30, yes; at 23:59, no (dropped, even though its day still lasts).
public enum ReminderLateness {
    public static let defaultBound: TimeInterval = 2 * 3600

    public static func isTooLate(dueAt: Date, now: Date, bound: TimeInterval) -> Bool {
        now.timeIntervalSince(dueAt) > bound
    }
}

extension LocalCalendar {
    /// The wall-clock time at `instant`, to the minute.
    public func localTime(at instant: Date) -> LocalTime {
        let seconds = Int((instant.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: instant))).rounded(.down))
        let minutes = ((seconds / 60) % 1440 + 1440) % 1440
        return LocalTime(hour: minutes / 60, minute: minutes % 60) ?? LocalTime(hour: 0, minute: 0)!
    }
}
