import ChallengesDomain
import Foundation
import SurgeContracts
import SurgeRuntime

/// Creating, editing and deleting definitions. A draft is validated inside the transaction that saves it (the
/// group's members are read there); an edit becomes the next version, in force from a day that has not begun for
/// anyone it judges; each change is published with it.
struct ChallengeAuthoring {
    let storage: ChallengeStorage
    let now: @Sendable () -> Date

    func create(_ draft: ChallengeDraft, caller: UUID, trace: TraceContext) async throws -> ShownChallenge {
        let now = now()
        return try await storage.transaction { store in
            let members = try await store.members(of: draft.groupID, includingCaller: caller, awaiting: draft.namedMembers)
            let context = DraftContext(source: .user(caller), groupMembers: members, today: VersionSchedule.latestDate(at: now))
            let first = try draft.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: caller, context: context)
            try await store.insert(first, contentVersion: nil, createdBy: caller, at: now)
            try await store.publish(ChallengePublished(definition: ChallengeDefinition(first), publishedAt: now), at: now, trace: trace)
            let challenge = try await store.visibleChallenge(first.challengeID, to: caller)
            return ShownChallenge(challenge: challenge, version: first, history: [VersionSummary(version: 1, effectiveFrom: nil, createdAt: now)])
        }
    }

    func update(_ challengeID: UUID, patch: ChallengePatch, caller: UUID, trace: TraceContext) async throws -> ShownChallenge {
        let now = now()
        return try await storage.transaction { store in
            var challenge = try await store.visibleChallenge(challengeID, to: caller, locking: true)
            guard AccessPolicy.canEdit(challenge.facts) else {
                throw ChallengesError.forbidden(challenge.kind == .chore ? .editChore : .edit)
            }
            guard !patch.isEmpty else { throw ChallengesError.invalidField("body", "must change at least one field") }
            guard let latest = try await store.version(challenge.latestVersion, of: challengeID) else {
                throw ChallengesError.notFound(.challenge)
            }
            let draft = patch.applied(to: ChallengeDraft(latest))
            // A member who left does not block edits that leave the group and the chore alone.
            let members =
                patch.changesMembership
                ? try await store.members(of: draft.groupID, includingCaller: caller, awaiting: draft.namedMembers)
                : try await store.members(of: draft.groupID)
            let context = DraftContext(
                source: .user(caller), groupMembers: members, checksMembership: patch.changesMembership,
                today: VersionSchedule.latestDate(at: now))
            var next = try draft.build(
                challengeID: challengeID, version: latest.version + 1, effectiveFrom: nil, ownerID: latest.ownerID, context: context)
            if next.hasSameContent(as: latest) {
                return ShownChallenge(challenge: challenge, version: latest, history: try await store.history(of: challengeID))
            }
            next.effectiveFrom =
                next.isJudgedInParticipantsZones
                ? VersionSchedule.contentEffectiveFrom(at: now)
                : VersionSchedule.effectiveFrom(editedAt: now, in: try await store.judgingZone(of: next, for: caller))
            try await store.add(next, contentVersion: nil, createdBy: caller, at: now)
            try await store.publish(
                ChallengeChanged(definition: ChallengeDefinition(next), changedBy: caller, changedAt: now), at: now, trace: trace)
            challenge.latestVersion = next.version
            challenge.updatedAt = now
            return ShownChallenge(challenge: challenge, version: next, history: try await store.history(of: challengeID))
        }
    }

    func delete(_ challengeID: UUID, confirmed: Bool, caller: UUID, trace: TraceContext) async throws {
        let now = now()
        try await storage.transaction { store in
            let challenge = try await store.visibleChallenge(challengeID, to: caller, locking: true)
            guard AccessPolicy.canDelete(challenge.facts) else {
                throw ChallengesError.forbidden(
                    challenge.kind == .curated || challenge.visibility == .curated ? .deleteCurated : challenge.kind == .chore ? .deleteChore : .delete)
            }
            guard confirmed else { throw ChallengesError.confirmationRequired }
            try await store.delete(challengeID)
            try await store.publish(
                ChallengeDeleted(
                    challengeID: challengeID, kind: challenge.kind, ownerID: challenge.ownerID, groupID: challenge.groupID, deletedBy: caller,
                    deletedAt: now),
                at: now, trace: trace)
        }
    }
}
