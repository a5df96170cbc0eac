import Foundation
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeMessaging

/// What progress consumes: its own copies of what it judges by (members and their time zones and daily goals from
/// identity; definition versions, invitations and chores from challenges; households and their members from identity),
/// each kept inside the event's inbox transaction.
enum ProgressEvents {
    static func register(in routes: inout ConsumerRoutes<Stores>, judging: DayJudging, chores: ChoreScheduling) {
        routes.on(UserRegistered.self) { event, stores in
            try await stores.projections.upsertMember(event.data.userID, timeZone: event.data.timeZone)
        }
        routes.on(ProfileChanged.self) { event, stores in
            try await stores.projections.upsertMember(event.data.userID, timeZone: event.data.timeZone)
            guard event.data.timeZone != event.data.previousTimeZone, let calendar = LocalCalendar(zoneNamed: event.data.timeZone) else { return }
            try await judging.rescheduleForMove(event.data.userID, from: event.data.previousTimeZone, to: calendar, in: stores)
        }
        routes.on(TrainingPlanChanged.self) { event, stores in
            try await stores.projections.setDailyGoal(event.data.userID, event.data.dailyGoal)
        }
        routes.on(UserDeleted.self) { event, stores in
            try await stores.userData.erase(event.data.userID)
        }
        routes.on(ChallengePublished.self) { event, stores in
            try await saveDefinition(event.data.definition, in: stores, chores: chores)
        }
        routes.on(ChallengeChanged.self) { event, stores in
            try await saveDefinition(event.data.definition, in: stores, chores: chores)
        }
        routes.on(ChallengeDeleted.self) { event, stores in
            try await stores.projections.markDeleted(event.data.challengeID, at: event.data.deletedAt)
            try await chores.remove(event.data.challengeID, in: stores)
        }
        routes.on(ChallengeInvitationSent.self) { event, stores in
            try await stores.projections.invite(event.data.inviteeID, to: event.data.challengeID)
        }
        routes.on(GroupChanged.self) { event, stores in
            try await stores.projections.upsertGroup(event.data.groupID, name: event.data.name, timeZone: event.data.timeZone)
            try await chores.regroup(event.data.groupID, in: stores)
        }
        routes.on(GroupMembershipChanged.self) { event, stores in
            let isMember = event.data.change == .joined || event.data.change == .roleChanged
            try await stores.projections.setMembership(event.data.groupID, event.data.userID, member: isMember)
        }
    }

    /// A published or changed definition is kept as published; its chore, if it is one, is scheduled by progress's own
    /// projection of it.
    private static func saveDefinition(_ definition: ChallengeDefinition, in stores: Stores, chores: ChoreScheduling) async throws {
        try await stores.projections.saveDefinition(definition)
        try await chores.sync(JudgingDefinition(definition), in: stores)
    }
}
