import Foundation
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

@testable import ProgressService

@Suite("Incremental progress equals a from-scratch recomputation", .tags(.unit), .kind(.unit))
struct StreakPropertyTests {
    static let zones = [
        "Europe/Rome", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "Pacific/Chatham", "America/Sao_Paulo",
        "Europe/London", "America/Los_Angeles", "Asia/Tokyo", "UTC",
    ]

    /// Start dates around DST changes in both hemispheres, month ends and a leap day.
    static let starts = ["2026-03-20", "2026-03-26", "2026-10-20", "2026-10-30", "2026-04-01", "2026-09-28", "2028-02-25", "2026-12-28", "2026-11-01"]
        .map { LocalDate($0)! }

    static func task(_ id: String, _ kind: TaskKind, _ cadence: Cadence = .daily, target: Double? = nil, points: Int? = nil) -> ChallengeTask {
        ChallengeTask(taskID: id, title: id, kind: kind, target: target, unit: kind == .quantity ? "litres" : nil, cadence: cadence, points: points)
    }

    static func definition(_ template: Int, duration: Int?) -> JudgingDefinition {
        let tasks: [ChallengeTask]
        let rules: ChallengeRules
        switch template {
        case 0:
            tasks = [task("workout", .checkbox), task("read", .checkbox), task("water", .quantity, target: 3.8)]
            rules = ChallengeRules(failure: .init(mode: .strict), points: .init(kind: .perTask, pointsPerTask: 10), checkInGraceMinutes: 0)
        case 1:
            tasks = [
                task("walk", .checkbox, points: 3), task("gym", .checkbox, Cadence(kind: .weekdays, weekdays: [.monday, .wednesday, .friday]), points: 7),
                task("call", .checkbox, Cadence(kind: .timesPerWeek, timesPerWeek: 3)),
            ]
            rules = ChallengeRules(
                failure: .init(mode: .tolerant, allowedMissedDays: 4), streak: .init(freezesPerMonth: 1),
                points: .init(kind: .perTask, pointsPerTask: 2), checkInGraceMinutes: 180,
                pause: PauseRule(mode: .pausesStreak, maxDaysPerPause: 5, pausesPerMonth: 2, pausesPerAttempt: 4))
        case 2:
            tasks = [task("meditate", .checkbox)]
            rules = ChallengeRules(
                failure: .init(mode: .none), streak: .init(freezesPerMonth: 2), points: .init(kind: .perTask, pointsPerTask: 1),
                checkInGraceMinutes: 1440, pause: PauseRule(mode: .pausesStreak, restWeekdays: [.sunday], skipDaysPerMonth: 2))
        default:
            tasks = [task("pushups", .quantity, target: 10)]
            rules = ChallengeRules(
                failure: .init(mode: .none),
                streak: .init(period: .week, freezesPerMonth: 1, activityKeepsWeeklyStreak: template == 3, weeklyGoalDays: 5),
                points: .init(kind: .perTask, pointsPerTask: 4, completionBonus: 50), checkInGraceMinutes: 60,
                pause: PauseRule(mode: .pausesStreak, maxDaysPerPause: 10))
        }
        return JudgingDefinition(
            challengeID: UUID(), version: 1, effectiveFrom: nil, kind: template == 2 ? .habit : .curated, name: "T\(template)",
            visibility: .curated, ownerID: nil, groupID: nil, durationDays: duration, tasks: tasks, rules: rules)
    }

    /// A random history: on most days some ticks and unticks (at random local times, some arriving hours or days
    /// late), some logged amounts.
    static func history(_ definition: JudgingDefinition, start: LocalDate, days: Int, calendar: LocalCalendar, random: inout SeededRandom) -> [SimulatedCheckIn] {
        var checkIns: [SimulatedCheckIn] = []
        let diligence = Double.random(in: 0.3...1, using: &random)
        for day in 0..<days {
            let date = start.adding(days: day)
            let dayStart = calendar.start(of: date)
            let length = calendar.end(of: date).timeIntervalSince(dayStart)
            for task in definition.tasks where Double.random(in: 0...1, using: &random) < diligence {
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let happenedAt = dayStart.addingTimeInterval(Double.random(in: 0..<length, using: &random).rounded(.down))
                    let delay: TimeInterval = Double.random(in: 0...1, using: &random) < 0.8 ? 0 : Double.random(in: 0...(2 * 86_400), using: &random)
                    let action: CheckIn.Action =
                        task.kind == .quantity
                        ? .log(quantity: Double(Int.random(in: 1...6, using: &random)), series: nil)
                        : .setDone(Double.random(in: 0...1, using: &random) < 0.8)
                    checkIns.append(SimulatedCheckIn(taskID: task.taskID, action: action, happenedAt: happenedAt, arrivesAt: happenedAt + delay, order: checkIns.count))
                }
            }
        }
        return checkIns
    }

    /// Random time off: pauses from a few days back (most refused after the grace window) to a few days ahead, for a
    /// number of days or until resumed, skip days and resumes, at random instants.
    static func timeOff(start: LocalDate, days: Int, calendar: LocalCalendar, random: inout SeededRandom) -> [SimulatedPause] {
        let first = calendar.start(of: start)
        let span = calendar.end(of: start.adding(days: days)).timeIntervalSince(first)
        return (0..<Int.random(in: 0...4, using: &random)).map { _ in
            let action: SimulatedPause.Action
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6: action = .pause(fromOffset: Int.random(in: -2...3, using: &random), days: Bool.random(using: &random) ? Int.random(in: 1...12, using: &random) : nil)
            case 6..<8: action = .skipDay
            default: action = .resume
            }
            return SimulatedPause(action: action, arrivesAt: first.addingTimeInterval(Double.random(in: 0..<span, using: &random).rounded(.down)))
        }
    }

    @Test("streak, best streak, completed days and points agree for 3000 random histories with random time off in random zones", arguments: 0..<6)
    func agreement(batch: Int) throws {
        var random = SeededRandom(seed: UInt64(batch))
        var seen: [String: Int] = [:]
        defer {
            // The histories must exercise what is being compared, or agreement would prove nothing.
            for outcome in [
                "failed", "completed", "frozen", "streak of 5+", "late check-in refused", "superseded toggle", "paused period", "pause refused",
                "retroactive pause", "resumed", "check-in on a day off refused",
            ] {
                #expect((seen[outcome] ?? 0) > 0, "no history in batch \(batch) produced: \(outcome)")
            }
        }
        for iteration in 0..<500 {
            let seed = "batch \(batch) iteration \(iteration)"
            let template = Int.random(in: 0...4, using: &random)
            let duration: Int? = Bool.random(using: &random) ? Int.random(in: 7...45, using: &random) : nil
            let definition = Self.definition(template, duration: duration)
            let calendar = LocalCalendar(zoneNamed: Self.zones.randomElement(using: &random)!)!
            let start = Self.starts.randomElement(using: &random)!.adding(days: Int.random(in: -3...3, using: &random))
            let days = Int.random(in: 1...50, using: &random)
            let endOn = duration.map { start.adding(days: $0 - 1) }
            let checkIns = Self.history(definition, start: start, days: days, calendar: calendar, random: &random)
            let pauses = Self.timeOff(start: start, days: days, calendar: calendar, random: &random)
            let now = calendar.end(of: start.adding(days: days)).addingTimeInterval(2 * 86_400)
            let incremental = IncrementalRun.run(
                timeline: DefinitionTimeline([definition])!, startedOn: start, endOn: endOn, calendar: calendar, checkIns: checkIns, pauses: pauses,
                until: now, dailyGoal: 20)
            let lastJudged = incremental.state.judgedThrough ?? start.adding(days: -1)
            let scratch = FromScratch.recompute(
                definition: definition, startedOn: start, lastDay: lastJudged, endOn: endOn, accepted: incremental.accepted,
                pauses: incremental.state.pauses, calendar: calendar, dailyGoal: 20)
            if incremental.state.status == .failed { seen["failed", default: 0] += 1 }
            if incremental.state.status == .completed { seen["completed", default: 0] += 1 }
            if incremental.state.periodsFrozen > 0 { seen["frozen", default: 0] += 1 }
            if incremental.state.bestStreak >= 5 { seen["streak of 5+", default: 0] += 1 }
            if incremental.refused > 0 { seen["late check-in refused", default: 0] += 1 }
            if incremental.superseded > 0 { seen["superseded toggle", default: 0] += 1 }
            if incremental.state.periodsPaused > 0 { seen["paused period", default: 0] += 1 }
            if incremental.pausesRefused > 0 { seen["pause refused", default: 0] += 1 }
            if incremental.retroactivePauses > 0 { seen["retroactive pause", default: 0] += 1 }
            if incremental.resumes > 0 { seen["resumed", default: 0] += 1 }
            if incremental.refusedOff > 0 { seen["check-in on a day off refused", default: 0] += 1 }
            #expect(incremental.state.currentStreak == scratch.currentStreak, "\(seed): streak")
            #expect(incremental.state.bestStreak == scratch.bestStreak, "\(seed): best")
            #expect(incremental.state.periodsCompleted == scratch.completed, "\(seed): completed")
            #expect(incremental.state.periodsPaused == scratch.paused, "\(seed): paused")
            #expect(incremental.ledger == scratch.points, "\(seed): points")
            #expect(incremental.state.points == scratch.points, "\(seed): attempt points")
            #expect((incremental.state.status == .failed) == scratch.failed, "\(seed): failed")
            #expect((incremental.state.status == .completed) == scratch.finished, "\(seed): completed attempt")
            if incremental.state.status == .active, incremental.state.judgedThrough != nil {
                #expect(lastJudged >= start, "\(seed): judged something")
            }
        }
    }
}
