import Foundation
import SurgeContracts

/// Liking and taking a like back, both idempotent: only a change moves the count and the trending score, and is
/// published (`ChallengeLiked`).
struct ChallengeLikes {
    let storage: ChallengeStorage
    let now: @Sendable () -> Date

    func setLike(_ challengeID: UUID, liked: Bool, caller: UUID, trace: TraceContext) async throws -> LikeState {
        let now = now()
        return try await storage.transaction { store in
            let challenge = try await store.visibleChallenge(challengeID, to: caller, locking: true)
            let changed = liked ? try await store.like(challengeID, by: caller, at: now) : try await store.unlike(challengeID, by: caller) != nil
            let likes = challenge.likes + (changed ? (liked ? 1 : -1) : 0)
            if changed {
                try await store.setLikes(likes, of: challengeID, today: Trending.day(at: now))
                try await store.publish(
                    ChallengeLiked(challengeID: challengeID, userID: caller, liked: liked, likedAt: now), at: now, trace: trace)
            }
            return LikeState(challengeID: challengeID, likes: likes, likedByMe: liked)
        }
    }
}
