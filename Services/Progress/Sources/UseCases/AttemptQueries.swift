import Foundation
import ProgressDomain
import SurgeContracts
import SurgeRuntime

/// What the caller reads about their attempts: one attempt, the list, a month's calendar, the contribution history,
/// and the data export.
struct AttemptQueries: Sendable {
    let storage: any ProgressStorage
    let clock: ServiceClock

    func snapshot(_ attemptID: UUID, userID: UUID) async throws -> AttemptSnapshot {
        try await storage.read { stores in
            guard let attempt = try await stores.attempts.find(attemptID, of: userID) else { throw ProgressProblems.noSuchAttempt }
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
            throw Problem.validation(field: "month", "must be a month from 1970-01 to 2200-12")
        }
        return try await storage.read { stores in
            guard let attempt = try await stores.attempts.find(attemptID, of: userID) else { throw ProgressProblems.noSuchAttempt }
            let member = try await stores.requireMember(userID)
            let timeline = try await stores.projections.timeline(attempt.challengeID)
            let today = member.calendar.date(at: clock.now())
            let first = (month ?? today).startOfMonth
            let last = first.endOfMonth
            let records = try await stores.attempts.days(attemptID, from: first, through: last)
            let days = (0...first.days(until: last)).map { offset in
                let date = first.adding(days: offset)
                let record = records[date]
                let status: String
                if date < attempt.startedOn {
                    status = "before"
                } else if let end = attempt.state.endedOn ?? attempt.endsOn, date > end {
                    status = "after"
                } else if let outcome = record?.outcome {
                    status = outcome.rawValue
                } else if let timeline, attempt.state.timeOff(timeline.version(on: date)).isOff(date) {
                    status = PeriodOutcome.paused.rawValue
                } else if date > today {
                    status = "future"
                } else {
                    status = "open"
                }
                return CalendarDay(date: date, status: status, tasksDone: record?.tasks.values.filter(\.hasActivity).count ?? 0)
            }
            return (first, days)
        }
    }

    /// Contribution history: tasks with activity per local day over the last `weeks` weeks, across all attempts or one.
    func history(userID: UUID, attemptID: UUID?, weeks: Int) async throws -> (from: LocalDate, to: LocalDate, days: [HistoryDay]) {
        try await storage.read { stores in
            let member = try await stores.requireMember(userID)
            let today = member.calendar.date(at: clock.now())
            let from = today.startOfWeek.adding(days: -7 * (weeks - 1))
            let running: [AttemptRow]
            if let attemptID {
                guard let attempt = try await stores.attempts.find(attemptID, of: userID) else { throw ProgressProblems.noSuchAttempt }
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
