import Foundation
import SurgeContracts

/// What the service knows about a caller's relation to one definition.
public struct AccessFacts: Sendable, Equatable {
    public var kind: ChallengeKind
    public var visibility: Visibility
    public var isOwner: Bool
    public var isInvited: Bool
    /// The caller is a current member of the definition's group.
    public var isGroupMember: Bool

    public init(kind: ChallengeKind, visibility: Visibility, isOwner: Bool, isInvited: Bool, isGroupMember: Bool) {
        self.kind = kind
        self.visibility = visibility
        self.isOwner = isOwner
        self.isInvited = isInvited
        self.isGroupMember = isGroupMember
    }
}

/// Who may see, edit, delete and invite to a definition. The list queries apply the same visibility rule in SQL
/// (`ChallengeQueries.visibleTo`); integration tests hold the two together.
public enum AccessPolicy {
    /// `ChallengeAccess.canSee`, the rule progress applies too.
    public static func canSee(_ facts: AccessFacts) -> Bool {
        ChallengeAccess.canSee(
            .init(visibility: facts.visibility, isOwner: facts.isOwner, isInvited: facts.isInvited, isGroupMember: facts.isGroupMember))
    }

    /// Curated content changes only through the content file. A chore may be edited by any member of its household
    /// (004 MVP); everything else by its owner.
    public static func canEdit(_ facts: AccessFacts) -> Bool {
        guard canSee(facts) else { return false }
        switch facts.kind {
        case .curated: return false
        case .chore: return facts.isGroupMember
        default: return facts.visibility == .curated ? false : facts.isOwner
        }
    }

    public static func canDelete(_ facts: AccessFacts) -> Bool { canEdit(facts) }

    /// Competitions and curated challenges are things to do together; habits, chores and weekly challenges are not.
    public static func isInvitable(_ kind: ChallengeKind) -> Bool { kind == .competition || kind == .curated }

    /// Anyone who sees a curated or public challenge may invite friends to it; a private or group competition is
    /// shared by its owner only, so invitees cannot pass it on.
    public static func canInvite(_ facts: AccessFacts) -> Bool {
        guard canSee(facts), isInvitable(facts.kind) else { return false }
        switch facts.visibility {
        case .curated, .public: return true
        case .private, .group: return facts.isOwner
        }
    }
}
