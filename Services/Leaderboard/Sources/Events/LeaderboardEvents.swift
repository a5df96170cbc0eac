import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeMessaging

/// What the leaderboard consumes, and each event's effect, written once over a `LeaderboardStore`. Scores come only
/// from the event stream: points from progress's ledger (a correction lowers the window of the day it corrects),
/// quantities logged in competitions, and the directory from identity and challenges. Nothing here calls another
/// service. The incremental consumer and the rebuild both visit this list (`EventRoutes`).
enum LeaderboardEvents {
    static func visit<Routes: EventRoutes>(_ routes: inout Routes) where Routes.Store: LeaderboardStore {
        routes.on(PointsAwarded.self, when: { scores($0.data) }, pointsAwarded)
        routes.on(CheckInRecorded.self, when: { scores($0.data) }, checkInRecorded)
        routes.on(CheckInUndone.self, when: { scores($0.data) }, checkInUndone)
        routes.on(AttemptStarted.self) { event, store in try await store.addParticipant(event.data.userID, to: event.data.challengeID) }
        routes.on(UserRegistered.self) { event, store in
            let data = event.data
            try await store.saveProfile(.init(userID: data.userID, displayName: data.displayName, avatarURL: nil, timeZone: data.timeZone))
        }
        routes.on(ProfileChanged.self, profileChanged)
        routes.on(UserDeleted.self) { event, store in try await store.erase(event.data.userID) }
        routes.on(GroupChanged.self) { event, store in
            let data = event.data
            try await store.saveGroup(data.groupID, name: data.name, timeZone: data.timeZone, at: data.changedAt)
        }
        routes.on(GroupMembershipChanged.self, membershipChanged)
        routes.on(FriendshipChanged.self, friendshipChanged)
        routes.on(ChallengePublished.self) { event, store in try await store.saveChallenge(event.data.definition) }
        routes.on(ChallengeChanged.self) { event, store in try await store.saveChallenge(event.data.definition) }
        routes.on(ChallengeDeleted.self) { event, store in try await store.deleteChallenge(event.data.challengeID) }
        routes.on(ChallengeInvitationSent.self) { event, store in try await store.invite(event.data.inviteeID, to: event.data.challengeID) }
    }

    /// Points count on the challenge's and the group's boards.
    static func scores(_ data: PointsAwarded) -> Bool { data.points != 0 && (data.challengeID != nil || data.groupID != nil) }
    /// Only an amount logged in a competition counts on its board (checkbox ticks score through their points).
    static func scores(_ data: CheckInRecorded) -> Bool { data.kind == .competition && data.action == .logged && (data.quantity ?? 0) != 0 }
    static func scores(_ data: CheckInUndone) -> Bool { data.kind == .competition && data.undoesCheckInID != nil && (data.quantity ?? 0) != 0 }

    static func pointsAwarded<Store: LeaderboardStore>(_ event: CloudEvent<PointsAwarded>, _ store: inout Store) async throws {
        let data = event.data
        guard scores(data) else { return }
        if let challengeID = data.challengeID {
            try await store.addScore(
                Double(data.points), for: data.userID, on: Board(.challenge, challengeID), windows: Windows.of(data.localDate), at: data.awardedAt,
                trace: event.trace)
        }
        if let groupID = data.groupID {
            let day = try await Windows.groupDay(groupID, userID: data.userID, localDate: data.localDate, awardedAt: data.awardedAt, store: store)
            try await store.addScore(
                Double(data.points), for: data.userID, on: Board(.group, groupID), windows: Windows.of(day), at: data.awardedAt, trace: event.trace)
        }
    }

    static func checkInRecorded<Store: LeaderboardStore>(_ event: CloudEvent<CheckInRecorded>, _ store: inout Store) async throws {
        let data = event.data
        guard scores(data), let quantity = data.quantity else { return }
        try await store.addScore(
            quantity, for: data.userID, on: Board(.competition, data.challengeID), windows: Windows.of(data.localDate), at: data.recordedAt,
            trace: event.trace)
    }

    static func checkInUndone<Store: LeaderboardStore>(_ event: CloudEvent<CheckInUndone>, _ store: inout Store) async throws {
        let data = event.data
        guard scores(data), let quantity = data.quantity else { return }
        try await store.addScore(
            -quantity, for: data.userID, on: Board(.competition, data.challengeID), windows: Windows.of(data.localDate), at: data.recordedAt,
            trace: event.trace)
    }

    static func profileChanged<Store: LeaderboardStore>(_ event: CloudEvent<ProfileChanged>, _ store: inout Store) async throws {
        let data = event.data
        let previous = try await store.profile(data.userID)
        try await store.saveProfile(.init(userID: data.userID, displayName: data.displayName, avatarURL: data.avatarURL, timeZone: data.timeZone))
        if previous?.displayName != data.displayName { try await store.touchScores(of: data.userID) }
    }

    static func membershipChanged<Store: LeaderboardStore>(_ event: CloudEvent<GroupMembershipChanged>, _ store: inout Store) async throws {
        let data = event.data
        switch data.change {
        case .joined, .roleChanged:
            try await store.setMembership(data.groupID, data.userID, member: true)
        case .left, .removed:
            try await store.setMembership(data.groupID, data.userID, member: false)
            // Off the group's current windows; closed windows keep their standings.
            let today = (try await store.groupZone(data.groupID) ?? GroupZone(zone: "UTC")).date(at: data.changedAt)
            try await store.removeScores(of: data.userID, from: Board(.group, data.groupID), windows: Windows.of(today))
        }
    }

    static func friendshipChanged<Store: LeaderboardStore>(_ event: CloudEvent<FriendshipChanged>, _ store: inout Store) async throws {
        let data = event.data
        switch data.status {
        case .accepted: try await store.setFriendship(data.requesterID, data.addresseeID, friends: true)
        case .removed, .cancelled, .declined: try await store.setFriendship(data.requesterID, data.addresseeID, friends: false)
        case .requested: break
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
    static func groupDay(_ groupID: UUID, userID: UUID, localDate: LocalDate, awardedAt: Date, store: some LeaderboardStore) async throws -> LocalDate {
        let group = try await store.groupZone(groupID) ?? GroupZone(zone: "UTC")
        guard let zone = try await store.profile(userID)?.timeZone else { return group.date(at: awardedAt) }
        let member = LocalCalendar(zoneNamedOrUTC: zone)
        return group.date(at: min(awardedAt, member.end(of: localDate).addingTimeInterval(-0.001)))
    }
}
