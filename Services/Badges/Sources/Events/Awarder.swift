import BadgesDomain
import Foundation
import SurgeContracts

/// Grants awards inside the transaction of the event (or backfill) that earned them: each stored once, published as
/// `badge.awarded` (through the store) only when newly stored, then the composites the new awards complete.
struct Awarder: Sendable {
    let catalogue: BadgeCatalogue

    /// Raises or adds to facts and grants what their new values reach, in the catalogue and among the own badges of
    /// `challengeID`.
    func record<Store: BadgeStore>(
        _ facts: [Fact], _ change: FactChange, for userID: UUID, at time: Date, trace: TraceContext?, store: inout Store, challengeID: UUID? = nil
    ) async throws {
        var own: BadgeCatalogue?
        if let challengeID { own = try await store.challengeBadges(challengeID) }
        let candidates = ([catalogue] + (own.map { [$0] } ?? [])).flatMap { catalogue in
            catalogue.badges.filter { $0.rule.fact.map(facts.contains) ?? false }.map(\.id)
        }
        guard let changed = try await store.change(facts, change, of: userID, heldAmong: candidates) else { return }
        var awards: [Award] = []
        for (fact, value) in zip(facts, changed.values) {
            awards += Awarding.reached(catalogue, fact: fact, value: value)
            if let own { awards += Awarding.reached(own, fact: fact, value: value) }
        }
        let new = awards.filter { !changed.held.contains(BadgeLevel(badgeID: $0.badgeID, level: $0.level)) }
        try await grant(new, to: userID, at: time, backfilled: false, trace: trace, store: &store)
    }

    /// Stores each award not yet held and publishes it; then the composites completed. Returns how many were new.
    @discardableResult
    func grant<Store: BadgeStore>(
        _ awards: [Award], to userID: UUID, at time: Date, backfilled: Bool, trace: TraceContext?, store: inout Store
    ) async throws -> Int {
        var granted = 0
        for award in awards where try await store.award(award, to: userID, at: time, backfilled: backfilled) {
            try await publish(award, to: userID, at: time, backfilled: backfilled, trace: trace, store: &store)
            granted += 1
        }
        guard granted > 0 else { return 0 }
        for award in Awarding.composites(catalogue, held: try await store.heldBadges(of: userID))
        where try await store.award(award, to: userID, at: time, backfilled: backfilled) {
            try await publish(award, to: userID, at: time, backfilled: backfilled, trace: trace, store: &store)
            granted += 1
        }
        return granted
    }

    func publish<Store: BadgeStore>(
        _ award: Award, to userID: UUID, at time: Date, backfilled: Bool, trace: TraceContext?, store: inout Store
    ) async throws {
        let badge = try await badge(award.badgeID, store: store)
        try await store.publish(
            BadgeAwarded(
                userID: userID, badgeID: award.badgeID, level: award.level, period: award.period, title: award.title, icon: badge?.icon ?? "medal",
                bonusPoints: badge?.bonusPoints, backfilled: backfilled, awardedAt: time),
            at: time, trace: trace)
    }

    /// A catalogue badge, or a challenge's own.
    func badge(_ id: String, store: some BadgeStore) async throws -> Badge? {
        if let badge = catalogue.badge(id) { return badge }
        guard let challengeID = BadgeCatalogue.challenge(ofBadge: id) else { return nil }
        return try await store.challengeBadges(challengeID).badge(id)
    }
}
