import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import Synchronization
import TemplateDomain

/// Where tallies live. Use cases talk to this protocol; `PostgresTallyStore` is production's, `InMemoryTallyStore`
/// serves router tests that need no database.
protocol TallyStore: Sendable {
    func tally(of userID: UUID, on date: LocalDate) async throws -> DailyTally
    func export(userID: UUID) async throws -> [DailyTally]
}

struct PostgresTallyStore: TallyStore {
    let client: PostgresClient
    let logger: Logger

    func tally(of userID: UUID, on date: LocalDate) async throws -> DailyTally {
        let rows = try await client.query(
            "SELECT check_ins FROM daily_tallies WHERE user_id = \(userID) AND local_date = \(date)", logger: logger)
        for try await checkIns in rows.decode(Int.self) { return DailyTally(userID: userID, date: date, checkIns: checkIns) }
        return DailyTally(userID: userID, date: date)
    }

    func export(userID: UUID) async throws -> [DailyTally] {
        let rows = try await client.query(
            "SELECT local_date, check_ins FROM daily_tallies WHERE user_id = \(userID) ORDER BY local_date", logger: logger)
        var tallies: [DailyTally] = []
        for try await (date, checkIns) in rows.decode((LocalDate, Int).self) {
            tallies.append(DailyTally(userID: userID, date: date, checkIns: checkIns))
        }
        return tallies
    }
}

/// The tallies the consumer writes, over its inbox transaction's connection.
struct TallyRecorder {
    let connection: PostgresConnection
    let logger: Logger

    /// Counts one check-in and returns the new tally.
    func record(_ userID: UUID, on date: LocalDate) async throws -> DailyTally {
        let rows = try await connection.query(
            """
            INSERT INTO daily_tallies (user_id, local_date, check_ins) VALUES (\(userID), \(date), 1)
            ON CONFLICT (user_id, local_date) DO UPDATE SET check_ins = daily_tallies.check_ins + 1
            RETURNING check_ins
            """, logger: logger)
        var tally = DailyTally(userID: userID, date: date)
        for try await checkIns in rows.decode(Int.self) { tally.checkIns = checkIns }
        return tally
    }

    func erase(_ userID: UUID) async throws {
        try await connection.query("DELETE FROM daily_tallies WHERE user_id = \(userID)", logger: logger)
    }
}

final class InMemoryTallyStore: TallyStore {
    private let tallies = Mutex<[UUID: [LocalDate: Int]]>([:])

    init(_ tallies: [DailyTally] = []) {
        for tally in tallies { self.tallies.withLock { $0[tally.userID, default: [:]][tally.date] = tally.checkIns } }
    }

    func tally(of userID: UUID, on date: LocalDate) async throws -> DailyTally {
        DailyTally(userID: userID, date: date, checkIns: tallies.withLock { $0[userID]?[date] } ?? 0)
    }

    func export(userID: UUID) async throws -> [DailyTally] {
        tallies.withLock { $0[userID] ?? [:] }.sorted { $0.key < $1.key }.map { DailyTally(userID: userID, date: $0.key, checkIns: $0.value) }
    }
}
