import Foundation
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeRuntime

/// What the caller reads about their attempts: one attempt, the list, a month's calendar, the contribution history,
/// and the data export.
struct AttemptQueries: Sendable {
    let storage: ProgressStorage
    let clock: ServiceClock

    func snapshot(_ attemptID: UUID, userID: UUID) async throws -> AttemptSnapshot {
        try await storage.read { stores in
            guard let attempt = try await stores.attempts.find(attemptID, of: userID) else { throw ProgressError.notFound(.attempt) }
            let member = try await stores.requireMember(userID)
            let timeline = try await stores.requireTimeline(of: attempt)
            return try await stores.snapshot(attempt, member: member, timeline: timeline, now: clock.now())
        }
    }

    func list(userID: UUID, status: AttemptStatus?, challengeID: UUID?, page: PageRequest<AttemptCursor>) async throws -> Page<AttemptView> {
        try await storage.read { stores in
            let member = try await stores.requireMember(userID)
            let rows = try await stores.attempts.list(
                of: userID, status: status, challengeID: challengeID, after: page.start(.newestFirst), limit: page.fetchLimit)
            var views: [AttemptView] = []
            for row in rows {
                guard let timeline = try await stores.projections.timeline(row.challengeID) else { continue }
                views.append(AttemptView(try await stores.snapshot(row, member: member, timeline: timeline, now: clock.now())))
            }
            let started = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0.startedAt) })
            return page.page(views) { AttemptCursor(startedAt: started[$0.attemptID] ?? Timestamp.supportedRange.lowerBound, attemptID: $0.attemptID) }
        }
    }

    /// One month of an attempt (the current one in the user's zone by default), day by day.
    func calendar(_ attemptID: UUID, userID: UUID, month: LocalDate?) async throws -> (month: LocalDate, days: [CalendarDay]) {
        if let month, !month.isSupported {
            throw ProgressError.invalidField("month", "must be a month from 1970-01 to 2200-12")
        }
        return try await storage.read { stores in
            guard let attempt = try await stores.attempts.find(attemptID, of: userID) else { throw ProgressError.notFound(.attempt) }
            let member = try await stores.requireMember(userID)
            let timeline = try await stores.projections.timeline(attempt.challengeID)
            let now = clock.now()
            let today = member.calendar.date(at: now)
            let first = (month ?? today).startOfMonth
            let last = first.endOfMonth
            // Through the Sunday of the month's last week: a weekly verdict is kept on the week's last day.
            let records = try await stores.attempts.days(attemptID, from: first, through: last.startOfWeek.adding(days: 6))
            let days = (0...first.days(until: last)).map { offset in
                let date = first.adding(days: offset)
                let record = records[date]
                return CalendarDay(
                    date: date, status: Self.status(of: date, attempt: attempt, timeline: timeline, records: records, calendar: member.calendar, now: now),
                    tasksDone: record?.tasks.values.filter(\.hasActivity).count ?? 0)
            }
            return (first, days)
        }
    }

    /// A calendar day's status. A day reads `open` only while check-ins for it are accepted: every day of a judged
    /// week shows the week's verdict (a day off in it `paused`), and a day whose window has closed without a verdict
    /// of its own shows `closed`.
    static func status(
        of date: LocalDate, attempt: AttemptRow, timeline: DefinitionTimeline?, records: [LocalDate: DayRecord], calendar: LocalCalendar, now: Date
    ) -> String {
        let state = attempt.state
        let closed = "closed"
        if date < attempt.startedOn { return "before" }
        if let end = state.endedOn ?? attempt.endsOn, date > end { return "after" }
        let period = timeline?.latest.rules.streak.period ?? .day
        let off = timeline.map { state.timeOff($0.version(on: date)).isOff(date) } ?? false
        let judged = state.judgedThrough.map { date <= $0 } ?? false
        if period == .week {
            if off { return PeriodOutcome.paused.rawValue }
            guard judged else { return unjudged(date, attempt: attempt, timeline: timeline, calendar: calendar, now: now) }
            let weekEnd = min(date.startOfWeek.adding(days: 6), attempt.endsOn ?? .latest)
            return records[weekEnd]?.outcome?.rawValue ?? closed
        }
        if let outcome = records[date]?.outcome { return outcome.rawValue }
        if off { return PeriodOutcome.paused.rawValue }
        return judged ? closed : unjudged(date, attempt: attempt, timeline: timeline, calendar: calendar, now: now)
    }

    /// A day not judged yet: `future`, `open` while check-ins for it are accepted, else `closed` (its window closed
    /// a moment before the judge's next run, or the attempt ended before it was judged).
    private static func unjudged(_ date: LocalDate, attempt: AttemptRow, timeline: DefinitionTimeline?, calendar: LocalCalendar, now: Date) -> String {
        let today = calendar.date(at: now)
        if date > today { return "future" }
        guard attempt.state.status == .active else { return "closed" }
        guard let timeline else { return "open" }
        // As a check-in is told: the period in progress stays open until it is judged.
        let inProgress = Judge.nextPeriodEnd(attempt.state, startedOn: attempt.startedOn, endOn: attempt.endsOn, period: timeline.latest.rules.streak.period)
        var closes = timeline.windowCloses(date, calendar: calendar)
        if let inProgress, date <= inProgress, let next = attempt.nextJudgementAt { closes = max(closes, next) }
        return now < closes ? "open" : "closed"
    }

    /// Contribution history: tasks with activity per local day over the last `weeks` weeks, across all attempts or one.
    func history(userID: UUID, attemptID: UUID?, weeks: Int) async throws -> (from: LocalDate, to: LocalDate, days: [HistoryDay]) {
        try await storage.read { stores in
            let member = try await stores.requireMember(userID)
            let today = member.calendar.date(at: clock.now())
            let from = today.startOfWeek.adding(days: -7 * (weeks - 1))
            let running: [AttemptRow]
            if let attemptID {
                guard let attempt = try await stores.attempts.find(attemptID, of: userID) else { throw ProgressError.notFound(.attempt) }
                running = [attempt]
            } else {
                running = try await stores.attempts.running(userID, from: from, through: today)
            }
            var timelines: [UUID: DefinitionTimeline] = [:]
            for attempt in running { timelines[attempt.id] = try await stores.projections.timeline(attempt.challengeID) }
            /// A day off for every attempt that ran that day (and at least one ran).
            func paused(_ date: LocalDate) -> Bool {
                let ranThen = running.filter { $0.startedOn <= date && ($0.state.endedOn ?? $0.endsOn).map { date <= $0 } ?? true }
                return !ranThen.isEmpty && ranThen.allSatisfy { attempt in
                    timelines[attempt.id].map { attempt.state.timeOff($0.version(on: date)).isOff(date) } ?? false
                }
            }
            let counts = try await stores.attempts.tasksDone(by: userID, attemptID: attemptID, from: from, through: today)
            let days = (0...from.days(until: today)).map { from.adding(days: $0) }.map {
                HistoryDay(date: $0, tasksDone: counts[$0] ?? 0, paused: paused($0))
            }
            return (from, today, days)
        }
    }

    /// Everything progress keeps about the user, for the data export (photo bytes are linked, not inlined).
    func export(userID: UUID) async throws -> Data {
        try await storage.read { stores in try await stores.userData.export(userID) }
    }
}
