import BadgesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging

/// What the badge service consumes. Facts are kept incrementally (never recounted from history): chores completed,
/// check-ins, days and challenges completed, best streaks; a weekly challenge's week completed (its attempt completed,
/// or the week's challenge bonus booked), a week's goal reached (the weekly-goal bonus in the points ledger) and first
/// place on a group's closed weekly board earn their badge for that period; a challenge's definition brings its kind
/// and the badges it names of its own (`BadgeCatalogue(challengeID:badges:)`), earned from that challenge's facts and
/// its competition board; an attempt started (or a chore of it completed) makes the user one of its participants, whose
/// locked badges list them. Streaks are raised from the live streak a check-in carries as well as from the judged
/// `streak.changed`. An undone check-in, a broken streak or a revised board never take a badge back. Events about a
/// deleted user are ignored.
enum BadgesEvents {
    static func visit<Routes: EventRoutes>(_ routes: inout Routes, awarder: Awarder) where Routes.Store: BadgeStore {
        routes.on(UserRegistered.self) { event, store in try await store.saveUser(event.data.userID) }
        routes.on(UserDeleted.self) { event, store in try await store.erase(event.data.userID) }
        routes.on(FriendshipChanged.self, when: { $0.data.status != .requested }) { event, store in
            let data = event.data
            switch data.status {
            case .accepted: try await store.setFriendship(data.requesterID, data.addresseeID, friends: true)
            case .removed, .cancelled, .declined: try await store.setFriendship(data.requesterID, data.addresseeID, friends: false)
            case .requested: break
            }
        }
        routes.on(GroupMembershipChanged.self) { event, store in
            let data = event.data
            let member = data.change == .joined || data.change == .roleChanged
            try await store.setMembership(data.groupID, data.userID, member: member)
        }
        routes.on(ChoreOccurrenceChanged.self, when: { $0.data.change == .completed && $0.data.completedBy != nil }) { event, store in
            let data = event.data
            guard let userID = data.completedBy else { return }
            try await store.join(data.choreID, userID)
            try await record(Fact.scopes(Rule.Measure.chores.rawValue, kind: .chore, challengeID: data.choreID), .add(1),
                             for: userID, at: data.changedAt, event.trace, &store, awarder)
        }
        routes.on(AttemptStarted.self) { event, store in try await store.join(event.data.challengeID, event.data.userID) }
        routes.on(CheckInRecorded.self) { event, store in
            let data = event.data
            try await awarder.record(
                Fact.scopes(Rule.Measure.checkIns.rawValue, kind: data.kind, challengeID: data.challengeID), .add(1), for: data.userID,
                at: data.recordedAt, trace: event.trace, store: &store)
            // The live streak: a streak level is earned by the check-in that completes the day reaching it, not a day
            // later when that day is judged (its `streak.changed` then finds the level held).
            if let streak = data.currentStreak, streak > 0 {
                try await awarder.record(
                    Fact.scopes(Fact.streak, kind: data.kind, challengeID: data.challengeID), .raise(streak), for: data.userID, at: data.recordedAt,
                    trace: event.trace, store: &store, challengeID: data.challengeID)
            }
        }
        routes.on(DayJudged.self, when: { $0.data.outcome == .completed }) { event, store in
            let data = event.data
            try await record(Fact.scopes(Rule.Measure.daysCompleted.rawValue, kind: data.kind, challengeID: data.challengeID), .add(1),
                             for: data.userID, at: data.judgedAt, event.trace, &store, awarder)
        }
        routes.on(StreakChanged.self, when: { $0.data.current > 0 }) { event, store in
            let data = event.data
            try await record(Fact.scopes(Fact.streak, kind: data.kind, challengeID: data.challengeID), .raise(data.current),
                             for: data.userID, at: data.changedAt, event.trace, &store, awarder, challengeID: data.challengeID)
        }
        routes.on(AttemptEnded.self, when: { $0.data.end == .completed }) { event, store in
            let data = event.data
            guard try await !store.isErased(data.userID) else { return }
            try await awarder.record(
                Fact.scopes(Rule.Measure.challengesCompleted.rawValue, kind: data.kind, challengeID: data.challengeID), .add(1),
                for: data.userID, at: data.endedAt, trace: event.trace, store: &store, challengeID: data.challengeID)
            if data.kind == .weekly {
                try await awarder.grant(
                    Awarding.weekly(awarder.catalogue, .weeklyChallenge, week: Awarding.week(of: data.endedOn)), to: data.userID, at: data.endedAt,
                    backfilled: false, trace: event.trace, store: &store)
            }
        }
        // Only a week's bonuses earn badges; the points of every tick mean nothing here.
        routes.on(PointsAwarded.self, when: { $0.data.points > 0 && ($0.data.reason == .weeklyGoalBonus || $0.data.reason == .challengeBonus) }) {
            event, store in
            let data = event.data
            guard try await !store.isErased(data.userID) else { return }
            let rule: Rule
            if data.reason == .weeklyGoalBonus {
                rule = .weeklyGoal
            } else {
                // An open-ended weekly challenge never ends: its week is completed when progress books the week's bonus.
                guard let challengeID = data.challengeID, try await store.challengeKind(challengeID) == .weekly else { return }
                rule = .weeklyChallenge
            }
            try await awarder.grant(
                Awarding.weekly(awarder.catalogue, rule, week: Awarding.week(of: data.localDate)), to: data.userID, at: data.awardedAt,
                backfilled: false, trace: event.trace, store: &store)
        }
        routes.on(WindowClosed.self) { event, store in
            let data = event.data
            let kind: Rule.WindowKind = data.window.contains("-W") ? .week : .month
            // A group's board earns the catalogue's first-place badges; a competition's board (ranked by what is logged in
            // its unit), the competition's own. A competition's points board (`challenge:<id>`, when its rules give
            // points) may have another leader, who has not won it.
            let badges: BadgeCatalogue
            switch data.scope {
            case .group: badges = awarder.catalogue
            case .challenge:
                guard data.board == "competition:\(data.subjectID.key)" else { return }
                badges = try await store.challengeBadges(data.subjectID)
            }
            for winner in data.winners where try await !store.isErased(winner) {
                try await awarder.grant(
                    Awarding.firstPlace(badges, window: kind, key: data.window), to: winner, at: data.closedAt, backfilled: false,
                    trace: event.trace, store: &store)
            }
        }
        routes.on(ChallengePublished.self) { event, store in try await learn(event.data.definition, at: event.data.publishedAt, event.trace, &store, awarder) }
        routes.on(ChallengeChanged.self) { event, store in try await learn(event.data.definition, at: event.data.changedAt, event.trace, &store, awarder) }
        routes.on(ChallengeDeleted.self) { event, store in try await store.deleteChallenge(event.data.challengeID) }
    }

    private static func record<Store: BadgeStore>(
        _ facts: [Fact], _ change: FactChange, for userID: UUID, at time: Date, _ trace: TraceContext?, _ store: inout Store, _ awarder: Awarder,
        challengeID: UUID? = nil
    ) async throws {
        try await awarder.record(facts, change, for: userID, at: time, trace: trace, store: &store, challengeID: challengeID)
    }

    /// Keeps a challenge's kind and own badges, and awards those (as backfilled) to everyone whose facts already reach
    /// them, as a badge added to the catalogue is: a streak or a completion recorded before the definition arrived
    /// counts.
    private static func learn<Store: BadgeStore>(
        _ definition: ChallengeDefinition, at time: Date, _ trace: TraceContext?, _ store: inout Store, _ awarder: Awarder
    ) async throws {
        guard try await store.saveChallenge(definition) else { return }
        let own = BadgeCatalogue(challengeID: definition.challengeID, badges: definition.badges ?? [])
        for badge in own.badges {
            guard let fact = badge.rule.fact else { continue }
            for (userID, value) in try await store.users(with: fact, atLeast: badge.levels[0].threshold) {
                try await awarder.grant(
                    Awarding.reached(own, fact: fact, value: value).filter { $0.badgeID == badge.id }, to: userID, at: time, backfilled: true,
                    trace: trace, store: &store)
            }
        }
    }
}
