import Foundation
import Logging
import PostgresNIO
import SurgeContracts

/// A row to append to the points ledger.
struct LedgerEntry: Sendable {
    var userID: UUID
    var groupID: UUID?
    var challengeID: UUID?
    var attemptID: UUID?
    var points: Int
    var reason: PointsReason
    var localDate: LocalDate
    var excessQuantity: Double?
    /// Points from a curated challenge, whose values Surge chose. Only these raise a member's level (and with it
    /// the anti-cheat cap): points a user's own challenge awards cannot buy a higher cap.
    var countsTowardLevel: Bool
    /// The check-in that earned (or took back) the points; nil for bonuses and chores.
    var checkInID: UUID? = nil
}

/// A ledger row as the ledger lists it, with what its check-in did (none for bonuses and chores).
struct LedgerRow: Sendable {
    struct CheckIn: Sendable {
        var checkInID: UUID
        var taskID: String
        var action: String
        var quantity: Double?
        var rewardedQuantity: Double?
    }

    var entryID: UUID
    var points: Int
    var reason: PointsReason
    var localDate: LocalDate
    var challengeID: UUID?
    var attemptID: UUID?
    var groupID: UUID?
    var excessQuantity: Double?
    var awardedAt: Date
    var checkIn: CheckIn?
}

struct LedgerCursor: Codable, Sendable {
    var awardedAt: Date
    var entryID: UUID
}

extension LedgerCursor: KeysetPosition {
    init(instant: Date, id: UUID) { self.init(awardedAt: instant, entryID: id) }
}

/// The points ledger: append-only rows with a reason, and a running total per member.
struct LedgerStore {
    let connection: PostgresConnection
    let logger: Logger

    /// The points that set the member's level: those of curated challenges.
    func levelPoints(_ userID: UUID) async throws -> Int {
        try await connection.query("SELECT level_points FROM member_points WHERE user_id = \(userID)", logger: logger)
            .collect().first?.decode(Int.self) ?? 0
    }

    /// Appends the entry and updates the member's total in one statement; returns the event to emit with it.
    func write(_ entry: LedgerEntry, at now: Date) async throws -> PointsAwarded {
        let entryID = UUID()
        var total = entry.points
        for try await value in try await connection.execute(WriteEntry(entryID: entryID, entry: entry, now: now), logger: logger) { total = value }
        return Self.awarded(entry, entryID: entryID, total: total, at: now)
    }

    /// The event an entry written as `entryID` emits, with the member's total after it.
    static func awarded(_ entry: LedgerEntry, entryID: UUID, total: Int, at now: Date) -> PointsAwarded {
        PointsAwarded(
            entryID: entryID, userID: entry.userID, groupID: entry.groupID, challengeID: entry.challengeID, attemptID: entry.attemptID,
            points: entry.points, reason: entry.reason, localDate: entry.localDate, excessQuantity: entry.excessQuantity,
            totalPoints: total, awardedAt: now)
    }

    /// The member's points on days from `weekStart` and from `monthStart` on.
    func sums(_ userID: UUID, weekStart: LocalDate, monthStart: LocalDate) async throws -> (week: Int, month: Int) {
        let rows = try await connection.query(
            """
            SELECT COALESCE(sum(points) FILTER (WHERE local_date >= \(weekStart)), 0)::int,
                   COALESCE(sum(points) FILTER (WHERE local_date >= \(monthStart)), 0)::int
            FROM points_ledger WHERE user_id = \(userID) AND local_date >= \(min(weekStart, monthStart))
            """, logger: logger)
        var week = 0
        var month = 0
        for try await (w, m) in rows.decode((Int, Int).self) {
            week = w
            month = m
        }
        return (week, month)
    }

    /// The member's running totals: all points, and those that set the level.
    func totals(_ userID: UUID) async throws -> (total: Int, levelPoints: Int) {
        try await connection.query(
            "SELECT total, level_points FROM member_points WHERE user_id = \(userID)", logger: logger
        ).collect().first?.decode((Int, Int).self) ?? (0, 0)
    }

    /// The member's rows after `after`, newest first.
    func rows(of userID: UUID, after: LedgerCursor, limit: Int) async throws -> [LedgerRow] {
        let rows = try await connection.query(
            """
            SELECT l.entry_id, l.points, l.reason, l.local_date, l.challenge_id, l.attempt_id, l.group_id, l.excess_quantity, l.awarded_at,
                   c.checkin_id, c.task_id, c.action, c.quantity, c.rewarded_quantity
            FROM points_ledger l LEFT JOIN checkins c ON c.user_id = l.user_id AND c.checkin_id = l.checkin_id
            WHERE l.user_id = \(userID) AND (l.awarded_at, l.entry_id) < (\(after.awardedAt), \(after.entryID))
            ORDER BY l.awarded_at DESC, l.entry_id DESC LIMIT \(limit)
            """, logger: logger)
        var entries: [LedgerRow] = []
        for try await (id, points, reason, date, challengeID, attemptID, groupID, excess, awardedAt, checkInID, taskID, action, quantity, rewarded)
            in rows.decode((UUID, Int, String, LocalDate, UUID?, UUID?, UUID?, Double?, Date, UUID?, String?, String?, Double?, Double?).self)
        {
            entries.append(LedgerRow(
                entryID: id, points: points, reason: PointsReason(rawValue: reason) ?? .task, localDate: date, challengeID: challengeID,
                attemptID: attemptID, groupID: groupID, excessQuantity: excess, awardedAt: awardedAt,
                checkIn: checkInID.map {
                    LedgerRow.CheckIn(checkInID: $0, taskID: taskID ?? "", action: action ?? "", quantity: quantity, rewardedQuantity: rewarded)
                }))
        }
        return entries
    }

    /// Prepared once per connection: PostgreSQL plans it once, not on every check-in. Nullable parameters are cast to
    /// the type they are bound as, since the first binding fixes the statement's types.
    struct WriteEntry: PostgresPreparedStatement {
        static let sql = "WITH \(LedgerStore.entrySQL(from: 1))"
        typealias Row = Int

        var entryID: UUID
        var entry: LedgerEntry
        var now: Date

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: LedgerStore.entryParameters)
            LedgerStore.appendEntry(entry, id: entryID, at: now, to: &bindings)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
    }

    static let entryParameters = 13

    /// The last part of a `WITH` statement: the entry's insert as a CTE, and the member's total, which the statement
    /// returns, binding the entry's values from `first` on (`appendEntry`). A null entry id writes nothing.
    static func entrySQL(from first: Int) -> String {
        func p(_ number: Int) -> String { "$\(first + number - 1)" }
        return """
            entry AS (
                INSERT INTO points_ledger (
                    entry_id, user_id, group_id, challenge_id, attempt_id, points, reason, local_date, excess_quantity, awarded_at,
                    counts_toward_level, checkin_id)
                SELECT \(p(1))::uuid, \(p(2))::uuid, \(p(3))::uuid, \(p(4))::uuid, \(p(5))::uuid, \(p(6))::int8, \(p(7))::text, \(p(8))::date,
                       \(p(9))::float8, \(p(10))::timestamptz, \(p(11))::bool, \(p(12))::uuid
                WHERE \(p(1))::uuid IS NOT NULL
            )
            INSERT INTO member_points (user_id, total, level_points) SELECT \(p(2))::uuid, \(p(6))::int8, \(p(13))::int8 WHERE \(p(1))::uuid IS NOT NULL
            ON CONFLICT (user_id) DO UPDATE
            SET total = member_points.total + EXCLUDED.total, level_points = member_points.level_points + EXCLUDED.level_points
            RETURNING total
            """
    }

    /// The entry's values for `entrySQL`, or as many nulls.
    static func appendEntry(_ entry: LedgerEntry?, id: UUID?, at now: Date, to bindings: inout PostgresBindings) {
        bindings.append(entry == nil ? nil : id)
        bindings.append(entry?.userID)
        bindings.append(entry?.groupID)
        bindings.append(entry?.challengeID)
        bindings.append(entry?.attemptID)
        bindings.append(entry?.points)
        bindings.append(entry?.reason.rawValue)
        bindings.append(entry?.localDate)
        bindings.append(entry?.excessQuantity)
        bindings.append(entry == nil ? nil : now)
        bindings.append(entry?.countsTowardLevel)
        bindings.append(entry?.checkInID)
        bindings.append(entry.map { $0.countsTowardLevel ? $0.points : 0 })
    }
}
