import Foundation
import Logging
import PostgresNIO
import ProgressDomain
import SurgeContracts
import SurgeMessaging
import SurgePostgres

/// An attempt as stored.
struct AttemptRow: Sendable {
    var id: UUID
    var userID: UUID
    var challengeID: UUID
    var attemptNumber: Int
    var kind: ChallengeKind
    var groupID: UUID?
    var startedOn: LocalDate
    var endsOn: LocalDate?
    var state: AttemptState
    var startedAt: Date
    var nextJudgementAt: Date?
}

/// What a check-in reads, in one round trip with the attempt's lock: the member and the challenge's definitions as
/// this service's projections hold them (nil or empty when not known, or deleted), and whether the check-in's id
/// was already recorded (a retry).
struct CheckInContext: Sendable {
    var attempt: AttemptRow
    var member: Member?
    var definitions: [JudgingDefinition]
    var alreadyRecorded: Bool
}

/// A check-in as stored: what removing a logged amount reads back.
struct StoredCheckIn: Sendable {
    var id: UUID
    var attemptID: UUID
    var date: LocalDate
    var taskID: String
    var action: String
    var quantity: Double?
    var rewardedQuantity: Double?
    var points: Int
    var removedBy: UUID?
}

/// The bonuses a week of an attempt can earn once, by the column that records it.
enum WeekBonus: String, Sendable {
    case goal = "goal_bonus_awarded"
    case challenge = "challenge_bonus_awarded"
}

/// Attempts, their day records, weeks and check-ins. What `lock...` returns stays locked until the transaction ends.
struct AttemptStore {
    let connection: PostgresConnection
    let logger: Logger

    private static let columns =
        "attempt_id, user_id, challenge_id, attempt_number, kind, group_id, started_on, ends_on, state::text, started_at, next_judgement_at"

    private func rows(_ query: PostgresQuery) async throws -> [AttemptRow] {
        var result: [AttemptRow] = []
        let rows = try await connection.query(query, logger: logger)
        for try await row in rows {
            result.append(try Self.attempt(row.decode(Columns.self)))
        }
        return result
    }

    private typealias Columns = (UUID, UUID, UUID, Int, String, UUID?, LocalDate, LocalDate?, String, Date, Date?)

    private static func attempt(_ columns: Columns) throws -> AttemptRow {
        let (id, userID, challengeID, number, kind, groupID, startedOn, endsOn, state, startedAt, next) = columns
        return AttemptRow(
            id: id, userID: userID, challengeID: challengeID, attemptNumber: number, kind: ChallengeKind(rawValue: kind) ?? .curated,
            groupID: groupID, startedOn: startedOn, endsOn: endsOn, state: try SurgeJSON.decode(AttemptState.self, from: Data(state.utf8)),
            startedAt: startedAt, nextJudgementAt: next)
    }

    /// The caller's attempt, locked, with what a check-in reads besides, in the same round trip.
    func lockForCheckIn(_ attemptID: UUID, of userID: UUID, checkInID: UUID) async throws -> CheckInContext? {
        for try await row in try await connection.execute(LockForCheckIn(attemptID: attemptID, userID: userID, checkInID: checkInID), logger: logger) {
            let (id, owner, challengeID, number, kind, groupID, startedOn, endsOn, state, startedAt, next, timeZone, dailyGoal, definitions, recorded) = row
            return CheckInContext(
                attempt: try Self.attempt((id, owner, challengeID, number, kind, groupID, startedOn, endsOn, state, startedAt, next)),
                member: timeZone.map { Member(userID: userID, timeZone: $0, dailyGoal: dailyGoal) },
                definitions: try definitions.map { try SurgeJSON.decode([ChallengeDefinition].self, from: Data($0.utf8)).map(JudgingDefinition.init) } ?? [],
                alreadyRecorded: recorded)
        }
        return nil
    }

    /// The caller's attempt, locked.
    func lock(_ attemptID: UUID, of userID: UUID) async throws -> AttemptRow? {
        try await rows("SELECT \(unescaped: Self.columns) FROM attempts WHERE attempt_id = \(attemptID) AND user_id = \(userID) FOR UPDATE").first
    }

    func find(_ attemptID: UUID, of userID: UUID) async throws -> AttemptRow? {
        try await rows("SELECT \(unescaped: Self.columns) FROM attempts WHERE attempt_id = \(attemptID) AND user_id = \(userID)").first
    }

    func active(_ userID: UUID, challengeID: UUID) async throws -> AttemptRow? {
        try await rows(
            "SELECT \(unescaped: Self.columns) FROM attempts WHERE user_id = \(userID) AND challenge_id = \(challengeID) AND status = 'active'"
        ).first
    }

    /// The user's active attempts, locked.
    func lockActive(of userID: UUID) async throws -> [AttemptRow] {
        try await rows("SELECT \(unescaped: Self.columns) FROM attempts WHERE user_id = \(userID) AND status = 'active' FOR UPDATE")
    }

    /// The user's attempts that ran on some day from `first` through `last` (the history's span).
    func running(_ userID: UUID, from first: LocalDate, through last: LocalDate) async throws -> [AttemptRow] {
        try await rows(
            """
            SELECT \(unescaped: Self.columns) FROM attempts
            WHERE user_id = \(userID) AND started_on <= \(last) AND (ends_on IS NULL OR ends_on >= \(first))
              AND (status = 'active' OR (state->>'endedOn')::date >= \(first))
            """)
    }

    /// Active attempts whose next period closed by `now`, most overdue first.
    func dueIDs(before now: Date, limit: Int) async throws -> [UUID] {
        try await connection.query(
            """
            SELECT attempt_id FROM attempts WHERE status = 'active' AND next_judgement_at <= \(now)
            ORDER BY next_judgement_at LIMIT \(limit)
            """, logger: logger
        ).collect().map { try $0.decode(UUID.self) }
    }

    /// The attempt, locked, if it is still due and no other replica is judging it.
    func lockDue(_ attemptID: UUID, before now: Date) async throws -> AttemptRow? {
        try await rows(
            """
            SELECT \(unescaped: Self.columns) FROM attempts
            WHERE attempt_id = \(attemptID) AND status = 'active' AND next_judgement_at <= \(now)
            FOR UPDATE SKIP LOCKED
            """
        ).first
    }

    /// Moves a failing attempt's judgement later, so it neither blocks the others nor is lost.
    func postpone(_ attemptID: UUID, by seconds: Int) async throws {
        try await connection.query(
            """
            UPDATE attempts SET next_judgement_at = next_judgement_at + make_interval(secs => \(Double(seconds)))
            WHERE attempt_id = \(attemptID) AND status = 'active'
            """, logger: logger)
    }

    /// The user's attempts after `after`, newest first.
    func list(of userID: UUID, status: AttemptStatus?, challengeID: UUID?, after: AttemptCursor, limit: Int) async throws -> [AttemptRow] {
        let statusFilter = status?.rawValue
        return try await rows(
            """
            SELECT \(unescaped: Self.columns) FROM attempts
            WHERE user_id = \(userID) AND (\(statusFilter)::text IS NULL OR status = \(statusFilter))
              AND (\(challengeID)::uuid IS NULL OR challenge_id = \(challengeID))
              AND (started_at, attempt_id) < (\(after.startedAt), \(after.attemptID))
            ORDER BY started_at DESC, attempt_id DESC LIMIT \(limit)
            """)
    }

    func previousAttempts(_ userID: UUID, challengeID: UUID) async throws -> Int {
        try await connection.query(
            "SELECT count(*) FROM attempts WHERE user_id = \(userID) AND challenge_id = \(challengeID)", logger: logger
        ).collect().first?.decode(Int.self) ?? 0
    }

    func insert(_ row: AttemptRow, now: Date) async throws {
        try await connection.query(
            """
            INSERT INTO attempts (attempt_id, user_id, challenge_id, attempt_number, kind, group_id, started_on, ends_on, status, state,
                                  next_judgement_at, started_at, updated_at)
            VALUES (\(row.id), \(row.userID), \(row.challengeID), \(row.attemptNumber), \(row.kind.rawValue), \(row.groupID),
                    \(row.startedOn), \(row.endsOn), \(row.state.status.rawValue), \(try json(row.state))::jsonb, \(row.nextJudgementAt),
                    \(row.startedAt), \(now))
            """, logger: logger)
    }

    func update(_ row: AttemptRow, now: Date) async throws {
        try await connection.execute(try UpdateAttempt(row, now: now), logger: logger)
    }

    /// The update and the unit of work's events in one round trip.
    func update(_ row: AttemptRow, now: Date, writing events: OutboxInsert) async throws {
        try await connection.execute(UpdateAttemptWritingEvents(attempt: try UpdateAttempt(row, now: now), events: events), logger: logger)
    }

    func setNextJudgement(_ instant: Date, of attemptID: UUID) async throws {
        try await connection.query("UPDATE attempts SET next_judgement_at = \(instant) WHERE attempt_id = \(attemptID)", logger: logger)
    }

    func day(_ attemptID: UUID, _ date: LocalDate) async throws -> DayRecord? {
        try await connection.query(
            "SELECT record::text FROM attempt_days WHERE attempt_id = \(attemptID) AND local_date = \(date)", logger: logger
        ).collect().first.map { try SurgeJSON.decode(DayRecord.self, from: Data(try $0.decode(String.self).utf8)) }
    }

    /// Day records from `first` through `last`, keyed by date.
    func days(_ attemptID: UUID, from first: LocalDate, through last: LocalDate) async throws -> [LocalDate: DayRecord] {
        var records: [LocalDate: DayRecord] = [:]
        for try await text in try await connection.execute(DayRecords(attemptID: attemptID, first: first, last: last), logger: logger) {
            let record = try SurgeJSON.decode(DayRecord.self, from: Data(text.utf8))
            records[record.date] = record
        }
        return records
    }

    private static func tasksDone(_ record: DayRecord) -> Int { record.tasks.values.filter(\.hasActivity).count }

    func saveDay(_ attemptID: UUID, _ record: DayRecord) async throws {
        let tasksDone = Self.tasksDone(record)
        try await connection.query(
            """
            INSERT INTO attempt_days (attempt_id, local_date, record, outcome, tasks_done)
            VALUES (\(attemptID), \(record.date), \(try json(record))::jsonb, \(record.outcome?.rawValue), \(tasksDone))
            ON CONFLICT (attempt_id, local_date) DO UPDATE
            SET record = EXCLUDED.record, outcome = EXCLUDED.outcome, tasks_done = EXCLUDED.tasks_done
            """, logger: logger)
    }

    /// Tasks with activity per local day from `first` through `last`, summed over the user's attempts (or one).
    func tasksDone(by userID: UUID, attemptID: UUID?, from first: LocalDate, through last: LocalDate) async throws -> [LocalDate: Int] {
        var counts: [LocalDate: Int] = [:]
        let rows = try await connection.query(
            """
            SELECT d.local_date, sum(d.tasks_done)::int FROM attempt_days d JOIN attempts a ON a.attempt_id = d.attempt_id
            WHERE a.user_id = \(userID) AND (\(attemptID)::uuid IS NULL OR a.attempt_id = \(attemptID))
              AND d.local_date BETWEEN \(first) AND \(last)
            GROUP BY d.local_date
            """, logger: logger)
        for try await (date, count) in rows.decode((LocalDate, Int).self) { counts[date] = count }
        return counts
    }

    /// The bonuses a week has earned so far.
    func weekBonuses(_ attemptID: UUID, weekStart: LocalDate) async throws -> Set<WeekBonus> {
        var awarded: Set<WeekBonus> = []
        let rows = try await connection.query(
            "SELECT goal_bonus_awarded, challenge_bonus_awarded FROM attempt_weeks WHERE attempt_id = \(attemptID) AND week_start = \(weekStart)",
            logger: logger)
        for try await (goal, challenge) in rows.decode((Bool, Bool).self) {
            if goal { awarded.insert(.goal) }
            if challenge { awarded.insert(.challenge) }
        }
        return awarded
    }

    func setWeekBonus(_ bonus: WeekBonus, awarded: Bool, attemptID: UUID, weekStart: LocalDate) async throws {
        try await connection.query(
            """
            INSERT INTO attempt_weeks (attempt_id, week_start, \(unescaped: bonus.rawValue)) VALUES (\(attemptID), \(weekStart), \(awarded))
            ON CONFLICT (attempt_id, week_start) DO UPDATE SET \(unescaped: bonus.rawValue) = EXCLUDED.\(unescaped: bonus.rawValue)
            """, logger: logger)
    }

    func checkIn(_ id: UUID, of userID: UUID) async throws -> StoredCheckIn? {
        let rows = try await connection.query(
            """
            SELECT checkin_id, attempt_id, local_date, task_id, action, quantity, rewarded_quantity, points, removed_by
            FROM checkins WHERE checkin_id = \(id) AND user_id = \(userID)
            """, logger: logger)
        for try await (id, attemptID, date, taskID, action, quantity, rewarded, points, removedBy) in rows.decode(
            (UUID, UUID, LocalDate, String, String, Double?, Double?, Int, UUID?).self)
        {
            return StoredCheckIn(
                id: id, attemptID: attemptID, date: date, taskID: taskID, action: action, quantity: quantity, rewardedQuantity: rewarded,
                points: points, removedBy: removedBy)
        }
        return nil
    }

    /// A check-in's row, with in the same statement (one round trip) the logged amount it takes back, the day record
    /// it changed, when it changed one, and the points it earned (`entry`, written as `entryID`). Returns the member's
    /// total after the entry, if there was one.
    func recordCheckIn(
        id: UUID, userID: UUID, attemptID: UUID, date: LocalDate, taskID: String, action: String, done: Bool?, quantity: Double?,
        rewardedQuantity: Double?, points: Int, photoID: UUID?, happenedAt: Date, recordedAt: Date, removing removedLog: UUID?,
        day record: DayRecord?, entry: LedgerEntry?, entryID: UUID
    ) async throws -> Int? {
        let statement = RecordCheckIn(
            id: id, userID: userID, attemptID: attemptID, date: date, taskID: taskID, action: action, done: done, quantity: quantity,
            rewardedQuantity: rewardedQuantity, points: points, photoID: photoID, happenedAt: happenedAt, recordedAt: recordedAt,
            removedLog: removedLog, record: try record.map { try json($0) }, outcome: record?.outcome?.rawValue,
            tasksDone: record.map(Self.tasksDone), entry: entry, entryID: entryID)
        for try await total in try await connection.execute(statement, logger: logger) { return total }
        return nil
    }

    private func json(_ value: some Encodable) throws -> String {
        String(decoding: try SurgeJSON.encode(value), as: UTF8.self)
    }
}

/// Where a page of attempts ended.
struct AttemptCursor: Codable, Sendable {
    var startedAt: Date
    var attemptID: UUID
}

extension AttemptCursor: KeysetPosition {
    init(instant: Date, id: UUID) { self.init(startedAt: instant, attemptID: id) }
}

// MARK: The check-in's statements, prepared once per connection: PostgreSQL plans them once rather than on every check-in.
// A parameter that may be null is cast to the type it is bound as, since the first binding fixes the statement's types.

extension AttemptStore {
    struct LockForCheckIn: PostgresPreparedStatement {
        static let sql = """
            SELECT \(AttemptStore.columns),
                (SELECT time_zone FROM members WHERE user_id = $2),
                (SELECT daily_goal FROM members WHERE user_id = $2),
                (SELECT json_agg(d.definition)::text FROM definitions d
                 WHERE d.challenge_id = attempts.challenge_id
                   AND NOT EXISTS (SELECT 1 FROM deleted_definitions x WHERE x.challenge_id = attempts.challenge_id)),
                EXISTS (SELECT 1 FROM checkins WHERE checkin_id = $3 AND user_id = $2)
            FROM attempts WHERE attempt_id = $1 AND user_id = $2 FOR UPDATE
            """
        typealias Row = (UUID, UUID, UUID, Int, String, UUID?, LocalDate, LocalDate?, String, Date, Date?, String?, Int?, String?, Bool)

        var attemptID: UUID
        var userID: UUID
        var checkInID: UUID

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(attemptID)
            bindings.append(userID)
            bindings.append(checkInID)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct DayRecords: PostgresPreparedStatement {
        static let sql = "SELECT record::text FROM attempt_days WHERE attempt_id = $1 AND local_date BETWEEN $2 AND $3"
        typealias Row = String

        var attemptID: UUID
        var first: LocalDate
        var last: LocalDate

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(attemptID)
            bindings.append(first)
            bindings.append(last)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(String.self) }
    }

    /// The check-in's row, the logged amount it takes back ($14) and the day record it changed ($15-$17), when it did.
    struct RecordCheckIn: PostgresPreparedStatement {
        static let sql = """
            WITH removed AS (
                UPDATE checkins SET removed_by = $1 WHERE $14::uuid IS NOT NULL AND user_id = $2 AND checkin_id = $14::uuid
            ), day AS (
                INSERT INTO attempt_days (attempt_id, local_date, record, outcome, tasks_done)
                SELECT $3, $4, $15::text::jsonb, $16::text, $17::int8 WHERE $17::int8 IS NOT NULL
                ON CONFLICT (attempt_id, local_date) DO UPDATE
                SET record = EXCLUDED.record, outcome = EXCLUDED.outcome, tasks_done = EXCLUDED.tasks_done
            ), checkin AS (
                INSERT INTO checkins (checkin_id, user_id, attempt_id, local_date, task_id, action, done, quantity, rewarded_quantity, points,
                                      photo_id, happened_at, recorded_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7::bool, $8::float8, $9::float8, $10, $11::uuid, $12, $13)
            ), \(LedgerStore.entrySQL(from: 18))
            """
        typealias Row = Int

        var id: UUID
        var userID: UUID
        var attemptID: UUID
        var date: LocalDate
        var taskID: String
        var action: String
        var done: Bool?
        var quantity: Double?
        var rewardedQuantity: Double?
        var points: Int
        var photoID: UUID?
        var happenedAt: Date
        var recordedAt: Date
        var removedLog: UUID?
        var record: String?
        var outcome: String?
        var tasksDone: Int?
        var entry: LedgerEntry?
        var entryID: UUID

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 17 + LedgerStore.entryParameters)
            bindings.append(id)
            bindings.append(userID)
            bindings.append(attemptID)
            bindings.append(date)
            bindings.append(taskID)
            bindings.append(action)
            bindings.append(done)
            bindings.append(quantity)
            bindings.append(rewardedQuantity)
            bindings.append(points)
            bindings.append(photoID)
            bindings.append(happenedAt)
            bindings.append(recordedAt)
            bindings.append(removedLog)
            bindings.append(record)
            bindings.append(outcome)
            bindings.append(tasksDone)
            LedgerStore.appendEntry(entry, id: entryID, at: recordedAt, to: &bindings)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
    }

    struct UpdateAttempt: PostgresPreparedStatement {
        static let sql = """
            UPDATE attempts SET status = $1, state = $2::text::jsonb, next_judgement_at = $3::timestamptz,
                ended_at = COALESCE(ended_at, $4::timestamptz), updated_at = $5
            WHERE attempt_id = $6
            """
        static let parameters = 6
        typealias Row = ()

        var status: String
        var state: String
        var nextJudgementAt: Date?
        var endedAt: Date?
        var now: Date
        var attemptID: UUID

        init(_ row: AttemptRow, now: Date) throws {
            status = row.state.status.rawValue
            state = String(decoding: try SurgeJSON.encode(row.state), as: UTF8.self)
            nextJudgementAt = row.state.status == .active ? row.nextJudgementAt : nil
            endedAt = row.state.status == .active ? nil : now
            self.now = now
            attemptID = row.id
        }

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: Self.parameters)
            appendBindings(to: &bindings)
            return bindings
        }

        func appendBindings(to bindings: inout PostgresBindings) {
            bindings.append(status)
            bindings.append(state)
            bindings.append(nextJudgementAt)
            bindings.append(endedAt)
            bindings.append(now)
            bindings.append(attemptID)
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }

    struct UpdateAttemptWritingEvents: PostgresPreparedStatement {
        static let sql = "WITH attempt AS (\(UpdateAttempt.sql)), \(OutboxInsert.sql(from: UpdateAttempt.parameters + 1))"
        typealias Row = ()

        var attempt: UpdateAttempt
        var events: OutboxInsert

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: UpdateAttempt.parameters + OutboxInsert.parameters)
            attempt.appendBindings(to: &bindings)
            events.appendBindings(to: &bindings)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }
}
