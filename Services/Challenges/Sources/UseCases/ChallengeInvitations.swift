import ChallengesDomain
import Foundation
import SurgeContracts
import SurgeRuntime

/// Inviting friends, or every other member of a group the inviter belongs to, to a competition or a curated
/// challenge: one invitation (and one `ChallengeInvitationSent`) per invitee, never a second.
struct ChallengeInvitations {
    let storage: ChallengeStorage
    let now: @Sendable () -> Date

    func invite(_ challengeID: UUID, _ request: InvitationRequest, caller: UUID, trace: TraceContext) async throws -> InvitationResult {
        // Neither userIDs nor groupID names nobody: nothing is sent, as for a group with no other members.
        let userIDs = request.userIDs ?? []
        if userIDs.count > InvitationRequest.maxUsers {
            throw ChallengesError.invalidField("userIDs", "must list at most \(InvitationRequest.maxUsers) users")
        }
        let now = now()
        return try await storage.transaction { store in
            let challenge = try await store.visibleChallenge(challengeID, to: caller, locking: true)
            guard AccessPolicy.isInvitable(challenge.kind) else { throw ChallengesError.notInvitable(challenge.kind) }
            guard AccessPolicy.canInvite(challenge.facts) else { throw ChallengesError.forbidden(.invite) }
            let others = Set(userIDs).subtracting([caller])
            // Friends accepted a moment ago are waited for.
            _ = try await CatchUp.standard.until { try await store.friends(of: caller, among: userIDs).isSuperset(of: others) }
            let friends = try await store.friends(of: caller, among: userIDs)
            var errors: [FieldError] = []
            for (index, userID) in userIDs.enumerated() {
                if userID == caller {
                    errors.append(.init(field: "userIDs[\(index)]", message: "is you"))
                } else if !friends.contains(userID) {
                    errors.append(.init(field: "userIDs[\(index)]", message: "is not your friend (\(userID.key))"))
                }
            }
            var invitees: [(UUID, UUID?)] = userIDs.filter { $0 != caller }.map { ($0, nil) }
            if let groupID = request.groupID {
                let members = try await store.members(of: groupID, includingCaller: caller) ?? []
                invitees += members.subtracting([caller]).sorted { $0.uuidString < $1.uuidString }.map { ($0, groupID) }
            }
            guard errors.isEmpty else { throw ChallengesError.invalidFields(errors) }
            var result = InvitationResult(invitations: [], alreadyInvited: [])
            var seen = Set<UUID>()
            for (invitee, groupID) in invitees where seen.insert(invitee).inserted {
                let invitation = Invitation(invitationID: UUID(), challengeID: challengeID, inviteeID: invitee, groupID: groupID, sentAt: now)
                guard invitee != challenge.ownerID, try await store.invite(invitation, from: caller) else {
                    result.alreadyInvited.append(invitee)
                    continue
                }
                try await store.publish(
                    ChallengeInvitationSent(
                        invitationID: invitation.invitationID, challengeID: challengeID, challengeName: challenge.name, inviterID: caller,
                        inviteeID: invitee, groupID: groupID, sentAt: now),
                    at: now, trace: trace)
                result.invitations.append(invitation)
            }
            return result
        }
    }
}
