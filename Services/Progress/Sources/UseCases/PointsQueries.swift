import Foundation
import SurgeRuntime

/// The caller's points: this week's and this month's in their zone, the totals, and the ledger behind them.
struct PointsQueries: Sendable {
    let storage: ProgressStorage
    let clock: ServiceClock

    func points(userID: UUID) async throws -> PointsSummary {
        try await storage.read { stores in
            let member = try await stores.requireMember(userID)
            let today = member.calendar.date(at: clock.now())
            let sums = try await stores.ledger.sums(userID, weekStart: today.startOfWeek, monthStart: today.startOfMonth)
            let totals = try await stores.ledger.totals(userID)
            return PointsSummary(
                total: totals.total, levelPoints: totals.levelPoints, thisWeek: sums.week, thisMonth: sums.month, weekStart: today.startOfWeek,
                monthStart: today.startOfMonth)
        }
    }

    /// The ledger, newest first.
    func ledger(userID: UUID, page: PageRequest<LedgerCursor>) async throws -> Page<LedgerEntryView> {
        try await storage.read { stores in
            let rows = try await stores.ledger.rows(of: userID, after: page.start(.newestFirst), limit: page.fetchLimit)
            return page.page(rows.map(LedgerEntryView.init)) { LedgerCursor(awardedAt: $0.awardedAt, entryID: $0.entryID) }
        }
    }
}
