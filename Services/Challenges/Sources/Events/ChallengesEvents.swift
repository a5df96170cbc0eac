import Foundation
import SurgeContracts
import SurgeMessaging
import SurgeRuntime

/// What challenges does with other services' events, each in the inbox transaction of its event: keeps the directory
/// (time zones, friendships, groups, members) in step with identity's, erases deleted users, and counts joins from
/// progress for trending.
enum ChallengesEvents {
    static func register(in routes: inout ConsumerRoutes<ChallengeStore>, clock: ServiceClock) {
        routes.on(UserRegistered.self) { event, store in
            try await store.directory.upsertUser(event.data.userID, displayName: event.data.displayName, timeZone: event.data.timeZone)
        }
        routes.on(ProfileChanged.self) { event, store in
            try await store.directory.upsertUser(event.data.userID, displayName: event.data.displayName, timeZone: event.data.timeZone)
        }
        routes.on(FriendshipChanged.self) { event, store in
            // Only accepted friendships are kept; a pending request changes nothing.
            guard event.data.status != .requested else { return }
            try await store.directory.setFriendship(
                event.data.requesterID, event.data.addresseeID, accepted: event.data.status == .accepted, at: event.data.changedAt)
        }
        routes.on(GroupChanged.self) { event, store in
            try await store.directory.upsertGroup(event.data)
        }
        routes.on(GroupMembershipChanged.self) { event, store in
            try await store.directory.applyMembership(event.data)
        }
        routes.on(UserDeleted.self) { event, store in
            let outcome = try await store.erasure.erase(event.data.userID, at: event.data.deletedAt, trace: event.trace)
            store.logger.info(
                "Erased a deleted user's definitions", metadata: ["deleted": "\(outcome.deleted.count)", "kept": "\(outcome.kept.count)"])
        }
        // A join is an attempt started at a challenge (a restart counts again: it is renewed interest).
        routes.on(AttemptStarted.self) { event, store in
            let attempt = event.data
            try await store.trending.record(joins: 1, challengeID: attempt.challengeID, on: Trending.day(at: attempt.startedAt))
            try await store.trending.refresh(attempt.challengeID, today: Trending.day(at: clock.now()))
        }
    }
}
