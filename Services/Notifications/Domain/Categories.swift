import SurgeContracts

extension NotificationKind {
    /// The switch (identity's preferences) that turns this kind off on its own.
    public var category: NotificationCategory {
        switch self {
        case .dailyReminder, .reEngagement, .closeToGoal, .habitReminder: .reminders
        case .streakMilestone, .streakAtRisk: .streaks
        case .friendRequest, .challengeInvitation, .overtaken: .social
        case .badgeEarned: .badges
        case .weeklyDigest: .digest
        case .choreDue: .chores
        }
    }

    /// The kinds a user no longer hears of with these categories switched off.
    public static func switchedOff(by categories: some Collection<NotificationCategory>) -> [NotificationKind] {
        allCases.filter { categories.contains($0.category) }
    }
}

