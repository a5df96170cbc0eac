import Foundation
import SurgeContracts

/// Plain-language descriptions of a definition's rules, generated from the rules themselves (000 CL-03, CL-06), so
/// what the detail view says and what progress enforces cannot drift apart.
public enum RuleDescription {
    /// One paragraph: how the definition fails, how long it lasts, streaks, points and the check-in window.
    public static func summary(_ definition: ChallengeVersion) -> String {
        var sentences = [failureSentence(definition)]
        if let days = definition.durationDays {
            sentences.append("It lasts \(plural(days, "day")).")
        } else if definition.kind != .chore {
            sentences.append("It is open-ended.")
        }
        sentences.append(contentsOf: streakSentences(definition.rules.streak))
        sentences.append(contentsOf: pointsSentences(definition))
        sentences.append(contentsOf: pauseSentences(definition))
        sentences.append(graceSentence(definition.rules.checkInGraceMinutes))
        return sentences.joined(separator: " ")
    }

    static func failureSentence(_ definition: ChallengeVersion) -> String {
        let failure = definition.rules.failure
        switch failure.mode {
        case .strict:
            return "Miss any task and the challenge restarts at day 1."
        case .tolerant:
            let allowed = failure.allowedMissedDays ?? 0
            return "You may miss up to \(plural(allowed, "day")); one more and the attempt fails."
        case .none:
            switch definition.kind {
            case .chore: return "A chore never fails: an overdue chore stays open until someone does it."
            case .competition: return "A competition never fails: the ranking is by total when time is up."
            default: return "It never fails: a missed day only breaks the streak."
            }
        }
    }

    static func streakSentences(_ streak: StreakRule) -> [String] {
        var sentences: [String] = []
        switch streak.period {
        case .day:
            sentences.append("The streak counts days with every task done.")
        case .week:
            let goal = streak.weeklyGoalDays.map { "the week's goal is \(plural($0, "day"))' worth of each daily task" }
            sentences.append(
                streak.activityKeepsWeeklyStreak
                    ? "The streak counts weeks (Monday to Sunday); any activity in a week keeps it."
                    : "The streak counts weeks (Monday to Sunday) that met their goal.")
            if let goal { sentences.append(goal.prefix(1).uppercased() + goal.dropFirst() + ".") }
        }
        if streak.freezesPerMonth > 0 {
            sentences.append(
                "\(streak.freezesPerMonth == 1 ? "One streak freeze" : "\(streak.freezesPerMonth) streak freezes") a month "
                    + "\(streak.freezesPerMonth == 1 ? "keeps" : "keep") the streak through a missed \(streak.period.rawValue).")
        }
        return sentences
    }

    /// Time off, when the definition states its own rule (the kind's default goes without saying).
    static func pauseSentences(_ definition: ChallengeVersion) -> [String] {
        guard let pause = definition.rules.pause else { return [] }
        switch pause.mode {
        case .notAllowed:
            return ["It cannot be paused: every day counts."]
        case .remindersOnly:
            return ["A pause only silences reminders: the time limit does not move."]
        case .pausesStreak:
            var limits: [String] = []
            if let days = pause.maxDaysPerPause { limits.append("up to \(plural(days, "day")) at a time") }
            if let perMonth = pause.pausesPerMonth { limits.append("\(plural(perMonth, "pause")) a month") }
            if let perAttempt = pause.pausesPerAttempt { limits.append("\(plural(perAttempt, "pause")) an attempt") }
            var sentences = ["It can be paused\(limits.isEmpty ? "" : " (" + limits.joined(separator: ", ") + ")"): paused days neither extend nor break the streak."]
            if let weekdays = pause.restWeekdays, !weekdays.isEmpty {
                sentences.append("Rest days: \(weekdays.sorted().map { $0.rawValue.capitalized }.joined(separator: ", ")).")
            }
            if let skips = pause.skipDaysPerMonth { sentences.append("\(plural(skips, "skip day")) a month, spent on the day itself.") }
            return sentences
        }
    }

    static func pointsSentences(_ definition: ChallengeVersion) -> [String] {
        let points = definition.rules.points
        var sentences: [String] = []
        switch points.kind {
        case .none:
            break
        case .perTask:
            let custom = Set(definition.tasks.compactMap(\.points))
            if definition.kind == .chore, let value = definition.tasks.first?.points {
                sentences.append("Doing it earns \(plural(value, "point")).")
            } else if custom.isEmpty {
                sentences.append("Each completed task earns \(plural(points.pointsPerTask ?? 1, "point")).")
            } else {
                sentences.append("Each completed task earns its own points (\(plural(points.pointsPerTask ?? 1, "point")) unless stated).")
            }
        case .series:
            if let series = points.series {
                sentences.append(
                    "Each series earns \(number(series.basePoints)) × (reps × \(number(series.repMultiplier)) + series number × "
                        + "\(number(series.seriesMultiplier))) × the streak multiplier; repetitions above the daily cap for your level earn nothing.")
            }
        }
        if let bonus = points.weeklyGoalBonus, bonus > 0 {
            let goal = definition.rules.streak.weeklyGoalDays.map { " (\(plural($0, "day"))' worth of each daily task)" } ?? ""
            sentences.append("Reaching the weekly goal\(goal) earns \(plural(bonus, "bonus point")).")
        }
        if let bonus = points.completionBonus, bonus > 0 {
            sentences.append("Completing it earns \(plural(bonus, "bonus point")).")
        }
        return sentences
    }

    static func graceSentence(_ minutes: Int) -> String {
        if minutes == 0 { return "Each day is judged at local midnight." }
        return "Check-ins for a day are accepted until \(duration(minutes)) after it ends."
    }

    /// What fails an attempt, one condition per line; empty when nothing can.
    public static func failureConditions(_ definition: ChallengeVersion) -> [String] {
        let failure = definition.rules.failure
        let window = definition.rules.checkInGraceMinutes == 0
            ? "A day is judged at local midnight: a check-in after that does not count."
            : "A day is judged \(duration(definition.rules.checkInGraceMinutes)) after local midnight: a check-in after that does not count."
        switch failure.mode {
        case .strict:
            return definition.tasks.map { "\(shortfall($0)) restarts the challenge at day 1." } + [window]
        case .tolerant:
            let allowed = failure.allowedMissedDays ?? 0
            return [
                "A day is missed when any of its tasks is not done.",
                "Missing more than \(plural(allowed, "day")) fails the attempt.",
                window,
            ]
        case .none:
            return []
        }
    }

    /// "Logging less than 3.8 litres for “Drink a gallon of water” on any day".
    static func shortfall(_ task: ChallengeTask) -> String {
        let when = cadenceText(task.cadence)
        switch task.kind {
        case .quantity:
            if let target = task.target, let unit = task.unit {
                return "Logging less than \(number(target)) \(unit) for “\(task.title)” \(when)"
            }
            if let multiple = task.targetFromDailyGoal {
                return "Logging less than \(number(multiple)) × your daily goal for “\(task.title)” \(when)"
            }
            return "Logging nothing for “\(task.title)” \(when)"
        case .checkbox:
            return "Not completing “\(task.title)” \(when)"
        case .photo:
            return "No photo for “\(task.title)” \(when)"
        }
    }

    static func cadenceText(_ cadence: Cadence) -> String {
        switch cadence.kind {
        case .daily: return "on any day"
        case .weekdays:
            let days = (cadence.weekdays ?? []).sorted().map { $0.rawValue.prefix(1).uppercased() + $0.rawValue.dropFirst(1).prefix(2) }
            return "on any of its days (\(days.joined(separator: ", ")))"
        case .timesPerWeek: return "on \(plural(cadence.timesPerWeek ?? 1, "day")) of any week"
        case .weekly: return "in any week"
        case .monthly: return "in any month"
        }
    }

    static func plural(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    static func number(_ value: Double) -> String {
        Int(exactly: value).map(String.init) ?? String(value)
    }

    static func duration(_ minutes: Int) -> String {
        minutes % 60 == 0 ? plural(minutes / 60, "hour") : plural(minutes, "minute")
    }
}
