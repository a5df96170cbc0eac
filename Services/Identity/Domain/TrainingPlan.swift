import Foundation
import SurgeContracts

/// The onboarding answers (001 ONBD-01).
public struct TrainingAnswers: Sendable, Equatable {
    public var activityLevel: ActivityLevel
    public var maxPushUpsInOneSet: Int
    public var daysPerWeek: Int

    public static let maxPushUpsRange = 0...500
    public static let daysPerWeekRange = 1...7

    public init(activityLevel: ActivityLevel, maxPushUpsInOneSet: Int, daysPerWeek: Int) {
        self.activityLevel = activityLevel
        self.maxPushUpsInOneSet = maxPushUpsInOneSet
        self.daysPerWeek = daysPerWeek
    }
}

/// What Surge recommends from the answers (001 ONBD-02). A pure function of the answers.
///
/// - Starting series, from the capacity (max push-ups in one set): 0–9 → 1, 10–24 → 2, 25–49 → 5, 50+ → 10.
/// - Recovery between series, from the activity level: beginner 60 s, intermediate 45 s, advanced 30 s.
/// - Daily goal, from capacity and frequency: a week's volume of ten maximal sets, `10 × c` with
///   `c = max(capacity, 3)` (so someone who cannot do a push-up yet still gets a small goal), spread over the training
///   days, `10 × c / days`, but never more than three maximal sets in one day, `3 × c`; rounded to the nearest
///   multiple of 5 and kept within 5…1000. So `dailyGoal × daysPerWeek` stays near `10 × capacity` whatever the
///   frequency (capacity 20: 5 days → 40 a day, 7 days → 30, 2 days → 60 because of the daily cap).
public struct TrainingRecommendation: Codable, Sendable, Equatable {
    public var dailyGoal: Int
    public var startingSeries: Int
    public var recoverySeconds: Int

    public static let weeklyMaximalSets = 10
    public static let dailyMaximalSets = 3
    public static let minimumCapacity = 3
    public static let dailyGoalRange = 5...1000

    public init(dailyGoal: Int, startingSeries: Int, recoverySeconds: Int) {
        self.dailyGoal = dailyGoal
        self.startingSeries = startingSeries
        self.recoverySeconds = recoverySeconds
    }

    public init(for answers: TrainingAnswers) {
        self.init(
            dailyGoal: Self.dailyGoal(maxPushUpsInOneSet: answers.maxPushUpsInOneSet, daysPerWeek: answers.daysPerWeek),
            startingSeries: Self.startingSeries(maxPushUpsInOneSet: answers.maxPushUpsInOneSet),
            recoverySeconds: Self.recoverySeconds(answers.activityLevel))
    }

    public static func startingSeries(maxPushUpsInOneSet capacity: Int) -> Int {
        switch capacity {
        case ..<10: 1
        case 10..<25: 2
        case 25..<50: 5
        default: 10
        }
    }

    public static func recoverySeconds(_ level: ActivityLevel) -> Int {
        switch level {
        case .beginner: 60
        case .intermediate: 45
        case .advanced: 30
        }
    }

    public static func dailyGoal(maxPushUpsInOneSet capacity: Int, daysPerWeek: Int) -> Int {
        let effective = Double(max(capacity, minimumCapacity))
        let days = Double(min(max(daysPerWeek, 1), 7))
        let raw = min(Double(weeklyMaximalSets) * effective / days, Double(dailyMaximalSets) * effective)
        let rounded = Int((raw / 5).rounded(.toNearestOrAwayFromZero)) * 5
        return min(max(rounded, dailyGoalRange.lowerBound), dailyGoalRange.upperBound)
    }
}

/// A saved training plan: the answers and the values the user accepted (the recommendation where they accepted it
/// unchanged). Editable later (ONBD-03).
public struct TrainingPlan: Sendable, Equatable {
    public var answers: TrainingAnswers
    public var dailyGoal: Int
    public var startingSeries: Int
    public var recoverySeconds: Int

    public static let dailyGoalRange = 1...2000
    public static let startingSeriesRange = 1...100
    public static let recoverySecondsRange = 5...600

    public var recommendation: TrainingRecommendation { TrainingRecommendation(for: answers) }

    public init(answers: TrainingAnswers, dailyGoal: Int, startingSeries: Int, recoverySeconds: Int) {
        self.answers = answers
        self.dailyGoal = dailyGoal
        self.startingSeries = startingSeries
        self.recoverySeconds = recoverySeconds
    }

    /// Validates the answers and the accepted values; an omitted value takes the recommendation.
    public init(
        activityLevel: ActivityLevel, maxPushUpsInOneSet: Int, daysPerWeek: Int, dailyGoal: Int?, startingSeries: Int?,
        recoverySeconds: Int?
    ) throws(IdentityError) {
        var errors: [FieldError] = []
        if !TrainingAnswers.maxPushUpsRange.contains(maxPushUpsInOneSet) {
            errors.append(.init(field: "maxPushUpsInOneSet", message: "must be from 0 to 500"))
        }
        if !TrainingAnswers.daysPerWeekRange.contains(daysPerWeek) {
            errors.append(.init(field: "daysPerWeek", message: "must be from 1 to 7"))
        }
        if let dailyGoal, !Self.dailyGoalRange.contains(dailyGoal) {
            errors.append(.init(field: "dailyGoal", message: "must be from 1 to 2000"))
        }
        if let startingSeries, !Self.startingSeriesRange.contains(startingSeries) {
            errors.append(.init(field: "startingSeries", message: "must be from 1 to 100"))
        }
        if let recoverySeconds, !Self.recoverySecondsRange.contains(recoverySeconds) {
            errors.append(.init(field: "recoverySeconds", message: "must be from 5 to 600"))
        }
        guard errors.isEmpty else { throw IdentityError.invalidFields(errors) }
        let answers = TrainingAnswers(activityLevel: activityLevel, maxPushUpsInOneSet: maxPushUpsInOneSet, daysPerWeek: daysPerWeek)
        let recommended = TrainingRecommendation(for: answers)
        self.init(
            answers: answers, dailyGoal: dailyGoal ?? recommended.dailyGoal, startingSeries: startingSeries ?? recommended.startingSeries,
            recoverySeconds: recoverySeconds ?? recommended.recoverySeconds)
    }
}
