import Foundation
import SurgeContracts
import SurgeMessaging
import SurgeRuntime

/// What challenges does with other services' events, each in the inbox transaction of its event: keeps the directory
/// (time zones, friendships, groups, members) in step with identity's, erases deleted users, and counts joins from
/// progress for trending.
enum ChallengesEvents {
    static func register(in handlers: inout EventHandlers, outbox: Outbox, clock: ServiceClock) {
        handlers.on(UserRegistered.self) { event, connection, logger in
            try await DirectoryStore.upsertUser(
                event.data.userID, displayName: event.data.displayName, timeZone: event.data.timeZone, on: connection, logger: logger)
        }
        handlers.on(ProfileChanged.self) { event, connection, logger in
            try await DirectoryStore.upsertUser(
                event.data.userID, displayName: event.data.displayName, timeZone: event.data.timeZone, on: connection, logger: logger)
        }
        handlers.on(FriendshipChanged.self) { event, connection, logger in
            // Only accepted friendships are kept; a pending request changes nothing.
            guard event.data.status != .requested else { return }
            try await DirectoryStore.setFriendship(
                event.data.requesterID, event.data.addresseeID, accepted: event.data.status == .accepted, at: event.data.changedAt,
                on: connection, logger: logger)
        }
        handlers.on(GroupChanged.self) { event, connection, logger in
            try await DirectoryStore.upsertGroup(event.data, on: connection, logger: logger)
        }
        handlers.on(GroupMembershipChanged.self) { event, connection, logger in
            try await DirectoryStore.applyMembership(event.data, on: connection, logger: logger)
        }
        handlers.on(UserDeleted.self) { event, connection, logger in
            let outcome = try await UserErasure.erase(
                event.data.userID, at: event.data.deletedAt, outbox: outbox, trace: event.trace, on: connection, logger: logger)
            logger.info(
                "Erased a deleted user's definitions", metadata: ["deleted": "\(outcome.deleted.count)", "kept": "\(outcome.kept.count)"])
        }
        // A join is an attempt started at a challenge (a restart counts again: it is renewed interest).
        handlers.on(AttemptStarted.self) { event, connection, logger in
            let attempt = event.data
            try await Trending.record(
                joins: 1, challengeID: attempt.challengeID, on: Trending.day(at: attempt.startedAt), connection: connection, logger: logger)
            try await Trending.refresh(attempt.challengeID, today: Trending.day(at: clock.now()), connection: connection, logger: logger)
        }
    }
}
