import Foundation

/// A user earned a level of a badge (for notifications, analytics and the achievements screen). Published once per
/// (user, badge, level, period), whatever the redeliveries.
public struct BadgeAwarded: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.badges.badge.awarded.v1", topic: .badges,
        summary: "A user earned a badge level (once per user, badge, level and period); backfilled when a new badge found them already qualified.",
        emitted: """
            When the badges service, applying an event it consumes (a check-in, a judged day, a streak, an ended \
            attempt, points, a closed board window, a chore, a friendship or a membership), finds a badge level \
            newly reached: in that event's transaction. With `backfilled` true when, at its start, a new or changed \
            badge of the catalogue finds users already qualified, and when `surge-badges rebuild` derives an award \
            the user did not hold.
            """)

    public static let example = CloudEvent<BadgeAwarded>.example(id: "c4e9f1a7-6b02-4d38-8e5c-a1d7b0f3e926", time: "2026-03-09T01:00:03.875Z") {
        BadgeAwarded(
            userID: Example.giulia, badgeID: "streak", level: 1, period: "", title: "7-day streak", icon: "flame", bonusPoints: nil, backfilled: false,
            awardedAt: $0)
    }

    public var userID: UUID
    public var badgeID: String
    public var level: Int
    /// "" for a badge earned once ever; the week's Monday (`2026-11-16`) or the board window (`2026-W47`) otherwise.
    public var period: String
    public var title: String
    public var icon: String
    /// Shown with the badge; progress books them as its own ledger row.
    public var bonusPoints: Int?
    /// Awarded when the badge was added to the catalogue, for what the user had already done: not news to celebrate
    /// with a push.
    public var backfilled: Bool
    public var awardedAt: Date

    public init(
        userID: UUID, badgeID: String, level: Int, period: String, title: String, icon: String, bonusPoints: Int?, backfilled: Bool, awardedAt: Date
    ) {
        self.userID = userID
        self.badgeID = badgeID
        self.level = level
        self.period = period
        self.title = title
        self.icon = icon
        self.bonusPoints = bonusPoints
        self.backfilled = backfilled
        self.awardedAt = awardedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)/badges/\(badgeID)/\(level)" + (period.isEmpty ? "" : "/\(period)") }
}
