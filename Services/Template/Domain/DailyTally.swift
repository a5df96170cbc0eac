import Foundation
import SurgeContracts

/// How many check-ins a user made on one of their local days. The template's whole domain: a value, the rule that
/// changes it, and the errors a caller can cause, with no I/O (this module may import only Contracts and Calendar).
public struct DailyTally: Codable, Sendable, Equatable {
    public var userID: UUID
    public var date: LocalDate
    public var checkIns: Int

    public init(userID: UUID, date: LocalDate, checkIns: Int = 0) {
        self.userID = userID
        self.date = date
        self.checkIns = checkIns
    }

    /// Whether this tally reaches a new round number worth announcing (every `every` check-ins).
    public func isMilestone(every: Int) -> Bool {
        every > 0 && checkIns > 0 && checkIns % every == 0
    }
}

/// Errors of the template's domain, mapped to problem documents at the API edge (`TemplateProblems`).
public enum TallyError: Error, Equatable {
    /// A day too far from today to have check-ins worth asking about.
    case dateOutOfRange(LocalDate)
}

public enum TallyRules {
    /// How many days back a tally can be read.
    public static let historyDays = 366

    /// Validates the day a caller asks about, relative to the caller's today.
    public static func checkReadable(_ date: LocalDate, today: LocalDate) throws(TallyError) {
        guard date <= today, date.days(until: today) <= historyDays else { throw .dateOutOfRange(date) }
    }
}
