import BadgesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging

/// What the badge service consumes. Facts are kept incrementally (never recounted from history): chores completed,
/// check-ins, days and challenges completed, best streaks; a weekly challenge completed, a week's goal reached (the
/// weekly-goal bonus in the points ledger) and first place on a group's closed weekly board earn their badge for that
/// period. An undone check-in, a broken streak or a revised board
/// never take a badge back. Events about a deleted user are ignored.
enum BadgesEvents {
    static func register(in handlers: inout EventHandlers, awarder: Awarder) {
        handlers.on(UserRegistered.self) { event, connection, logger in
            try await BadgeStore(connection: connection, logger: logger).saveUser(event.data.userID)
        }
        handlers.on(UserDeleted.self) { event, connection, logger in
            try await BadgeStore(connection: connection, logger: logger).erase(event.data.userID)
        }
        handlers.on(FriendshipChanged.self) { event, connection, logger in
            let data = event.data
            let store = BadgeStore(connection: connection, logger: logger)
            switch data.status {
            case .accepted: try await store.setFriendship(data.requesterID, data.addresseeID, friends: true)
            case .removed, .cancelled, .declined: try await store.setFriendship(data.requesterID, data.addresseeID, friends: false)
            case .requested: break
            }
        }
        handlers.on(GroupMembershipChanged.self) { event, connection, logger in
            let data = event.data
            let member = data.change == .joined || data.change == .roleChanged
            try await BadgeStore(connection: connection, logger: logger).setMembership(data.groupID, data.userID, member: member)
        }
        handlers.on(ChoreOccurrenceChanged.self) { event, connection, logger in
            let data = event.data
            guard data.change == .completed, let userID = data.completedBy else { return }
            try await record(Fact.scopes(Rule.Measure.chores.rawValue, kind: .chore, challengeID: data.choreID).map { ($0, .add(1)) },
                             for: userID, at: data.changedAt, event.trace, connection, logger, awarder)
        }
        handlers.on(CheckInRecorded.self) { event, connection, logger in
            let data = event.data
            try await record(Fact.scopes(Rule.Measure.checkIns.rawValue, kind: data.kind, challengeID: data.challengeID).map { ($0, .add(1)) },
                             for: data.userID, at: data.recordedAt, event.trace, connection, logger, awarder)
        }
        handlers.on(DayJudged.self) { event, connection, logger in
            let data = event.data
            guard data.outcome == .completed else { return }
            try await record(Fact.scopes(Rule.Measure.daysCompleted.rawValue, kind: data.kind, challengeID: data.challengeID).map { ($0, .add(1)) },
                             for: data.userID, at: data.judgedAt, event.trace, connection, logger, awarder)
        }
        handlers.on(StreakChanged.self) { event, connection, logger in
            let data = event.data
            guard data.current > 0 else { return }
            try await record(Fact.scopes(Fact.streak, kind: data.kind, challengeID: data.challengeID).map { ($0, .raise(data.current)) },
                             for: data.userID, at: data.changedAt, event.trace, connection, logger, awarder)
        }
        handlers.on(AttemptEnded.self) { event, connection, logger in
            let data = event.data
            guard data.end == .completed else { return }
            let store = BadgeStore(connection: connection, logger: logger)
            guard try await !store.isErased(data.userID) else { return }
            try await awarder.record(
                Fact.scopes(Rule.Measure.challengesCompleted.rawValue, kind: data.kind, challengeID: data.challengeID).map { ($0, .add(1)) },
                for: data.userID, at: data.endedAt, trace: event.trace, store: store)
            if data.kind == .weekly {
                try await awarder.grant(
                    Awarding.weekly(awarder.catalogue, .weeklyChallenge, week: Awarding.week(of: data.endedOn)), to: data.userID, at: data.endedAt,
                    backfilled: false, trace: event.trace, store: store)
            }
        }
        handlers.on(PointsAwarded.self) { event, connection, logger in
            let data = event.data
            guard data.reason == .weeklyGoalBonus, data.points > 0 else { return }
            let store = BadgeStore(connection: connection, logger: logger)
            guard try await !store.isErased(data.userID) else { return }
            try await awarder.grant(
                Awarding.weekly(awarder.catalogue, .weeklyGoal, week: Awarding.week(of: data.localDate)), to: data.userID, at: data.awardedAt,
                backfilled: false, trace: event.trace, store: store)
        }
        handlers.on(WindowClosed.self) { event, connection, logger in
            let data = event.data
            guard data.scope == .group else { return }
            let kind: Rule.WindowKind = data.window.contains("-W") ? .week : .month
            let store = BadgeStore(connection: connection, logger: logger)
            for winner in data.winners where try await !store.isErased(winner) {
                try await awarder.grant(
                    Awarding.firstPlace(awarder.catalogue, window: kind, key: data.window), to: winner, at: data.closedAt, backfilled: false,
                    trace: event.trace, store: store)
            }
        }
    }

    private static func record(
        _ changes: [(Fact, Awarder.FactChange)], for userID: UUID, at time: Date, _ trace: TraceContext?, _ connection: PostgresConnection,
        _ logger: Logger, _ awarder: Awarder
    ) async throws {
        let store = BadgeStore(connection: connection, logger: logger)
        guard try await !store.isErased(userID) else { return }
        try await awarder.record(changes, for: userID, at: time, trace: trace, store: store)
    }
}
