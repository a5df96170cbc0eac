import Foundation
import SurgeCalendar
import SurgeContracts

/// How long a push stays worth sending when quiet hours hold it back.
public enum PushUsefulness: Sendable, Equatable {
    /// About its local day: dropped once that day is over.
    case untilEndOfDay
    /// News that goes stale: dropped once this long has passed since it was made.
    case forDuration(TimeInterval)
    /// Worth hearing whenever: always deferred to the end of the quiet hours.
    case whenever
}

extension NotificationKind {
    /// The rule per kind for a push made inside quiet hours (docs/notifications.md, *Quiet hours for push*).
    public var pushUsefulness: PushUsefulness {
        switch self {
        case .dailyReminder, .reEngagement, .streakAtRisk, .weeklyDigest, .closeToGoal, .habitReminder: .untilEndOfDay
        case .overtaken: .forDuration(QuietPush.overtakenFreshness)
        case .badgeEarned, .friendRequest, .challengeInvitation, .streakMilestone, .choreDue: .whenever
        }
    }
}

/// When a notification's push goes out: at once outside quiet hours; inside them deferred to their end while the
/// push is still useful (`pushUsefulness`), dropped otherwise. The inbox row is written either way.
public enum QuietPush {
    /// A standing on a board older than this is no longer news.
    public static let overtakenFreshness: TimeInterval = 3600

    public static func decide(
        _ kind: NotificationKind, createdAt: Date, now: Date, quiet: QuietPeriod?, in calendar: LocalCalendar
    ) -> Delivery {
        let usefulUntil: Date =
            switch kind.pushUsefulness {
            case .untilEndOfDay: calendar.end(of: calendar.date(at: createdAt))
            case .forDuration(let duration): createdAt.addingTimeInterval(duration)
            case .whenever: .distantFuture
            }
        return DeliveryRule.decide(at: now, quiet: quiet, usefulUntil: usefulUntil, in: calendar)
    }
}
