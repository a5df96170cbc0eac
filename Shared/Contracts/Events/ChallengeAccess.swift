import Foundation

/// Who may see (and so join) a challenge: one rule, applied by challenges to its catalogue and by progress when an
/// attempt starts, each with the facts its own projections hold.
public enum ChallengeAccess {
    public struct Facts: Sendable, Equatable {
        public var visibility: Visibility
        public var isOwner: Bool
        public var isInvited: Bool
        /// The caller is a current member of the definition's group.
        public var isGroupMember: Bool

        public init(visibility: Visibility, isOwner: Bool, isInvited: Bool = false, isGroupMember: Bool = false) {
            self.visibility = visibility
            self.isOwner = isOwner
            self.isInvited = isInvited
            self.isGroupMember = isGroupMember
        }
    }

    /// Curated and public: everyone. Private: the owner and invitees. Group: the group's current members and invitees
    /// (a group competition's owner may invite friends from outside the group).
    public static func canSee(_ facts: Facts) -> Bool {
        switch facts.visibility {
        case .curated, .public: true
        case .private: facts.isOwner || facts.isInvited
        case .group: facts.isGroupMember || facts.isInvited
        }
    }
}
