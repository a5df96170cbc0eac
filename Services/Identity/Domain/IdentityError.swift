import SurgeContracts

/// What identity refuses, from its rules and its stores. Mapped to problem documents at the service's edge
/// (`IdentityProblems`); this module knows nothing of HTTP.
public enum IdentityError: Error, Equatable {
    /// Fields that break a rule, every one of them at once (a 422 `validation`).
    case invalidFields([FieldError])
    /// The access token is still valid but its account was deleted.
    case accountGone
    /// Another account has this e-mail address.
    case emailTaken
    /// A social sign-in for an address that a password account holds.
    case accountExists
    /// Only a guest account can attach credentials.
    case credentialsExist
    /// Nothing the caller may see has this id or code.
    case notFound(Missing)
    case alreadyFriends
    /// A pending request between the two exists, in either direction.
    case friendRequestExists
    /// Only the group's owner may do this.
    case ownerOnly
    /// Only an invite's creator or the group's owner may revoke it.
    case notInviteRevoker
    case inviteExpired
    /// The owner cannot remove themselves; they leave instead.
    case cannotRemoveSelf
    /// No unused invite code was found in a few tries (a collision streak): try again.
    case inviteCodeUnavailable

    public enum Missing: Equatable, Sendable {
        case user, friendRequest, friend, group, invite, inviteCode, member
    }

    /// One field that breaks a rule.
    public static func invalidField(_ field: String, _ message: String) -> IdentityError {
        .invalidFields([FieldError(field: field, message: message)])
    }
}
