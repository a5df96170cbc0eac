import ChallengesDomain
import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeRuntime

/// What every use case asks of the store the same way: visibility (a challenge the caller may not see does not exist
/// for them), groups named in a request, and the zone whose days a version is judged in.
extension ChallengeStore {
    /// The challenge if the caller may see it; otherwise 404. A group's challenge seen by a caller not among its
    /// members yet (a household joined a moment ago) is read again once they are, or once the wait runs out.
    func visibleChallenge(_ challengeID: UUID, to caller: UUID, locking: Bool = false) async throws -> ChallengeRecord {
        guard var challenge = try await challenge(challengeID, as: caller, locking: locking) else { throw ChallengesError.notFound(.challenge) }
        if !AccessPolicy.canSee(challenge.facts), let groupID = challenge.groupID,
            try await CatchUp.standard.until({ try await isMember(caller, of: groupID) }),
            let again = try await self.challenge(challengeID, as: caller, locking: locking)
        {
            challenge = again
        }
        guard AccessPolicy.canSee(challenge.facts) else { throw ChallengesError.notFound(.challenge) }
        return challenge
    }

    /// The members of a group named in a request, which must be one the caller belongs to: any other is 404, as the
    /// group itself is to them (its existence is not leaked). The caller and the `others` the request names (a chore's
    /// assignee) not among them yet (a household created or joined a moment ago) are waited for; once the wait runs
    /// out, the members as known, for the rules to judge. Nil without a group.
    func members(of groupID: UUID?, includingCaller caller: UUID, awaiting others: Set<UUID> = []) async throws -> Set<UUID>? {
        guard let groupID else { return nil }
        let awaited = others.union([caller])
        let withAll = try await CatchUp.standard.value {
            let members = try await members(of: groupID)
            return members.map(awaited.isSubset(of:)) == true ? members : nil
        }
        if let withAll { return withAll }
        guard let members = try await members(of: groupID), members.contains(caller) else {
            throw ChallengesError.notFound(.groupAmongYours(groupID))
        }
        return members
    }

    /// The zone whose days `version` is judged in for the caller: their own for curated challenges and competitions
    /// (each participant is judged in their own zone), the group's for other group definitions, the owner's
    /// otherwise. UTC when unknown.
    func judgingZone(of version: ChallengeVersion, for caller: UUID) async throws -> TimeZone {
        if version.isJudgedInParticipantsZones {
            return try await timeZone(ofUser: caller) ?? Trending.utcZone
        }
        if let groupID = version.groupID, let zone = try await timeZone(ofGroup: groupID) { return zone }
        guard let ownerID = version.ownerID else { return Trending.utcZone }
        return try await timeZone(ofUser: ownerID) ?? Trending.utcZone
    }
}
