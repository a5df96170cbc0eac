import BadgesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging

/// When the catalogue gains a badge (or a badge's rule or levels change), everyone who already qualifies earns it,
/// from the facts kept (counts and best streaks); composites from the awards held. Per-period badges (a week's
/// challenge, first place) have no facts to look back on: they are earned from the next period. Backfilled awards
/// are published with `backfilled: true`, so notifications can file them quietly instead of pushing.
struct Backfill: Sendable {
    let awarder: Awarder
    let outbox: Outbox

    struct Report: CustomStringConvertible {
        /// Per badge and level, the awards made.
        var awards: [String: [Int: Int]] = [:]

        var total: Int { awards.values.reduce(0) { $0 + $1.values.reduce(0, +) } }

        var description: String {
            guard !awards.isEmpty else { return "no new or changed badge to backfill" }
            return awards.keys.sorted().map { badge in
                let levels = awards[badge, default: [:]]
                return "\(badge): " + levels.keys.sorted().map { "level \($0) → \(levels[$0] ?? 0) users" }.joined(separator: ", ")
            }.joined(separator: "\n")
        }
    }

    /// At start, before the service listens: the catalogue's new and changed badges backfilled in a transaction of their own.
    func runAtStart(client: PostgresClient, at time: Date, logger: Logger) async throws {
        let report = try await client.transaction(logger: logger) { connection in
            try await run(on: connection, at: time, logger: logger)
        }
        logger.info("Badge catalogue ready", metadata: ["version": "\(awarder.catalogue.version)", "backfilled": "\(report.total)"])
    }

    /// Backfills the new and changed badges in the caller's transaction, and records the catalogue as backfilled.
    func run(on connection: PostgresConnection, at time: Date, logger: Logger) async throws -> Report {
        var store = PostgresBadgeStore(connection: connection, logger: logger, outbox: outbox)
        let backfillStore = BackfillStore(connection: connection, logger: logger)
        // One replica at a time; the second finds the catalogue already recorded.
        try await backfillStore.lock()
        let recorded = try await backfillStore.recordedFingerprints()
        var report = Report()
        let catalogue = awarder.catalogue
        let changed = catalogue.badges.filter { recorded[$0.id] != Self.fingerprint($0) }
        // Fact badges first, so the composites see what they awarded.
        for badge in changed.sorted(by: { Self.isComposite($0) == false && Self.isComposite($1) }) {
            for userID in try await backfillStore.candidates(for: badge) {
                var awards: [Award] = []
                switch badge.rule {
                case .count, .streak:
                    guard let fact = badge.rule.fact else { continue }
                    let value = try await backfillStore.value(of: fact, for: userID)
                    awards = Awarding.reached(catalogue, fact: fact, value: value).filter { $0.badgeID == badge.id }
                case .allOf:
                    awards = Awarding.composites(catalogue, held: try await store.heldBadges(of: userID)).filter { $0.badgeID == badge.id }
                case .weeklyChallenge, .weeklyGoal, .firstPlace:
                    continue
                }
                for award in awards where try await store.award(award, to: userID, at: time, backfilled: true) {
                    try await awarder.publish(award, to: userID, at: time, backfilled: true, trace: nil, store: &store)
                    report.awards[award.badgeID, default: [:]][award.level, default: 0] += 1
                }
            }
        }
        try await backfillStore.record(catalogue.badges.map { ($0.id, Self.fingerprint($0)) })
        return report
    }

    private static func isComposite(_ badge: Badge) -> Bool {
        if case .allOf = badge.rule { return true }
        return false
    }

    /// What a badge awards for: its rule and levels (a new title alone does not backfill again).
    static func fingerprint(_ badge: Badge) -> String {
        "\(badge.rule)|" + badge.levels.map { "\($0.threshold)" }.joined(separator: ",")
    }
}
