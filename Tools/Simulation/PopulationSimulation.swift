import Foundation
import SurgeCalendar
import SurgeContracts

/// A population of users driven through the gateway over simulated days, with every clock moved together, that
/// keeps its own record of what each user did and computes the KPIs from that record (docs/analytics.md's
/// definitions, implemented a second time, independently of the projector).
///
/// Behaviours: some never start (a few come back on day 7 to edit their profile), some start their own 4-day habit
/// in the first session and tick every day (most come back on day 7 to start it again), some start it later in the
/// day (a second session) and miss one day, some start 75 Hard and miss day 1 (half of them restart the next day and
/// fail again), some tick once and abandon. One finisher opts out of telemetry on day 1; one is deleted on day 2.
public struct PopulationSimulation: Sendable {
    public enum Persona: CaseIterable, Sendable {
        case ghost, finisher, lateStarter, quitter, abandoner
    }

    /// The daily moments at which users act, local time.
    public enum Slot: String, CaseIterable, Sendable {
        case morning = "09:00"
        case start = "09:05"
        case settings = "10:00"
        case afternoon = "11:00"
    }

    public struct Attempt: Sendable {
        var id: String
        var challengeID: String
        var strict: Bool
        var startedOn: LocalDate
        var startedAt: Date
        /// The days ticked, and when each was first ticked.
        var ticks: [LocalDate: Date] = [:]
        var abandonedOn: LocalDate?
        var abandonedAt: Date?
        var restartedAt: Date?
    }

    public struct User: Sendable {
        let index: Int
        let persona: Persona
        let zone: String
        let calendar: LocalCalendar
        let registrationDay: Int
        let returns: Bool
        public internal(set) var id: UUID?
        var token: String?
        var habitID: String?
        var registeredAt: Date?
        var activities: [Date] = []
        var attempts: [Attempt] = []
        public internal(set) var optedOutAt: Date?
        public internal(set) var deleted = false

        var cohortDate: LocalDate? { registeredAt.map(calendar.date(at:)) }
    }

    static let zones = ["Europe/Rome", "America/New_York", "Asia/Tokyo"]
    static let habitDays = 4

    public let firstDay: LocalDate
    public let days: Int
    public internal(set) var users: [User]
    /// Every instant the clock is moved to, in order; the last one is `now` for the KPIs.
    public let instants: [Date]

    public init(users count: Int, seed: UInt64, firstDay: LocalDate, days: Int) {
        var random = SeededRandom(seed: seed)
        self.firstDay = firstDay
        self.days = days
        users = (0..<count).map { index in
            let persona: Persona = index < 2 ? .finisher : Persona.allCases[Int(random.next() % UInt64(Persona.allCases.count))]
            let zone = Self.zones[index % Self.zones.count]
            return User(
                index: index, persona: persona, zone: zone, calendar: LocalCalendar(zoneNamed: zone)!,
                registrationDay: Int(random.next() % 3), returns: random.next() % 10 < (persona == .ghost ? 3 : 6))
        }
        var moments: [Date] = []
        for day in 0..<days {
            for zone in Self.zones {
                let calendar = LocalCalendar(zoneNamed: zone)!
                for slot in Slot.allCases { moments.append(calendar.instant(of: LocalTime(slot.rawValue)!, on: firstDay.adding(days: day))) }
            }
        }
        // Past every zone's midnight after the last day, so that day is judged everywhere.
        let end = Self.zones.map { LocalCalendar(zoneNamed: $0)!.start(of: firstDay.adding(days: days)) }.max()!
        moments.append(end.addingTimeInterval(3600))
        instants = moments.sorted()
    }

    public var now: Date { instants.last! }
    public var lastDay: LocalDate { firstDay.adding(days: days - 1) }

    // MARK: What each user does, and when

    /// What `user` does at `slot` of simulated day `day` (0-based).
    func actions(of user: User, day: Int, slot: Slot) -> [Action] {
        let k = day - user.registrationDay
        guard !user.deleted, k >= 0 else { return [] }
        if k == 0 && slot == .morning { return [.register] }
        switch (user.persona, k, slot) {
        case (.ghost, 7, .start) where user.returns: return [.editProfile]
        case (.finisher, 0, .start): return [.startHabit, .tick]
        case (.finisher, 1...3, .start): return [.tick]
        case (.finisher, 7, .start) where user.returns: return [.startHabit, .tick]
        case (.lateStarter, 0, .afternoon): return [.startHabit, .tick]
        case (.lateStarter, 1, .start), (.lateStarter, 3, .start): return [.tick]
        case (.lateStarter, 7, .start) where user.returns: return [.startHabit, .tick]
        case (.quitter, 0, .start): return [.startHard]
        case (.quitter, 1, .start) where user.returns: return [.restart]
        case (.abandoner, 0, .start): return [.startHabit, .tick]
        case (.abandoner, 1, .start): return [.abandon]
        default: break
        }
        if user.index == 0 && k == 1 && slot == .settings { return [.optOut] }
        if user.index == 1 && k == 2 && slot == .settings { return [.delete] }
        return []
    }

    enum Action {
        case register, startHabit, startHard, tick, restart, abandon, editProfile, optOut, delete
    }

    // MARK: The KPIs from the record

    /// A fact the projector would keep, with the instant that decides whether an opt-out hides it.
    struct Judged {
        var date: LocalDate
        var completed: Bool
        var at: Date
    }

    struct Derived {
        var judged: [Judged] = []
        var breaks: [(date: LocalDate, length: Int, at: Date)] = []
        var end: (date: LocalDate, outcome: AttemptEnd, at: Date)?
    }

    /// What progress's judge makes of an attempt (a single daily checkbox task, no grace, no freezes): each day up to
    /// the last judged one is completed if ticked, else missed; a strict challenge fails on its first miss; a habit
    /// completes on its last day; an abandoned attempt stops being judged on the day it is abandoned.
    func derive(_ attempt: Attempt, calendar: LocalCalendar) -> Derived {
        var derived = Derived()
        var streak = 0
        let endOn = attempt.strict ? nil : attempt.startedOn.adding(days: Self.habitDays - 1)
        var day = attempt.startedOn
        while day <= lastDay, endOn.map({ day <= $0 }) ?? true {
            if let abandoned = attempt.abandonedOn, day >= abandoned { break }
            let closes = calendar.start(of: day.adding(days: 1))
            let completed = attempt.ticks[day] != nil
            derived.judged.append(Judged(date: day, completed: completed, at: closes))
            if completed {
                streak += 1
            } else {
                if streak > 0 { derived.breaks.append((day, streak, closes)) }
                streak = 0
                if attempt.strict {
                    derived.end = (day, .failed, closes)
                    return derived
                }
            }
            if day == endOn {
                derived.end = (day, .completed, closes)
                return derived
            }
            day = day.adding(days: 1)
        }
        if let abandonedOn = attempt.abandonedOn, let at = attempt.abandonedAt { derived.end = (abandonedOn, .abandoned, at) }
        return derived
    }

    public struct Value: Equatable, Sendable, CustomStringConvertible {
        public var numerator = 0
        public var denominator = 0
        public var description: String { "\(numerator)/\(denominator)" }
    }

    public typealias Values = [String: Value]

    public struct Expected: Sendable {
        public var days: [LocalDate: (registrations: Int, values: Values)] = [:]
        public var weeks: [LocalDate: (users: Int, values: Values)] = [:]
    }

    /// The KPIs by day and by cohort week, from the record alone.
    public func expected() -> Expected {
        var result = Expected()
        func add(_ kpi: String, day: LocalDate?, week: LocalDate, numerator: Bool, denominator: Int = 1, amount: Int = 1) {
            if let day {
                result.days[day, default: (0, [:])].values[kpi, default: Value()].denominator += denominator
                if numerator { result.days[day, default: (0, [:])].values[kpi, default: Value()].numerator += amount }
            }
            result.weeks[week, default: (0, [:])].values[kpi, default: Value()].denominator += denominator
            if numerator { result.weeks[week, default: (0, [:])].values[kpi, default: Value()].numerator += amount }
        }
        for user in users where !user.deleted {
            guard let registeredAt = user.registeredAt, let cohort = user.cohortDate else { continue }
            let week = cohort.startOfWeek
            let seen: (Date) -> Bool = { time in user.optedOutAt.map { time < $0 } ?? true }
            result.days[cohort, default: (0, [:])].registrations += 1
            result.weeks[week, default: (0, [:])].users += 1

            let day7Ends = user.calendar.start(of: cohort.adding(days: 8))
            if user.optedOutAt.map({ $0 >= day7Ends }) ?? true {
                let activities = user.activities.filter(seen).sorted()
                let retained = activities.contains { user.calendar.date(at: $0) == cohort.adding(days: 7) }
                add("day7Retention", day: cohort, week: week, numerator: retained)
                var sessionEnds = Date.distantFuture
                var previous = registeredAt
                for time in activities where time >= registeredAt {
                    if time.timeIntervalSince(previous) > 30 * 60 {
                        sessionEnds = time
                        break
                    }
                    previous = time
                }
                let startedEarly = user.attempts.contains { $0.startedAt >= registeredAt && $0.startedAt < sessionEnds && seen($0.startedAt) }
                add("challengeStartRate", day: cohort, week: week, numerator: startedEarly)
            }

            var expectedDays: [LocalDate: Bool] = [:]
            let checkedIn = Set(user.attempts.flatMap { attempt in attempt.ticks.filter { seen($0.value) }.map(\.key) })
            for attempt in user.attempts where seen(attempt.startedAt) {
                let derived = derive(attempt, calendar: user.calendar)
                for judged in derived.judged where seen(judged.at) { expectedDays[judged.date] = checkedIn.contains(judged.date) }
                for streakBreak in derived.breaks where seen(streakBreak.at) {
                    add("averageStreakBeforeBreak", day: streakBreak.date, week: week, numerator: true, amount: streakBreak.length)
                }
                if let end = derived.end, seen(end.at) {
                    add("completionRate", day: end.date, week: week, numerator: end.outcome == .completed)
                    if end.outcome == .failed {
                        add("restartRate", day: end.date, week: week, numerator: attempt.restartedAt.map(seen) ?? false)
                    }
                }
            }
            for (date, checked) in expectedDays { add("dailyCheckInRate", day: date, week: week, numerator: checked) }
        }
        return result
    }
}
