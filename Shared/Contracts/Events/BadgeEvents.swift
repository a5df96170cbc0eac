import Foundation

/// A user earned a level of a badge (for notifications, analytics and the achievements screen). Published once per
/// (user, badge, level, period), whatever the redeliveries.
public struct BadgeAwarded: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.badges.badge.awarded.v1", topic: .badges,
        summary: "A user earned a badge level (once per user, badge, level and period); backfilled when a new badge found them already qualified.")

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
