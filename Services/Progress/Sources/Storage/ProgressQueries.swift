import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgePostgres
import SurgeRuntime

struct CalendarDay: Codable, Sendable {
    /// before, completed, missed, frozen, kept, rest, paused, open, future, after. Days off not judged yet (today, or
    /// planned ones) are paused too.
    var date: LocalDate
    var status: String
    var tasksDone: Int
}

struct HistoryDay: Codable, Sendable {
    var date: LocalDate
    /// Tasks with any activity that day (contribution-history intensity).
    var tasksDone: Int
    /// Time off: the attempt's day off, or (across everything) a day every attempt running then took off.
    var paused: Bool
}

struct PointsSummary: Codable, Sendable, ResponseEncodable {
    var total: Int
    /// Points from curated challenges: they alone set the level (and the anti-cheat cap of series challenges);
    /// points a user's own challenges award count everywhere else.
    var levelPoints: Int
    var thisWeek: Int
    var thisMonth: Int
    var weekStart: LocalDate
    var monthStart: LocalDate
}

struct LedgerEntryView: Codable, Sendable {
    var entryID: UUID
    var points: Int
    var reason: PointsReason
    var localDate: LocalDate
    var challengeID: UUID?
    var attemptID: UUID?
    var groupID: UUID?
    var excessQuantity: Double?
    var awardedAt: Date
    /// The check-in behind the row (its `checkInID`, the log id a logged amount is removed by); absent for bonuses
    /// and chores.
    var checkIn: LedgerCheckIn?
}

/// What a ledger row's check-in did: which task, and for a logged amount how much of it earned points.
struct LedgerCheckIn: Codable, Sendable {
    var checkInID: UUID
    var taskID: String
    var action: String
    var quantity: Double?
    /// The part of `quantity` under the day's cap, which earned the points.
    var rewardedQuantity: Double?
}

struct LedgerCursor: Codable, Sendable {
    var awardedAt: Date
    var entryID: UUID
}

extension ProgressRepository {
    var photos: PhotoStore { PhotoStore(logger: logger) }

    /// Stores a photo and ticks the photo task with it, in one transaction.
    func attachPhoto(
        _ data: Data, contentType: String, taskID: String, attemptID: UUID, userID: UUID, happenedAt: Date?, date: LocalDate?, trace: TraceContext
    ) async throws -> (AttemptSnapshot, UUID) {
        let unsupported = CheckInWindow.unsupportedFields(happenedAt: happenedAt, date: date)
        guard unsupported.isEmpty else { throw Problem.validation(unsupported) }
        return try await client.transaction(logger: logger) { connection in
            guard var attempt = try await attempts.lock(attemptID, of: userID, on: connection) else { throw Problem.notFound("No such attempt.") }
            let now = clock.now()
            guard attempt.state.status == .active else {
                throw Problem.conflict("attempt-not-active", "This attempt is \(attempt.state.status.rawValue); restart it to check in again.")
            }
            let member = try await requireMember(userID, on: connection)
            guard let timeline = try await projections.timeline(attempt.challengeID, on: connection) else { throw Problem.notFound("The challenge no longer exists.") }
            let photoID = UUID()
            let day = date ?? member.calendar.date(at: happenedAt ?? now)
            guard timeline.version(on: day).tasks.first(where: { $0.taskID == taskID })?.kind == .photo else {
                throw Problem.validation(field: "taskID", "is not a photo task of this challenge")
            }
            try await photos.insert(
                id: photoID, userID: userID, attemptID: attempt.id, challengeID: attempt.challengeID, date: day, taskID: taskID,
                contentType: contentType, data: data, now: now, on: connection)
            var days: LoadedDays?
            try await checkInWithinTransaction(
                CheckInCommand(checkInID: UUID(), taskID: taskID, kind: .photo(photoID), happenedAt: happenedAt, date: day),
                attempt: &attempt, member: member, timeline: timeline, now: now, trace: trace, days: &days, on: connection)
            return (try await snapshot(attempt, member: member, timeline: timeline, now: now, on: connection), photoID)
        }
    }

    func photo(_ photoID: UUID, viewer: UUID) async throws -> (contentType: String, data: Data) {
        try await client.withConnection { connection in
            guard let photo = try await photos.content(photoID, viewer: viewer, on: connection) else { throw Problem.notFound("No such photo.") }
            return photo
        }
    }

    func photoPage(attemptID: UUID? = nil, challengeID: UUID? = nil, viewer: UUID, page: PageRequest<PhotoCursor>) async throws -> Page<PhotoView> {
        try await client.withConnection { connection in
            if let attemptID, try await attempts.find(attemptID, of: viewer, on: connection) == nil {
                throw Problem.notFound("No such attempt.")
            }
            if let challengeID {
                // As the challenge itself: unknown, or invisible to a viewer who never took part, is a 404.
                guard let timeline = try await projections.timeline(challengeID, on: connection) else { throw Problem.notFound("No such challenge.") }
                let tookPart = try await attempts.previousAttempts(viewer, challengeID: challengeID, on: connection) > 0
                let mayJoin = try await mayJoin(timeline.latest, userID: viewer, on: connection)
                guard tookPart || mayJoin else { throw Problem.notFound("No such challenge.") }
            }
            return try await photos.page(attemptID: attemptID, challengeID: challengeID, viewer: viewer, page: page, on: connection)
        }
    }

    func list(userID: UUID, status: AttemptStatus?, challengeID: UUID?, page: PageRequest<AttemptCursor>) async throws -> Page<AttemptView> {
        try await client.withConnection { connection in
            let member = try await requireMember(userID, on: connection)
            let rows = try await attempts.list(
                of: userID, status: status, challengeID: challengeID, after: page.after, limit: page.limit + 1, on: connection)
            var views: [AttemptView] = []
            for row in rows {
                guard let timeline = try await projections.timeline(row.challengeID, on: connection) else { continue }
                views.append(AttemptView(try await snapshot(row, member: member, timeline: timeline, now: clock.now(), on: connection)))
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
        return try await client.withConnection { connection in
            guard let attempt = try await attempts.find(attemptID, of: userID, on: connection) else { throw Problem.notFound("No such attempt.") }
            let member = try await requireMember(userID, on: connection)
            let timeline = try await projections.timeline(attempt.challengeID, on: connection)
            let today = member.calendar.date(at: clock.now())
            let first = (month ?? today).startOfMonth
            let last = first.endOfMonth
            let records = try await attempts.days(attemptID, from: first, through: last, on: connection)
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
        try await client.withConnection { connection in
            let member = try await requireMember(userID, on: connection)
            let today = member.calendar.date(at: clock.now())
            let from = today.startOfWeek.adding(days: -7 * (weeks - 1))
            let running: [AttemptRow]
            if let attemptID {
                guard let attempt = try await attempts.find(attemptID, of: userID, on: connection) else { throw Problem.notFound("No such attempt.") }
                running = [attempt]
            } else {
                running = try await attempts.running(userID, from: from, through: today, on: connection)
            }
            var timelines: [UUID: DefinitionTimeline] = [:]
            for attempt in running { timelines[attempt.id] = try await projections.timeline(attempt.challengeID, on: connection) }
            /// A day off for every attempt that ran that day (and at least one ran).
            func paused(_ date: LocalDate) -> Bool {
                let ranThen = running.filter { $0.startedOn <= date && ($0.state.endedOn ?? $0.endsOn).map { date <= $0 } ?? true }
                return !ranThen.isEmpty && ranThen.allSatisfy { attempt in
                    timelines[attempt.id].map { attempt.state.timeOff($0.version(on: date)).isOff(date) } ?? false
                }
            }
            var counts: [LocalDate: Int] = [:]
            let rows = try await connection.query(
                """
                SELECT d.local_date, sum(d.tasks_done)::int FROM attempt_days d JOIN attempts a ON a.attempt_id = d.attempt_id
                WHERE a.user_id = \(userID) AND (\(attemptID)::uuid IS NULL OR a.attempt_id = \(attemptID))
                  AND d.local_date BETWEEN \(from) AND \(today)
                GROUP BY d.local_date
                """, logger: logger)
            for try await (date, count) in rows.decode((LocalDate, Int).self) { counts[date] = count }
            let days = (0...from.days(until: today)).map { from.adding(days: $0) }.map {
                HistoryDay(date: $0, tasksDone: counts[$0] ?? 0, paused: paused($0))
            }
            return (from, today, days)
        }
    }

    func points(userID: UUID) async throws -> PointsSummary {
        try await client.withConnection { connection in
            let member = try await requireMember(userID, on: connection)
            let today = member.calendar.date(at: clock.now())
            let rows = try await connection.query(
                """
                SELECT COALESCE(sum(points) FILTER (WHERE local_date >= \(today.startOfWeek)), 0)::int,
                       COALESCE(sum(points) FILTER (WHERE local_date >= \(today.startOfMonth)), 0)::int
                FROM points_ledger WHERE user_id = \(userID) AND local_date >= \(min(today.startOfWeek, today.startOfMonth))
                """, logger: logger)
            var week = 0
            var month = 0
            for try await (w, m) in rows.decode((Int, Int).self) {
                week = w
                month = m
            }
            let totals = try await connection.query(
                "SELECT total, level_points FROM member_points WHERE user_id = \(userID)", logger: logger
            ).collect().first?.decode((Int, Int).self) ?? (0, 0)
            return PointsSummary(
                total: totals.0, levelPoints: totals.1, thisWeek: week, thisMonth: month, weekStart: today.startOfWeek,
                monthStart: today.startOfMonth)
        }
    }

    func ledgerPage(userID: UUID, page: PageRequest<LedgerCursor>) async throws -> Page<LedgerEntryView> {
        try await client.withConnection { connection in
            let after = page.after ?? LedgerCursor(awardedAt: .distantFuture, entryID: UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!)
            let rows = try await connection.query(
                """
                SELECT l.entry_id, l.points, l.reason, l.local_date, l.challenge_id, l.attempt_id, l.group_id, l.excess_quantity, l.awarded_at,
                       c.checkin_id, c.task_id, c.action, c.quantity, c.rewarded_quantity
                FROM points_ledger l LEFT JOIN checkins c ON c.user_id = l.user_id AND c.checkin_id = l.checkin_id
                WHERE l.user_id = \(userID) AND (l.awarded_at, l.entry_id) < (\(after.awardedAt), \(after.entryID))
                ORDER BY l.awarded_at DESC, l.entry_id DESC LIMIT \(page.limit + 1)
                """, logger: logger)
            var entries: [LedgerEntryView] = []
            for try await (id, points, reason, date, challengeID, attemptID, groupID, excess, awardedAt, checkInID, taskID, action, quantity, rewarded)
                in rows.decode((UUID, Int, String, LocalDate, UUID?, UUID?, UUID?, Double?, Date, UUID?, String?, String?, Double?, Double?).self)
            {
                entries.append(LedgerEntryView(
                    entryID: id, points: points, reason: PointsReason(rawValue: reason) ?? .task, localDate: date, challengeID: challengeID,
                    attemptID: attemptID, groupID: groupID, excessQuantity: excess, awardedAt: awardedAt,
                    checkIn: checkInID.map {
                        LedgerCheckIn(checkInID: $0, taskID: taskID ?? "", action: action ?? "", quantity: quantity, rewardedQuantity: rewarded)
                    }))
            }
            return page.page(entries) { LedgerCursor(awardedAt: $0.awardedAt, entryID: $0.entryID) }
        }
    }

    /// Everything progress keeps about the user, for the data export (photo bytes are linked, not inlined).
    func export(userID: UUID) async throws -> Data {
        try await client.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT json_build_object(
                  'member', (SELECT row_to_json(m) FROM members m WHERE m.user_id = \(userID)),
                  'attempts', COALESCE((SELECT json_agg(json_build_object(
                        'attempt', row_to_json(a),
                        'days', (SELECT COALESCE(json_agg(row_to_json(d) ORDER BY d.local_date), '[]') FROM attempt_days d WHERE d.attempt_id = a.attempt_id),
                        'checkIns', (SELECT COALESCE(json_agg(row_to_json(c) ORDER BY c.recorded_at), '[]') FROM checkins c WHERE c.attempt_id = a.attempt_id))
                      ORDER BY a.started_at) FROM attempts a WHERE a.user_id = \(userID)), '[]'),
                  'pointsLedger', COALESCE((SELECT json_agg(row_to_json(l) ORDER BY l.awarded_at) FROM points_ledger l WHERE l.user_id = \(userID)), '[]'),
                  'photos', COALESCE((SELECT json_agg(json_build_object('photoID', p.photo_id, 'attemptID', p.attempt_id, 'localDate', p.local_date,
                        'contentType', p.content_type, 'size', p.size, 'url', '/v1/photos/' || p.photo_id) ORDER BY p.created_at)
                      FROM photos p WHERE p.user_id = \(userID)), '[]'),
                  'choresCompleted', COALESCE((SELECT json_agg(json_build_object('occurrenceID', o.occurrence_id, 'title', o.title,
                        'points', o.points, 'completedAt', o.completed_at) ORDER BY o.completed_at)
                      FROM chore_occurrences o WHERE o.completed_by = \(userID)), '[]')
                )::text
                """, logger: logger)
            for try await text in rows.decode(String.self) { return Data(text.utf8) }
            return Data("{}".utf8)
        }
    }
}
