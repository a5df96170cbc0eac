import Foundation
import SurgeContracts

/// The definitions behind the KPIs (docs/analytics.md explains each one).
public enum Definitions {
    /// A session is a run of a user's own actions with no gap longer than this; the first one begins at registration.
    public static let sessionGap: TimeInterval = 30 * 60

    /// Day-7 retention: the user acted on the seventh local day after the day they registered on.
    public static let retentionDay = 7

    /// A judged day on which an attempt expected the user to do something: the days that make a user "active" for the
    /// daily check-in rate. Rest days, pauses and skips expected nothing.
    public static func expectsWork(_ outcome: PeriodOutcome) -> Bool {
        switch outcome {
        case .completed, .missed, .frozen, .kept: true
        case .rest, .paused: false
        }
    }

    /// A broken streak counts as a break only when there was a streak to break.
    public static func isBreak(_ change: StreakChange, previous: Int) -> Bool {
        change == .broken && previous > 0
    }

    /// Abandoning is something the user does; failing and completing are the day judge's verdicts.
    public static func isUserAction(_ end: AttemptEnd) -> Bool {
        end == .abandoned
    }
}

/// How a preferences change moves the user's telemetry opt-out: every `preferences.changed` carries the whole
/// setting, so only a change of value opens or closes an interval.
public enum TelemetryTransition: Equatable, Sendable {
    /// From this instant, nothing the user does is recorded, and what was recorded from it on is erased.
    case optedOut(at: Date)
    /// From this instant the user counts again.
    case optedIn(at: Date)
    case unchanged

    public static func of(optOut: Bool, at time: Date, currentlyOptedOut: Bool) -> TelemetryTransition {
        switch (optOut, currentlyOptedOut) {
        case (true, false): .optedOut(at: time)
        case (false, true): .optedIn(at: time)
        default: .unchanged
        }
    }
}
