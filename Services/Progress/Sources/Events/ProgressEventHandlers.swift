import Foundation
import Logging
import PostgresNIO
import ProgressDomain
import SurgeCalendar
import SurgeContracts
import SurgeMessaging

/// Keeps progress's own copies of what it judges by: members and their time zones and daily goals (identity),
/// definition versions, invitations and chores (challenges), households and their members (identity).
struct ProgressEventHandlers {
    let repository: ProgressRepository
    let chores: ChoreStore

    func register(in handlers: inout EventHandlers) {
        let projections = repository.projections
        let attempts = repository.attempts
        let chores = self.chores
        handlers.on(UserRegistered.self) { event, connection, _ in
            try await projections.upsertMember(event.data.userID, timeZone: event.data.timeZone, on: connection)
        }
        handlers.on(ProfileChanged.self) { event, connection, _ in
            try await projections.upsertMember(event.data.userID, timeZone: event.data.timeZone, on: connection)
            guard event.data.timeZone != event.data.previousTimeZone, let calendar = LocalCalendar(zoneNamed: event.data.timeZone) else { return }
            try await attempts.rescheduleForMove(event.data.userID, to: { attempt in
                // The day in progress ends by the later of the two zones' clocks.
                guard let next = attempt.nextJudgementAt else { return nil }
                let old = LocalCalendar(zoneNamed: event.data.previousTimeZone) ?? calendar
                let openDay = old.date(at: next.addingTimeInterval(-1))
                return next.addingTimeInterval(calendar.end(of: openDay).timeIntervalSince(old.end(of: openDay)))
            }, on: connection)
        }
        handlers.on(TrainingPlanChanged.self) { event, connection, _ in
            try await projections.setDailyGoal(event.data.userID, event.data.dailyGoal, on: connection)
        }
        handlers.on(UserDeleted.self) { event, connection, logger in
            try await Self.erase(event.data.userID, on: connection, logger: logger)
        }
        handlers.on(ChallengePublished.self) { event, connection, _ in
            try await projections.saveDefinition(event.data.definition, on: connection)
            try await chores.sync(JudgingDefinition(event.data.definition), on: connection)
        }
        handlers.on(ChallengeChanged.self) { event, connection, _ in
            try await projections.saveDefinition(event.data.definition, on: connection)
            try await chores.sync(JudgingDefinition(event.data.definition), on: connection)
        }
        handlers.on(ChallengeDeleted.self) { event, connection, _ in
            try await projections.markDeleted(event.data.challengeID, at: event.data.deletedAt, on: connection)
            try await chores.delete(choreID: event.data.challengeID, on: connection)
        }
        handlers.on(ChallengeInvitationSent.self) { event, connection, _ in
            try await projections.invite(event.data.inviteeID, to: event.data.challengeID, on: connection)
        }
        handlers.on(GroupChanged.self) { event, connection, _ in
            try await projections.upsertGroup(event.data.groupID, name: event.data.name, timeZone: event.data.timeZone, on: connection)
            try await chores.regroup(event.data.groupID, on: connection)
        }
        handlers.on(GroupMembershipChanged.self) { event, connection, _ in
            let isMember = event.data.change == .joined || event.data.change == .roleChanged
            try await projections.setMembership(event.data.groupID, event.data.userID, member: isMember, on: connection)
        }
    }

    /// Honours an account deletion: everything kept about the user goes; household chores they completed stay for
    /// the household, without their name.
    static func erase(_ userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        for statement: PostgresQuery in [
            "DELETE FROM attempts WHERE user_id = \(userID)",
            "DELETE FROM points_ledger WHERE user_id = \(userID)",
            "DELETE FROM member_points WHERE user_id = \(userID)",
            "DELETE FROM invitations WHERE user_id = \(userID)",
            "DELETE FROM group_members WHERE user_id = \(userID)",
            "UPDATE chore_occurrences SET completed_by = NULL WHERE completed_by = \(userID)",
            "UPDATE chore_occurrences SET assignee_id = NULL WHERE assignee_id = \(userID)",
            "DELETE FROM members WHERE user_id = \(userID)",
        ] {
            try await connection.query(statement, logger: logger)
        }
    }
}
