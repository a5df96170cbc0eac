import Foundation
import SurgeContracts

/// One stretch of time off an attempt took: a pause, its share of a vacation, or a skip day.
public struct AttemptPause: Codable, Sendable, Equatable {
    public var pauseID: UUID
    public var kind: PauseKind
    /// The first local day off.
    public var from: LocalDate
    /// The last local day off; nil while it lasts until resumed.
    public var through: LocalDate?

    public init(pauseID: UUID, kind: PauseKind, from: LocalDate, through: LocalDate?) {
        self.pauseID = pauseID
        self.kind = kind
        self.from = from
        self.through = through
    }

    public func covers(_ date: LocalDate) -> Bool {
        date >= from && through.map { date <= $0 } ?? true
    }

    /// Whether it shares a day with the days from `first` through `last` (open-ended when nil).
    public func overlaps(from first: LocalDate, through last: LocalDate?) -> Bool {
        (through.map { first <= $0 } ?? true) && (last.map { from <= $0 } ?? true)
    }

    /// The month (`YYYY-MM`) it started in: what monthly limits count by.
    public var month: String { String(from.description.prefix(7)) }
}

/// The days an attempt does not count under one version of its rules: its pauses and the rule's rest weekdays, when
/// the rule lets time off pause the streak (a competition's pause only silences reminders: none of its days is off).
public struct TimeOff: Sendable, Equatable {
    public let pauses: [AttemptPause]
    public let restWeekdays: Set<Weekday>

    public init(pauses: [AttemptPause], rule: PauseRule) {
        if rule.mode == .pausesStreak {
            self.pauses = pauses
            self.restWeekdays = Set(rule.restWeekdays ?? [])
        } else {
            self.pauses = []
            self.restWeekdays = []
        }
    }

    public func isOff(_ date: LocalDate) -> Bool {
        restWeekdays.contains(date.weekday) || pauses.contains { $0.covers(date) }
    }

    /// The days of `days` that count.
    public func counting(_ days: [LocalDate]) -> [LocalDate] {
        days.filter { !isOff($0) }
    }

    /// "Day N": how many days from `startedOn` through `date` counted. A day off shows the number of the last day
    /// that counted (at least 1), so the number does not advance during time off.
    public func dayNumber(of date: LocalDate, startedOn: LocalDate) -> Int {
        guard date >= startedOn else { return 1 }
        guard !pauses.isEmpty || !restWeekdays.isEmpty else { return startedOn.days(until: date) + 1 }
        let counted = (0...startedOn.days(until: date)).count { !isOff(startedOn.adding(days: $0)) }
        return max(1, counted)
    }
}

extension AttemptState {
    /// Time off under the rules of `definition`.
    public func timeOff(_ definition: JudgingDefinition) -> TimeOff {
        TimeOff(pauses: pauses, rule: definition.pauseRule)
    }
}
