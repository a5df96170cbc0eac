import Foundation

extension BadgeCatalogue {
    /// The catalogue Surge ships with (004's chore badges, 001's weekly challenge and weekly goal, 000's streak
    /// milestones and completion). Operators replace it with `BADGE_CATALOGUE_FILE`; it is validated like any other.
    public static let standardDocument = #"""
        {
          "version": 1,
          "badges": [
            { "id": "chores", "title": "Chore champion", "description": "Household chores completed.", "icon": "broom",
              "levels": [ { "title": "First Chore Done", "threshold": 1 }, { "title": "10 Tasks Completed", "threshold": 10 },
                          { "title": "50 Tasks Completed", "threshold": 50 } ],
              "rule": { "kind": "count", "of": "chores" } },
            { "id": "streak", "title": "Streak", "description": "Days (or weeks) in a row, in any challenge.", "icon": "flame",
              "levels": [ { "title": "7-day streak", "threshold": 7 }, { "title": "14-day streak", "threshold": 14 },
                          { "title": "30-day streak", "threshold": 30 }, { "title": "60-day streak", "threshold": 60 },
                          { "title": "75-day streak", "threshold": 75 }, { "title": "100-day streak", "threshold": 100 } ],
              "rule": { "kind": "streak" } },
            { "id": "check-ins", "title": "Checked in", "description": "Tasks ticked or logged.", "icon": "check",
              "levels": [ { "title": "First check-in", "threshold": 1 }, { "title": "100 check-ins", "threshold": 100 },
                          { "title": "1,000 check-ins", "threshold": 1000 } ],
              "rule": { "kind": "count", "of": "check-ins" } },
            { "id": "finisher", "title": "Finisher", "description": "Challenges completed to the last day.", "icon": "flag",
              "levels": [ { "title": "First challenge completed", "threshold": 1 }, { "title": "5 challenges completed", "threshold": 5 },
                          { "title": "20 challenges completed", "threshold": 20 } ],
              "rule": { "kind": "count", "of": "challenges-completed" } },
            { "id": "75-hard", "title": "75 Hard finished", "description": "All 75 days of 75 Hard, without a miss.", "icon": "trophy",
              "levels": [ { "title": "75 Hard finished", "threshold": 1 } ],
              "rule": { "kind": "challengeCompleted", "challengeID": "c4a11e00-0075-4000-8000-000000000001" } },
            { "id": "weekly-challenge", "title": "Weekly Challenge", "description": "A weekly challenge completed.", "icon": "calendar-star",
              "bonusPoints": 200, "levels": [ { "title": "Weekly Challenge", "threshold": 1 } ],
              "rule": { "kind": "weeklyChallenge" } },
            { "id": "weekly-goal", "title": "Weekly goal", "description": "A week's goal reached.", "icon": "target",
              "levels": [ { "title": "Weekly goal", "threshold": 1 } ],
              "rule": { "kind": "weeklyGoal" } },
            { "id": "household-champion", "title": "Household champion", "description": "First on your household's weekly board.",
              "icon": "crown", "levels": [ { "title": "Champion of the week", "threshold": 1 } ],
              "rule": { "kind": "firstPlace", "window": "week" } },
            { "id": "all-rounder", "title": "All-rounder", "description": "A chore, a 7-day streak and a challenge completed.",
              "icon": "star", "secret": true, "levels": [ { "title": "All-rounder", "threshold": 3 } ],
              "rule": { "kind": "allOf", "badges": [ "chores", "streak", "finisher" ] } }
          ]
        }
        """#

    public static func standard() throws(CatalogueError) -> BadgeCatalogue { try load(Data(standardDocument.utf8)) }
}
