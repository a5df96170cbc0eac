import ChallengesDomain
import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeRuntime

/// What every use case asks of the store the same way: visibility (a challenge the caller may not see does not exist
/// for them), groups named in a request, and the zone whose days a version is judged in.
extension ChallengeStore {
    /// The challenge if the caller may see it; otherwise 404.
    func visibleChallenge(_ challengeID: UUID, to caller: UUID, locking: Bool = false) async throws -> ChallengeRecord {
        guard let challenge = try await challenge(challengeID, as: caller, locking: locking), AccessPolicy.canSee(challenge.facts) else {
            throw Problem.notFound("No such challenge.")
        }
        return challenge
    }

    /// The members of a group named in a request, which must be one the caller belongs to: any other is 404, as the
    /// group itself is to them (its existence is not leaked). A caller not among them yet (a household created or
    /// joined a moment ago) is waited for. Nil without a group.
    func members(of groupID: UUID?, includingCaller caller: UUID) async throws -> Set<UUID>? {
        guard let groupID else { return nil }
        let withCaller = try await CatchUp.standard.value {
            let members = try await members(of: groupID)
            return members?.contains(caller) == true ? members : nil
        }
        if let withCaller { return withCaller }
        guard let members = try await members(of: groupID), members.contains(caller) else {
            throw Problem.notFound("No group \(groupID.key) among yours.")
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
