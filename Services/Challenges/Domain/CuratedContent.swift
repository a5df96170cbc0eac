import Foundation
import SurgeContracts

/// One curated definition with its content version. Raising `contentVersion` publishes the changed definition as a
/// new version at the next start (`ContentSeeder`); an unchanged number leaves the stored definition alone.
public struct CuratedEntry: Sendable, Equatable {
    public var contentVersion: Int
    public var definition: ChallengeVersion

    public init(contentVersion: Int, definition: ChallengeVersion) {
        self.contentVersion = contentVersion
        self.definition = definition
    }
}

/// The curated library (000 "MVP Challenge Content") and the system definitions other apps need (001). Versioned
/// content, seeded idempotently at every start: fixed ids, one row per definition, nothing duplicated.
///
/// Sources checked for the rules:
/// - 75 Hard, created by Andy Frisella (2019). Five daily tasks for 75 days; any miss restarts at day 1:
///   https://www.toevolution.com/blog/view/2274761/75-hard-challenge-the-complete-guide-and-rules-pdf-download-online-reading
///   (gallon of water; a diet with no cheat meals and no alcohol; two 45-minute workouts, one outdoors; 10 pages of a
///   self-help book; a daily progress photo; "if you slip up, you have to start over"),
///   https://www.dnaindia.com/explainer/report-explained-what-is-the-75-hard-challenge-and-why-is-it-trending-on-social-media-these-days-3030012
///   (one workout outside regardless of the weather; "any slip-ups ... means starting over from day one"),
///   https://angie-jensen.blogspot.com/2022/08/lets-do-this-thing.html (quoting Frisella: no alcohol, "not a drop";
///   "if you miss a task, you must start over at day one"), https://vloggerzone.com/web-stories/75-hard-challenge-creator/
///   (non-fiction only, no audiobooks).
/// - 75 Soft, the gentler variant: eat well and drink alcohol only on social occasions; train 45 minutes a day with one
///   active-recovery day a week; 3 litres of water; 10 pages of any book:
///   https://www.guads.org/75-hard/ ,
///   https://apkcombo.com/75-soft-challenge/com.soft75challenge.daysoft75challenge.easychallenge/ ,
///   https://healthpage.co.uk/?p=789 ("you won't face harsh penalties for minor slip-ups"). No source fixes a number
///   of allowed misses; we chose tolerant with 7 missed days (about one in ten).
/// - 30-Day Fitness Challenge: no single canonical programme. Ours follows the common progressive bodyweight plan of
///   https://www.playstudyo.fit/en/news-single/30/30-day-fitness-challenge-a-fresh-start-for-a-healthy-life
///   (30-45 minutes a day; squats, push-ups, sit-ups and a plank, increasing weekly; cardio days; one rest day a week;
///   2-2.5 litres of water a day) and https://hallsofstrength.org/blogs/fitness-challenges-motivation/the-0.php
///   (5-minute warm-up and cool-down stretch; "rest if needed"). Hence a workout six days a week and a tolerance of 3
///   missed days.
/// - 21-Day Meditation Challenge: meditate every day for three weeks, 10-15 minutes, noting how you feel:
///   https://www.routineimpact.com/challenges/daily-meditation (21 days, 10-15 minutes daily, beginner, note your
///   mental state before and after), https://sproutedlavender.com/21-day-meditation-challenge21-day-meditation-challenge-for-better-mental-wellness/
///   ("it's okay if you miss a day or two"): tolerant with 2 missed days.
/// - 30-Day No Sugar Challenge: no added sugar (table sugar, honey, syrups, agave, molasses) and no artificial
///   sweeteners for 30 days; no sugary drinks; whole fruit and unsweetened dairy allowed; read labels for hidden sugars:
///   https://www.healthline.com/nutrition/30-days-no-sugar , https://www.thechallenge.org/no-sugar-challenge ,
///   https://ntro.it.com/what-are-the-rules-for-the-30-day-no-sugar-challenge . The point is 30 days in a row without
///   added sugar, so a slip restarts it (strict); the day may be logged until noon the next day.
/// - Daily push-ups and the weekly push-up challenge: 001 (push-up trainer v2.5) POINTS-01..03, WEEKLY-01/03/05,
///   CHAL-01..03, ANTCHEAT-01/02.
public enum CuratedContent {
    public static let seventyFiveHardID = UUID(uuidString: "c4a11e00-0075-4000-8000-000000000001")!
    public static let seventyFiveSoftID = UUID(uuidString: "c4a11e00-0075-4000-8000-000000000002")!
    public static let thirtyDayFitnessID = UUID(uuidString: "c4a11e00-0030-4000-8000-000000000003")!
    public static let meditationID = UUID(uuidString: "c4a11e00-0021-4000-8000-000000000004")!
    public static let noSugarID = UUID(uuidString: "c4a11e00-0030-4000-8000-000000000005")!
    public static let dailyPushUpsID = UUID(uuidString: "c4a11e00-0000-4000-8000-000000000006")!
    public static let weeklyPushUpsID = UUID(uuidString: "c4a11e00-0007-4000-8000-000000000007")!

    public static let entries: [CuratedEntry] = [
        CuratedEntry(contentVersion: 1, definition: seventyFiveHard),
        CuratedEntry(contentVersion: 1, definition: seventyFiveSoft),
        CuratedEntry(contentVersion: 1, definition: thirtyDayFitness),
        CuratedEntry(contentVersion: 1, definition: meditation),
        CuratedEntry(contentVersion: 1, definition: noSugar),
        CuratedEntry(contentVersion: 1, definition: dailyPushUps),
        CuratedEntry(contentVersion: 1, definition: weeklyPushUps),
    ]

    private static func curated(
        _ id: UUID, kind: ChallengeKind = .curated, name: String, description: String, category: String, difficulty: Difficulty,
        durationDays: Int?, minutes: Int, tasks: [ChallengeTask], rules: ChallengeRules
    ) -> ChallengeVersion {
        ChallengeVersion(
            challengeID: id, version: 1, effectiveFrom: nil, kind: kind, name: name, description: description, category: category,
            difficulty: difficulty, visibility: .curated, ownerID: nil, groupID: nil, durationDays: durationDays,
            estimatedDailyMinutes: minutes, tasks: tasks, rules: rules)
    }

    /// Points for the library challenges: 10 a task, 200 for finishing (001 CHAL-02's completion bonus).
    private static let libraryPoints = PointsRule(kind: .perTask, pointsPerTask: 10, completionBonus: 200)

    public static let seventyFiveHard = curated(
        seventyFiveHardID, name: "75 Hard",
        description: """
            Andy Frisella's mental toughness programme: 75 days in a row of five non-negotiable daily tasks. Two \
            45-minute workouts (one outdoors, whatever the weather), a diet with no cheat meals and no alcohol, a gallon \
            of water, 10 pages of a non-fiction book and a progress photo. No substitutions: miss anything and you start \
            again at day 1.
            """,
        category: "fitness", difficulty: .extreme, durationDays: 75, minutes: 120,
        tasks: [
            ChallengeTask(
                taskID: "workouts", title: "Two 45-minute workouts",
                details: "Two separate workouts of at least 45 minutes each; one of them outdoors, whatever the weather.",
                kind: .checkbox),
            ChallengeTask(
                taskID: "diet", title: "Follow your diet",
                details: "The diet you chose for your goal, with no cheat meals and not a drop of alcohol.", kind: .checkbox),
            ChallengeTask(
                taskID: "water", title: "Drink a gallon of water", details: "One US gallon (3.785 litres) of plain water.",
                kind: .quantity, target: 3.8, unit: "litres"),
            ChallengeTask(
                taskID: "reading", title: "Read 10 pages",
                details: "Of a non-fiction or self-improvement book. Audiobooks do not count.", kind: .quantity, target: 10,
                unit: "pages"),
            ChallengeTask(taskID: "progress-photo", title: "Take a progress photo", kind: .photo),
        ],
        rules: ChallengeRules(failure: FailureRule(mode: .strict), streak: StreakRule(period: .day), points: libraryPoints, checkInGraceMinutes: 0))

    public static let seventyFiveSoft = curated(
        seventyFiveSoftID, name: "75 Soft",
        description: """
            The sustainable take on 75 Hard: 75 days of eating well, 45 minutes of training, 3 litres of water and 10 \
            pages of any book. One training day a week may be active recovery, alcohol is kept to social occasions, and \
            a few missed days do not send you back to the start.
            """,
        category: "fitness", difficulty: .moderate, durationDays: 75, minutes: 65,
        tasks: [
            ChallengeTask(
                taskID: "eat-well", title: "Eat well", details: "Nourishing meals; alcohol only on social occasions.", kind: .checkbox),
            ChallengeTask(
                taskID: "training", title: "Train for 45 minutes",
                details: "Any training; one day a week may be active recovery (a walk, yoga, mobility work).", kind: .quantity,
                target: 45, unit: "minutes"),
            ChallengeTask(taskID: "water", title: "Drink 3 litres of water", kind: .quantity, target: 3, unit: "litres"),
            ChallengeTask(taskID: "reading", title: "Read 10 pages", details: "Of any book.", kind: .quantity, target: 10, unit: "pages"),
        ],
        rules: ChallengeRules(
            failure: FailureRule(mode: .tolerant, allowedMissedDays: 7), streak: StreakRule(period: .day, freezesPerMonth: 1),
            points: libraryPoints, checkInGraceMinutes: 120))

    public static let thirtyDayFitness = curated(
        thirtyDayFitnessID, name: "30-Day Fitness Challenge",
        description: """
            A month of progressive bodyweight fitness for beginners and returners: squats, push-ups, sit-ups and planks \
            that grow a little every week, with cardio days and one rest day a week. Warm up, work out for about 30 \
            minutes, stretch, and drink enough water.
            """,
        category: "fitness", difficulty: .moderate, durationDays: 30, minutes: 35,
        tasks: [
            ChallengeTask(
                taskID: "workout", title: "Do the day's workout",
                details: "About 30 minutes: the strength circuit (squats, push-ups, sit-ups, plank) or cardio; one rest day a week.",
                kind: .checkbox, cadence: Cadence(kind: .timesPerWeek, timesPerWeek: 6)),
            ChallengeTask(
                taskID: "stretch", title: "Stretch for 5 minutes", details: "Cool down and stretch, also on rest days.", kind: .quantity,
                target: 5, unit: "minutes"),
            ChallengeTask(taskID: "water", title: "Drink 2 litres of water", kind: .quantity, target: 2, unit: "litres"),
        ],
        rules: ChallengeRules(
            failure: FailureRule(mode: .tolerant, allowedMissedDays: 3), streak: StreakRule(period: .day, freezesPerMonth: 1),
            points: libraryPoints, checkInGraceMinutes: 120))

    public static let meditation = curated(
        meditationID, name: "21-Day Meditation Challenge",
        description: """
            Build a meditation habit in three weeks: 10 to 15 minutes a day of breath focus, a body scan or a guided \
            session, and a note on how you feel afterwards. For beginners; missing a day or two is fine.
            """,
        category: "mindfulness", difficulty: .beginner, durationDays: 21, minutes: 15,
        tasks: [
            ChallengeTask(
                taskID: "meditate", title: "Meditate for 10 minutes",
                details: "Breath focus, a body scan or a guided session; 10 to 15 minutes.", kind: .quantity, target: 10,
                unit: "minutes"),
            ChallengeTask(
                taskID: "reflect", title: "Note how you feel", details: "A line on your mood before and after the session.",
                kind: .checkbox),
        ],
        rules: ChallengeRules(
            failure: FailureRule(mode: .tolerant, allowedMissedDays: 2), streak: StreakRule(period: .day),
            points: libraryPoints, checkInGraceMinutes: 120))

    public static let noSugar = curated(
        noSugarID, name: "30-Day No Sugar Challenge",
        description: """
            Thirty days without added sugar to reset your taste and steady your energy: no table sugar, honey, syrups or \
            artificial sweeteners, and no sugary drinks. Whole fruit and unsweetened dairy are fine; read labels for \
            hidden sugars. A slip starts the 30 days again.
            """,
        category: "nutrition", difficulty: .moderate, durationDays: 30, minutes: 10,
        tasks: [
            ChallengeTask(
                taskID: "no-added-sugar", title: "No added sugar",
                details: "No sugar, honey, maple syrup, agave, molasses, corn syrup or artificial sweeteners. Whole fruit and unsweetened dairy are fine.",
                kind: .checkbox),
            ChallengeTask(
                taskID: "no-sugary-drinks", title: "No sugary drinks",
                details: "No soda, juice, energy drinks, or sweetened coffee or tea.", kind: .checkbox),
            ChallengeTask(
                taskID: "read-labels", title: "Check labels for hidden sugar",
                details: "Dextrose, fructose, maltose, syrups and juice concentrates hide in sauces, bread, cereal and yoghurt.",
                kind: .checkbox),
        ],
        rules: ChallengeRules(
            failure: FailureRule(mode: .strict), streak: StreakRule(period: .day), points: libraryPoints, checkInGraceMinutes: 720))

    /// 001's points formula. Streak multipliers are per week of streak (the push-up streak is weekly, WEEKLY-05) and are
    /// our choice: 001 names a streak multiplier without values. The anti-cheat cap uses ANTCHEAT-01's bands (levels 1-3
    /// x1.5, level 4 x2.0, level 5+ x2.5). ANTCHEAT-01 also states `daily goal x (1 + level x 0.1)`, which does not
    /// reproduce those bands (it gives x1.1 at level 1 and x1.5 only at level 5); the bands are what the app shipped
    /// and are used here. Level thresholds are ours too (001 does not list them).
    public static let pushUpSeries = SeriesFormula(
        basePoints: 10, repMultiplier: 0.3, seriesMultiplier: 0.8,
        streakMultipliers: [
            StreakMultiplier(fromStreak: 0, multiplier: 1.0), StreakMultiplier(fromStreak: 2, multiplier: 1.1),
            StreakMultiplier(fromStreak: 4, multiplier: 1.25), StreakMultiplier(fromStreak: 8, multiplier: 1.5),
            StreakMultiplier(fromStreak: 12, multiplier: 2.0),
        ],
        capBands: [
            CapBand(fromLevel: 1, multiplierOfDailyGoal: 1.5), CapBand(fromLevel: 4, multiplierOfDailyGoal: 2.0),
            CapBand(fromLevel: 5, multiplierOfDailyGoal: 2.5),
        ],
        levelThresholds: [500, 1500, 3500, 7500, 15_000, 30_000, 60_000, 120_000, 250_000])

    public static let dailyPushUps = curated(
        dailyPushUpsID, name: "Daily Push-ups",
        description: """
            Push-ups every day towards your personal daily goal, in series. Each series earns points by the push-up \
            trainer's formula, multiplied by your streak; reach the weekly goal (five times your daily goal) for 500 \
            bonus points. Any push-ups in a week keep your weekly streak, and one freeze a month covers a slow week.
            """,
        category: "fitness", difficulty: .moderate, durationDays: nil, minutes: 10,
        tasks: [
            ChallengeTask(
                taskID: "push-ups", title: "Push-ups towards your daily goal",
                details: "Log each series; repetitions above your level's daily cap are kept but earn no points.", kind: .quantity,
                targetFromDailyGoal: 1, unit: "push-ups")
        ],
        rules: ChallengeRules(
            failure: FailureRule(mode: .none),
            streak: StreakRule(period: .week, freezesPerMonth: 1, activityKeepsWeeklyStreak: true, weeklyGoalDays: 5),
            points: PointsRule(kind: .series, series: pushUpSeries, weeklyGoalBonus: 500),
            checkInGraceMinutes: 0))

    /// 001 CHAL-01/02: "Complete X push-ups this week", X = daily goal x 7, resetting every week; 200 bonus points.
    public static let weeklyPushUps = curated(
        weeklyPushUpsID, kind: .weekly, name: "Weekly Push-up Challenge",
        description: """
            Complete seven times your daily goal in push-ups this week (Monday to Sunday). A new challenge starts every \
            week; completing it earns 200 bonus points and the week's badge.
            """,
        category: "fitness", difficulty: .moderate, durationDays: nil, minutes: 10,
        tasks: [
            ChallengeTask(
                taskID: "push-ups", title: "Push-ups this week", details: "Seven times your daily goal, Monday to Sunday.",
                kind: .quantity, targetFromDailyGoal: 7, unit: "push-ups", cadence: Cadence(kind: .weekly))
        ],
        rules: ChallengeRules(
            failure: FailureRule(mode: .none), streak: StreakRule(period: .week), points: PointsRule(kind: .none, completionBonus: 200),
            checkInGraceMinutes: 0))
}
