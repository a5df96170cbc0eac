import Foundation
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeMessaging

/// What progress consumes: its own copies of what it judges by (members and their time zones and daily goals from
/// identity; definition versions, invitations and chores from challenges; households and their members from identity),
/// each kept inside the event's inbox transaction.
enum ProgressEvents {
    static func register(in handlers: inout EventHandlers, storage: PostgresProgressStorage, judging: DayJudging, chores: ChoreScheduling) {
        handlers.on(UserRegistered.self) { event, connection, logger in
            try await storage.stores(on: connection, logger: logger).projections.upsertMember(event.data.userID, timeZone: event.data.timeZone)
        }
        handlers.on(ProfileChanged.self) { event, connection, logger in
            let stores = storage.stores(on: connection, logger: logger)
            try await stores.projections.upsertMember(event.data.userID, timeZone: event.data.timeZone)
            guard event.data.timeZone != event.data.previousTimeZone, let calendar = LocalCalendar(zoneNamed: event.data.timeZone) else { return }
            try await judging.rescheduleForMove(event.data.userID, from: event.data.previousTimeZone, to: calendar, in: stores)
        }
        handlers.on(TrainingPlanChanged.self) { event, connection, logger in
            try await storage.stores(on: connection, logger: logger).projections.setDailyGoal(event.data.userID, event.data.dailyGoal)
        }
        handlers.on(UserDeleted.self) { event, connection, logger in
            try await storage.stores(on: connection, logger: logger).userData.erase(event.data.userID)
        }
        handlers.on(ChallengePublished.self) { event, connection, logger in
            try await saveDefinition(event.data.definition, in: storage.stores(on: connection, logger: logger), chores: chores)
        }
        handlers.on(ChallengeChanged.self) { event, connection, logger in
            try await saveDefinition(event.data.definition, in: storage.stores(on: connection, logger: logger), chores: chores)
        }
        handlers.on(ChallengeDeleted.self) { event, connection, logger in
            let stores = storage.stores(on: connection, logger: logger)
            try await stores.projections.markDeleted(event.data.challengeID, at: event.data.deletedAt)
            try await chores.remove(event.data.challengeID, in: stores)
        }
        handlers.on(ChallengeInvitationSent.self) { event, connection, logger in
            try await storage.stores(on: connection, logger: logger).projections.invite(event.data.inviteeID, to: event.data.challengeID)
        }
        handlers.on(GroupChanged.self) { event, connection, logger in
            let stores = storage.stores(on: connection, logger: logger)
            try await stores.projections.upsertGroup(event.data.groupID, name: event.data.name, timeZone: event.data.timeZone)
            try await chores.regroup(event.data.groupID, in: stores)
        }
        handlers.on(GroupMembershipChanged.self) { event, connection, logger in
            let isMember = event.data.change == .joined || event.data.change == .roleChanged
            try await storage.stores(on: connection, logger: logger).projections.setMembership(event.data.groupID, event.data.userID, member: isMember)
        }
    }

    /// A published or changed definition is kept as published; its chore, if it is one, is scheduled by progress's own
    /// projection of it.
    private static func saveDefinition(_ definition: ChallengeDefinition, in stores: Stores, chores: ChoreScheduling) async throws {
        try await stores.projections.saveDefinition(definition)
        try await chores.sync(JudgingDefinition(definition), in: stores)
    }
}
