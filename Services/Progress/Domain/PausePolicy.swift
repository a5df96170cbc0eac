import Foundation
import SurgeContracts

/// Why a pause, a skip day or a resume is refused, naming the rule broken. Mapped to problem documents at the
/// service's edge (`ProgressProblems`).
public enum PauseRefusal: Error, Equatable, Sendable {
    /// The challenge's rules allow no time off of this kind (`detail` names the rule).
    case notAllowed(String)
    /// The first day is already judged or its check-in window has closed.
    case tooLate(LocalDate, closedAt: Date)
    /// The days asked for overlap an earlier pause or skip day.
    case overlaps(AttemptPause)
    /// More days than `maxDaysPerPause`.
    case tooLong(maximum: Int)
    /// `pausesPerMonth`, `pausesPerAttempt` or `skipDaysPerMonth` is used up (`detail` names which).
    case limitReached(String)
    /// The days asked for are outside the attempt (`field`, `message`).
    case outsideAttempt(field: String, message: String)
    /// Nothing to resume.
    case notPaused
    /// The days asked for reach past the last date Surge supports (`field`, `message`).
    case beyondSupportedDates(field: String, message: String)
}

/// What a pause asks for.
public struct PauseRequest: Sendable, Equatable {
    public var kind: PauseKind
    public var from: LocalDate
    /// How many days; nil: until resumed (at most the rule's `maxDaysPerPause`).
    public var days: Int?

    public init(kind: PauseKind, from: LocalDate, days: Int?) {
        self.kind = kind
        self.from = from
        self.days = days
    }

    /// The most days one request may ask for, whatever the rule.
    public static let maximumDays = 366
}

/// Decides pauses, skip days and resumes under a challenge's `PauseRule`. Pure: the caller hands it the attempt's
/// state, today's local date, now, and when a day's check-in window closes.
public enum PausePolicy {
    public struct Attempt: Sendable {
        public var state: AttemptState
        public var startedOn: LocalDate
        public var endOn: LocalDate?
        /// The version of the rules in force on the first day asked for.
        public var definition: JudgingDefinition

        public init(state: AttemptState, startedOn: LocalDate, endOn: LocalDate?, definition: JudgingDefinition) {
            self.state = state
            self.startedOn = startedOn
            self.endOn = endOn
            self.definition = definition
        }
    }

    /// The pause `request` would add, or why it is refused. `closes` gives when a day's check-in window closes.
    public static func pause(
        _ request: PauseRequest, attempt: Attempt, today: LocalDate, now: Date, pauseID: UUID, closes: (LocalDate) -> Date
    ) throws(PauseRefusal) -> AttemptPause {
        try checkSupported(request)
        let rule = attempt.definition.pauseRule
        let name = attempt.definition.name
        guard rule.mode != .notAllowed else {
            throw .notAllowed("\(name)'s rules allow no pauses (rules.pause.mode is notAllowed): every day counts.")
        }
        let from = request.from
        guard from >= attempt.startedOn else {
            throw .outsideAttempt(field: "from", message: "is before this attempt started (\(attempt.startedOn))")
        }
        if let endOn = attempt.endOn, from > endOn {
            throw .outsideAttempt(field: "from", message: "is after this attempt's last day (\(endOn))")
        }
        // After the fact only within the check-in grace window, and never for a day already judged.
        let judged = attempt.state.judgedThrough.map { from <= $0 } ?? false
        if judged || (from < today && now >= closes(from)) {
            throw .tooLate(from, closedAt: judged ? min(closes(from), attempt.state.judgedThroughClosedAt ?? now) : closes(from))
        }
        let existing = attempt.state.pauses
        switch request.kind {
        case .skipDay:
            guard let budget = rule.skipDaysPerMonth, budget > 0 else {
                throw .notAllowed("\(name)'s rules have no skip days (rules.pause.skipDaysPerMonth).")
            }
            guard from == today else {
                throw .outsideAttempt(field: "date", message: "a skip day is spent on the day itself (\(today))")
            }
            let month = String(from.description.prefix(7))
            if existing.count(where: { $0.kind == .skipDay && $0.month == month }) >= budget {
                throw .limitReached("All \(budget) skip days of \(month) are spent (rules.pause.skipDaysPerMonth).")
            }
        case .pause, .vacation:
            if let days = request.days, let maximum = rule.maxDaysPerPause, days > maximum { throw .tooLong(maximum: maximum) }
            let pauses = existing.filter { $0.kind != .skipDay }
            if let perAttempt = rule.pausesPerAttempt, pauses.count >= perAttempt {
                throw .limitReached("This attempt has had its \(perAttempt) pauses (rules.pause.pausesPerAttempt).")
            }
            let month = String(from.description.prefix(7))
            if let perMonth = rule.pausesPerMonth, pauses.count(where: { $0.month == month }) >= perMonth {
                throw .limitReached("\(perMonth) pauses may start in \(month), and they have (rules.pause.pausesPerMonth).")
            }
        }
        let length = request.kind == .skipDay ? 1 : (request.days ?? rule.maxDaysPerPause)
        // A length the rule sets ends by the last supported date; one the user asked for was checked above.
        var through = length.map { min(from.adding(days: $0 - 1), LocalDate.supportedRange.upperBound) }
        if let endOn = attempt.endOn { through = min(through ?? endOn, endOn) }
        if let clash = existing.first(where: { $0.overlaps(from: from, through: through) }) { throw .overlaps(clash) }
        return AttemptPause(pauseID: pauseID, kind: request.kind, from: from, through: through)
    }

    /// Refuses days that reach past `LocalDate.supportedRange`, which every service reading the pause's events
    /// decodes dates by.
    public static func checkSupported(_ request: PauseRequest) throws(PauseRefusal) {
        let last = LocalDate.supportedRange.upperBound
        if request.from > last {
            throw .beyondSupportedDates(field: "from", message: LocalDate.unsupportedMessage(request.from.description))
        }
        if let days = request.days, request.from.adding(days: days - 1) > last {
            throw .beyondSupportedDates(
                field: "days", message: "would end time off on \(request.from.adding(days: days - 1)), after \(last), the last date Surge supports")
        }
    }

    /// Ends the pause in progress (or cancels the next one): days count again from today. Returns the pause as it
    /// was and as it is now (nil when cancelled before its first day); skip days are spent and cannot be resumed.
    public static func resume(_ state: inout AttemptState, today: LocalDate) throws(PauseRefusal) -> (before: AttemptPause, after: AttemptPause?) {
        guard let index = pauseToResume(state, today: today) else { throw .notPaused }
        let before = state.pauses[index]
        if before.from >= today {
            state.pauses.remove(at: index)
            return (before, nil)
        }
        state.pauses[index].through = today.adding(days: -1)
        return (before, state.pauses[index])
    }

    /// The index of the pause a resume ends: the one in progress, or else the next to come.
    public static func pauseToResume(_ state: AttemptState, today: LocalDate) -> Int? {
        state.pauses.indices
            .filter { state.pauses[$0].kind != .skipDay && (state.pauses[$0].through.map { $0 >= today } ?? true) }
            .min { state.pauses[$0].from < state.pauses[$1].from }
    }

    /// Skip days of the rule's monthly budget still unspent in `today`'s month; nil when the rule has none.
    public static func skipDaysLeft(_ state: AttemptState, rule: PauseRule, today: LocalDate) -> Int? {
        guard rule.mode == .pausesStreak, let budget = rule.skipDaysPerMonth, budget > 0 else { return nil }
        let month = String(today.description.prefix(7))
        return max(0, budget - state.pauses.count { $0.kind == .skipDay && $0.month == month })
    }
}
