import Foundation
import SurgeCalendar
import SurgeContracts

/// Every version of one definition; each judges the days from its `effectiveFrom` until the next version's.
public struct DefinitionTimeline: Sendable, Equatable {
    public let versions: [JudgingDefinition]

    /// The first version: in force until a later one takes effect.
    public let first: JudgingDefinition
    public let latest: JudgingDefinition

    /// Versions in any order; nil without any.
    public init?(_ versions: [JudgingDefinition]) {
        let sorted = versions.sorted { $0.version < $1.version }
        guard let first = sorted.first, let latest = sorted.last else { return nil }
        self.versions = sorted
        self.first = first
        self.latest = latest
    }

    /// The version in force on `date`: the newest whose effective date is not after it.
    public func version(on date: LocalDate) -> JudgingDefinition {
        versions.last { $0.effectiveFrom.map { $0 <= date } ?? true } ?? first
    }

    /// When the check-in window of the period ending `periodEnd` closes and the period is judged: the day's end plus
    /// the rules' grace, and for a competition no later than its end (docs/progress.md: competitions end at `endsAt`).
    public func windowCloses(_ periodEnd: LocalDate, calendar: LocalCalendar) -> Date {
        let closes = CheckInWindow.closes(periodEnd, calendar: calendar, graceMinutes: version(on: periodEnd).rules.checkInGraceMinutes)
        guard let competition = latest.competition else { return closes }
        return min(closes, competition.endsAt)
    }
}
