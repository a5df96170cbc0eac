import Foundation
import SurgeCalendar
import SurgeContracts

/// When a day is open for check-ins and when it is judged: a day stays open until its local end plus the rules'
/// grace (offline clients syncing late), and is judged the moment it closes.
public enum CheckInWindow {
    /// Clients' clocks may run this far ahead of ours.
    public static let clockSkew: TimeInterval = 300

    /// Field errors for a client-stated `happenedAt` or `date` outside the supported instants and dates. JSON bodies
    /// are bounded by the decoder already; query parameters (a photo's) are not, and a stored command must not be
    /// trusted either.
    public static func unsupportedFields(happenedAt: Date?, date: LocalDate?) -> [FieldError] {
        var errors: [FieldError] = []
        if let happenedAt, !Timestamp.isSupported(happenedAt) {
            errors.append(.init(field: "happenedAt", message: Timestamp.unsupportedMessage(Timestamp.format(happenedAt))))
        }
        if let date, !date.isSupported {
            errors.append(.init(field: "date", message: LocalDate.unsupportedMessage(date.description)))
        }
        return errors
    }

    public static func closes(_ date: LocalDate, calendar: LocalCalendar, graceMinutes: Int) -> Date {
        calendar.end(of: date).addingTimeInterval(Double(graceMinutes) * 60)
    }

    public enum Refusal: Equatable, Sendable {
        /// The day's window has closed.
        case tooLate(closedAt: Date)
        /// It claims to have happened in the future.
        case inFuture
        /// Before the attempt (or competition) started.
        case beforeStart
        /// After the attempt's last day.
        case afterEnd
    }

    /// Whether a check-in for `date`, happening at `happenedAt` and arriving `now`, is accepted.
    /// - Parameters:
    ///   - judgedThrough: days up to this one are judged and closed for good.
    ///   - judgedThroughClosedAt: when the window of the period ending `judgedThrough` closed (a competition's closes
    ///     at its end; after a move west the day was closed by the old zone's midnight).
    ///   - closesNoEarlierThan: when the period in progress is judged; after a move east the new zone's midnight comes
    ///     first, and the day stays open until then.
    public static func check(
        date: LocalDate, happenedAt: Date, now: Date, startedOn: LocalDate, endOn: LocalDate?, calendar: LocalCalendar, graceMinutes: Int,
        judgedThrough: LocalDate? = nil, judgedThroughClosedAt: Date? = nil, closesNoEarlierThan: Date? = nil
    ) -> Refusal? {
        if happenedAt.timeIntervalSince(now) > clockSkew || date > calendar.date(at: now.addingTimeInterval(clockSkew)) { return .inFuture }
        if date < startedOn { return .beforeStart }
        if let endOn, date > endOn { return .afterEnd }
        var closedAt = closes(date, calendar: calendar, graceMinutes: graceMinutes)
        if let judgedThrough, date <= judgedThrough { return .tooLate(closedAt: min(closedAt, judgedThroughClosedAt ?? now)) }
        if let floor = closesNoEarlierThan { closedAt = max(closedAt, floor) }
        if now >= closedAt { return .tooLate(closedAt: closedAt) }
        return nil
    }
}
