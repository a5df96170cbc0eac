import SurgeContracts

/// 001's points arithmetic: levels from total points, streak multipliers, the anti-cheat daily cap, series points.
public enum Points {
    /// Level 1 plus one for every threshold reached.
    public static func level(points: Int, thresholds: [Int]) -> Int {
        1 + thresholds.filter { points >= $0 }.count
    }

    /// The multiplier of the highest band the streak has reached (1 below every band).
    public static func streakMultiplier(streak: Int, bands: [StreakMultiplier]) -> Double {
        bands.filter { streak >= $0.fromStreak }.max { $0.fromStreak < $1.fromStreak }?.multiplier ?? 1
    }

    /// Repetitions a day may earn points for at a level: daily goal x the band's multiplier (levels 1-3 x1.5,
    /// level 4 x2.0, level 5+ x2.5 in 001). The bands are used as stated; 001's `goal x (1 + level x 0.1)` formula does
    /// not reproduce them. Nil when the formula has no cap.
    public static func dailyCap(dailyGoal: Int, level: Int, bands: [CapBand]) -> Double? {
        guard let band = bands.filter({ level >= $0.fromLevel }).max(by: { $0.fromLevel < $1.fromLevel }) else { return nil }
        return Double(dailyGoal) * band.multiplierOfDailyGoal
    }

    /// base x (reps x repMultiplier + series x seriesMultiplier) x streak multiplier, rounded to whole points. The
    /// series number counts no more than the reps that earn points, so it cannot carry reps past the cap.
    public static func series(_ formula: SeriesFormula, reps: Double, seriesNumber: Int, streak: Int) -> Int {
        let series = min(Double(seriesNumber), reps)
        let raw = formula.basePoints * (reps * formula.repMultiplier + series * formula.seriesMultiplier)
        return Int(min(raw * streakMultiplier(streak: streak, bands: formula.streakMultipliers), maximumAward).rounded())
    }

    /// No single award is larger (definitions are validated, but points must never overflow).
    public static let maximumAward = 1_000_000_000.0
}
