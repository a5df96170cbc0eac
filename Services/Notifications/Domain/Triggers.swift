import Foundation
import SurgeCalendar
import SurgeContracts

/// Streak milestones worth a celebration (000: 7, 14, 30 ...).
public enum StreakMilestone {
    public static let days = [7, 14, 30, 60, 75, 100, 150, 200, 365]

    /// The milestone a streak change lands on: only a streak that grew onto it, not one a freeze kept there.
    public static func reached(_ change: StreakChange, previous: Int, current: Int) -> Int? {
        guard change == .extended, current > previous, days.contains(current) else { return nil }
        return current
    }

    /// The milestone a check-in lands on: one that completes its day, leaving the live streak on a milestone. The day's
    /// judgement later extends the streak onto the same one, and a further check-in of that day names it again: the
    /// notification's key (attempt and milestone) keeps it one.
    public static func reached(completingDay dayComplete: Bool, liveStreak: Int?) -> Int? {
        guard dayComplete, let liveStreak, days.contains(liveStreak) else { return nil }
        return liveStreak
    }
}

/// 001 NOTIF-01: a streak is at risk once no day of it was completed for two days running. Counted per attempt over
/// judged days: a missed or frozen day counts, a completed or kept one (some activity) starts again, a rest or paused
/// day leaves the count as it is. Told once per run of misses, when the count reaches two.
public enum StreakRisk {
    public static let missedDays = 2

    /// The count of consecutive missed days after `outcome`.
    public static func misses(after outcome: PeriodOutcome, previous: Int) -> Int {
        switch outcome {
        case .missed, .frozen: previous + 1
        case .completed, .kept: 0
        case .rest, .paused: previous
        }
    }

    /// Whether this judged day makes the streak at risk: the run of misses has just reached two.
    public static func becomesAtRisk(previous: Int, now: Int) -> Bool {
        previous < missedDays && now >= missedDays
    }
}

/// 001 NOTIF-03: the daily reminder at the time the user usually completes their day. The completion times of the last
/// `window` days are put in two-hour bins; the reminder goes at the start of the median bin, so that it comes before
/// the usual completion, not after. Fewer than `minimumDays` days of data: no personalised time (09:00 applies). An
/// explicit reminder time always wins.
public enum PersonalisedTime {
    public static let minimumDays = 7
    public static let window = 28
    public static let binMinutes = 120

    /// `minutes`: the minute of the day (0..<1440) of each day's first completion, one per day.
    public static func from(_ minutes: [Int]) -> LocalTime? {
        guard minutes.count >= minimumDays else { return nil }
        let bins = minutes.map { min(max($0, 0), 1439) / binMinutes }.sorted()
        // The lower median: with an even count, the earlier of the two middle bins.
        let median = bins[(bins.count - 1) / 2]
        return LocalTime(hour: median * binMinutes / 60, minute: 0)
    }
}

/// 001 NOTIF-02: close to the daily goal, once a day. 001 fires at "daily goal − 5 push-ups, at 50 %+": a task is close
/// when what is left is at most `unitsAway` and at least `minimumShare` of the target is done, and it is not done yet.
/// For a large target the five units govern (95 of 100), for a small one the half (1 of 2 litres).
public enum CloseToGoal {
    public static let unitsAway = 5.0
    public static let minimumShare = 0.5

    public static func isClose(_ total: Double, target: Double) -> Bool {
        guard target > 0, total < target else { return false }
        return total >= max(target - unitsAway, target * minimumShare)
    }
}

/// 000's gentle re-engagement: after two whole days without a check-in, once, at the reminder time of the third day.
/// A new check-in starts the count again.
public enum ReEngagement {
    public static let idleDays = 2

    /// The day the nudge is for, after a last check-in (or sign-up) on `lastActive`.
    public static func day(after lastActive: LocalDate) -> LocalDate {
        lastActive.adding(days: idleDays + 1)
    }
}

/// 001 NOTIF-04: every Sunday at 08:00 local, the week in review and the new weekly challenge.
public enum WeeklyDigest {
    public static let time = LocalTime(hour: 8, minute: 0)!

    /// The first Sunday 08:00 strictly after `now`, in the user's zone.
    public static func next(after now: Date, in calendar: LocalCalendar) -> Date {
        var date = calendar.date(at: now)
        while true {
            if date.weekday == .sunday {
                let instant = ReminderTime.instant(of: time, on: date, in: calendar)
                if instant > now { return instant }
            }
            date = date.adding(days: 1)
        }
    }
}

/// A habit's own reminder (`habit.reminderTime` in its definition), for each active attempt at it: at that wall-clock
/// time in the user's zone, once per local day (a time in a spring-forward gap fires when the gap ends), skipped on a
/// day that habit already has a check-in. A habit without a reminder time has none: that is its off switch.
public enum HabitReminder {
    /// The inbox and schedule key of one attempt's reminder for one local day.
    public static func key(attemptID: UUID, on date: LocalDate) -> String {
        "habit-reminder:\(attemptID.key):\(date)"
    }

    /// The next reminder strictly after `now`: the local day it is for, and when it fires.
    public static func next(_ time: LocalTime, after now: Date, in calendar: LocalCalendar) -> (date: LocalDate, fireAt: Date) {
        let fireAt = ReminderTime.next(time, after: now, in: calendar)
        return (calendar.date(at: fireAt), fireAt)
    }

    /// Whether the reminder for `day` is still wanted: not if the habit already has a check-in that day.
    public static func isDue(on day: LocalDate, lastCheckIn: LocalDate?) -> Bool {
        lastCheckIn.map { $0 < day } ?? true
    }
}
