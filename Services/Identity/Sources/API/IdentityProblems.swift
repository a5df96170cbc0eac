import IdentityDomain
import SurgeContracts
import SurgeRuntime

/// Identity's domain errors as problem documents: the one place they are mapped. The domain and the stores throw
/// `IdentityError`; the problem middleware answers with what this describes.
extension IdentityError: ProblemDescribing {
    public var problem: Problem { IdentityProblems.problem(for: self) }
}

enum IdentityProblems {
    static func problem(for error: IdentityError) -> Problem {
        switch error {
        case .invalidFields(let errors): Problem.validation(errors)
        case .accountGone: Problem(slug: "account-deleted", title: "Account deleted", status: .unauthorized, detail: "This account no longer exists.")
        case .emailTaken: Problem.conflict("email-taken", "An account with this e-mail address already exists. Sign in instead.")
        case .accountExists:
            Problem.conflict("account-exists", "An account with this e-mail address already exists. Sign in with your e-mail and password instead.")
        case .credentialsExist: Problem.conflict("credentials-exist", "This account already has credentials; only a guest account can attach them.")
        case .notFound(let missing): Problem.notFound(notFoundDetail(missing))
        case .alreadyFriends: Problem.conflict("already-friends", "You are already friends.")
        case .friendRequestExists:
            Problem.conflict("friend-request-exists", "There is already a pending friend request between you two; answer or cancel it.")
        case .ownerOnly: Problem(slug: "owner-only", title: "Forbidden", status: .forbidden, detail: "Only the group's owner may do this.")
        case .notInviteRevoker: Problem.forbidden("Only the invite's creator or the group's owner may revoke it.")
        case .inviteExpired: Problem(slug: "invite-expired", title: "Invite expired", status: .gone, detail: "This invite has expired; ask for a new one.")
        case .cannotRemoveSelf: Problem.conflict("cannot-remove-self", "The owner cannot remove themselves; leave the group instead.")
        case .inviteCodeUnavailable: Problem.unavailable("Could not create an invite code; try again.")
        }
    }

    private static func notFoundDetail(_ missing: IdentityError.Missing) -> String {
        switch missing {
        case .user: "No such user."
        case .friendRequest: "No such friend request."
        case .friend: "No such friend."
        case .group: "No such group."
        case .invite: "No such invite."
        case .inviteCode: "No such invite. Check the code, or ask for a new one."
        case .member: "No such member."
        }
    }
}
