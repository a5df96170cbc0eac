import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeMessaging

/// What the leaderboard consumes. Scores come only from the event stream: points from progress's ledger (a
/// correction lowers the window of the day it corrects), quantities logged in competitions, and the directory from
/// identity and challenges. Nothing here calls another service.
enum LeaderboardEvents {
    static func register(in handlers: inout EventHandlers, scoring: Scoring) {
        handlers.on(PointsAwarded.self) { event, connection, logger in
            let data = event.data
            guard data.points != 0, try await !Directory.isErased(data.userID, on: connection, logger: logger) else { return }
            if let challengeID = data.challengeID {
                try await scoring.apply(
                    Double(data.points), userID: data.userID, board: Board(.challenge, challengeID), windows: Windows.of(data.localDate),
                    at: data.awardedAt, trace: event.trace, connection: connection, logger: logger)
            }
            if let groupID = data.groupID {
                let day = try await Windows.groupDay(
                    groupID, userID: data.userID, localDate: data.localDate, awardedAt: data.awardedAt, connection: connection, logger: logger)
                try await scoring.apply(
                    Double(data.points), userID: data.userID, board: Board(.group, groupID), windows: Windows.of(day),
                    at: data.awardedAt, trace: event.trace, connection: connection, logger: logger)
            }
        }
        handlers.on(CheckInRecorded.self) { event, connection, logger in
            let data = event.data
            guard data.kind == .competition, data.action == .logged, let quantity = data.quantity, quantity != 0,
                try await !Directory.isErased(data.userID, on: connection, logger: logger)
            else { return }
            try await scoring.apply(
                quantity, userID: data.userID, board: Board(.competition, data.challengeID), windows: Windows.of(data.localDate),
                at: data.recordedAt, trace: event.trace, connection: connection, logger: logger)
        }
        handlers.on(CheckInUndone.self) { event, connection, logger in
            let data = event.data
            guard data.kind == .competition, data.undoesCheckInID != nil, let quantity = data.quantity, quantity != 0,
                try await !Directory.isErased(data.userID, on: connection, logger: logger)
            else { return }
            try await scoring.apply(
                -quantity, userID: data.userID, board: Board(.competition, data.challengeID), windows: Windows.of(data.localDate),
                at: data.recordedAt, trace: event.trace, connection: connection, logger: logger)
        }
        handlers.on(AttemptStarted.self) { event, connection, logger in
            try await Directory.addParticipant(event.data.userID, to: event.data.challengeID, on: connection, logger: logger)
        }
        registerDirectory(in: &handlers)
    }

    private static func registerDirectory(in handlers: inout EventHandlers) {
        handlers.on(UserRegistered.self) { event, connection, logger in
            let data = event.data
            try await Directory.saveProfile(
                .init(userID: data.userID, displayName: data.displayName, avatarURL: nil, timeZone: data.timeZone), on: connection, logger: logger)
        }
        handlers.on(ProfileChanged.self) { event, connection, logger in
            let data = event.data
            let previous = try await Directory.profile(data.userID, on: connection, logger: logger)
            try await Directory.saveProfile(
                .init(userID: data.userID, displayName: data.displayName, avatarURL: data.avatarURL, timeZone: data.timeZone),
                on: connection, logger: logger)
            if previous?.displayName != data.displayName {
                try await ScoreStore.touch(data.userID, connection: connection, logger: logger)
            }
        }
        handlers.on(UserDeleted.self) { event, connection, logger in
            try await Directory.erase(event.data.userID, on: connection, logger: logger)
            try await ScoreStore.erase(event.data.userID, connection: connection, logger: logger)
        }
        handlers.on(GroupChanged.self) { event, connection, logger in
            let data = event.data
            try await Directory.saveGroup(data.groupID, name: data.name, timeZone: data.timeZone, at: data.changedAt, on: connection, logger: logger)
        }
        handlers.on(GroupMembershipChanged.self) { event, connection, logger in
            let data = event.data
            switch data.change {
            case .joined, .roleChanged:
                try await Directory.setMembership(data.groupID, data.userID, member: true, on: connection, logger: logger)
            case .left, .removed:
                try await Directory.setMembership(data.groupID, data.userID, member: false, on: connection, logger: logger)
                // Off the group's current windows; closed windows keep their standings.
                let zone = try await Directory.groupZone(data.groupID, on: connection, logger: logger) ?? GroupZone(zone: "UTC")
                let today = zone.date(at: data.changedAt)
                try await ScoreStore.remove(
                    data.userID, from: Board(.group, data.groupID), windows: Windows.of(today), connection: connection, logger: logger)
            }
        }
        handlers.on(FriendshipChanged.self) { event, connection, logger in
            let data = event.data
            switch data.status {
            case .accepted:
                try await Directory.setFriendship(data.requesterID, data.addresseeID, friends: true, on: connection, logger: logger)
            case .removed, .cancelled, .declined:
                try await Directory.setFriendship(data.requesterID, data.addresseeID, friends: false, on: connection, logger: logger)
            case .requested:
                break
            }
        }
        handlers.on(ChallengePublished.self) { event, connection, logger in
            try await Directory.saveChallenge(event.data.definition, on: connection, logger: logger)
        }
        handlers.on(ChallengeChanged.self) { event, connection, logger in
            try await Directory.saveChallenge(event.data.definition, on: connection, logger: logger)
        }
        handlers.on(ChallengeDeleted.self) { event, connection, logger in
            try await Directory.deleteChallenge(event.data.challengeID, on: connection, logger: logger)
        }
        handlers.on(ChallengeInvitationSent.self) { event, connection, logger in
            try await Directory.invite(event.data.inviteeID, to: event.data.challengeID, on: connection, logger: logger)
        }
    }
}

/// Which windows a day's score counts in.
enum Windows {
    static func of(_ date: LocalDate) -> [WindowKey] {
        [.week(containing: date), .month(containing: date), .allTime]
    }

    /// The group's local day a score counts for: the day of the award in the group's zone (the one in force then),
    /// except that a check-in for an earlier day (accepted inside its grace window) counts on that day, the moment it
    /// ended for the member.
    static func groupDay(
        _ groupID: UUID, userID: UUID, localDate: LocalDate, awardedAt: Date, connection: PostgresConnection, logger: Logger
    ) async throws -> LocalDate {
        let group = try await Directory.groupZone(groupID, on: connection, logger: logger) ?? GroupZone(zone: "UTC")
        guard let zone = try await Directory.profile(userID, on: connection, logger: logger)?.timeZone else { return group.date(at: awardedAt) }
        let member = LocalCalendar(zoneNamedOrUTC: zone)
        return group.date(at: min(awardedAt, member.end(of: localDate).addingTimeInterval(-0.001)))
    }
}
