import Foundation
import SurgeContracts

/// A group (household, friends, team) as its members see it.
public struct Group: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var kind: GroupKind
    public var timeZone: String
    public var ownerID: UUID
    public var createdAt: Date

    public init(id: UUID, name: String, kind: GroupKind, timeZone: String, ownerID: UUID, createdAt: Date) {
        self.id = id
        self.name = name
        self.kind = kind
        self.timeZone = timeZone
        self.ownerID = ownerID
        self.createdAt = createdAt
    }
}

public enum GroupRules {
    public static let maxNameLength = 60

    public static func name(_ raw: String, errors: inout [FieldError]) -> String? {
        ProfileRules.displayName(raw, field: "name", maxLength: maxNameLength, errors: &errors)
    }
}

/// A validated new group.
public struct GroupCreation: Sendable, Equatable {
    public var name: String
    public var kind: GroupKind
    public var timeZone: String

    public init(name: String, kind: GroupKind, timeZone: String) throws(IdentityError) {
        var errors: [FieldError] = []
        let name = GroupRules.name(name, errors: &errors)
        let zone = ProfileRules.timeZone(timeZone, errors: &errors)
        guard errors.isEmpty, let name, let zone else { throw IdentityError.invalidFields(errors) }
        self.name = name
        self.kind = kind
        self.timeZone = zone
    }
}

/// A validated change of a group's name or time zone (owner only).
public struct GroupUpdate: Sendable, Equatable {
    public var name: String?
    public var timeZone: String?

    public init(name: String?, timeZone: String?) throws(IdentityError) {
        var errors: [FieldError] = []
        self.name = name.map { GroupRules.name($0, errors: &errors) } ?? nil
        self.timeZone = timeZone.map { ProfileRules.timeZone($0, errors: &errors) } ?? nil
        guard errors.isEmpty else { throw IdentityError.invalidFields(errors) }
    }

    public func applied(to group: Group) -> Group {
        var updated = group
        if let name { updated.name = name }
        if let timeZone { updated.timeZone = timeZone }
        return updated
    }
}

/// Invite codes: 10 characters from an alphabet without look-alikes (no 0/O, 1/I/L, U), about 49 bits of randomness,
/// easy to read aloud or type. Codes are case-insensitive; spaces and dashes a person adds are ignored.
public enum InviteCode {
    public static let alphabet = Array("ABCDEFGHJKMNPQRSTVWXYZ23456789")
    public static let length = 10

    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// The canonical form of a code someone typed, or nil if it cannot be one.
    public static func normalise(_ text: String) -> String? {
        let code = String(text.uppercased().filter { !$0.isWhitespace && $0 != "-" })
        guard code.count == length, code.allSatisfy(alphabet.contains) else { return nil }
        return code
    }
}

/// How long invites live.
public struct InvitePolicy: Sendable, Equatable {
    public static let defaultHours = 72
    public static let hoursRange = 1...720

    /// The expiry of an invite created at `now`, or `invalidFields` naming `expiresInHours`.
    public static func expiry(hours: Int?, now: Date) throws(IdentityError) -> Date {
        let hours = hours ?? defaultHours
        guard hoursRange.contains(hours) else { throw IdentityError.invalidFields([FieldError(field: "expiresInHours", message: "must be from 1 to 720")]) }
        return now.addingTimeInterval(Double(hours) * 3600)
    }

    public enum State: Sendable, Equatable {
        case usable, expired, revoked
    }

    public static func state(expiresAt: Date, revokedAt: Date?, now: Date) -> State {
        if revokedAt != nil { return .revoked }
        return expiresAt <= now ? .expired : .usable
    }
}

/// One member, in joining order.
public struct Membership: Sendable, Equatable {
    public var userID: UUID
    public var role: GroupRole
    /// Joining order within the group (lower joined earlier).
    public var sequence: Int64

    public init(userID: UUID, role: GroupRole, sequence: Int64) {
        self.userID = userID
        self.role = role
        self.sequence = sequence
    }
}

/// What happens to a group when a member goes (leaves, is removed, or deletes their account): a member simply goes;
/// when the owner goes, ownership passes to the longest-standing remaining member; when the last member goes, the
/// group is deleted with its invites.
public enum Departure: Sendable, Equatable {
    case memberLeaves
    case ownershipPasses(to: UUID)
    case groupDeleted

    public static func of(_ leaving: UUID, from members: [Membership]) -> Departure {
        let remaining = members.filter { $0.userID != leaving }
        guard let successor = remaining.min(by: { $0.sequence < $1.sequence }) else { return .groupDeleted }
        let leaverIsOwner = members.contains { $0.userID == leaving && $0.role == .owner }
        return leaverIsOwner ? .ownershipPasses(to: successor.userID) : .memberLeaves
    }
}

/// A group as a member sees it, with the member's own role.
public struct GroupSummary: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var kind: GroupKind
    public var timeZone: String
    public var ownerID: UUID
    public var myRole: GroupRole
    public var memberCount: Int
    public var createdAt: Date

    public init(id: UUID, name: String, kind: GroupKind, timeZone: String, ownerID: UUID, myRole: GroupRole, memberCount: Int, createdAt: Date) {
        self.id = id
        self.name = name
        self.kind = kind
        self.timeZone = timeZone
        self.ownerID = ownerID
        self.myRole = myRole
        self.memberCount = memberCount
        self.createdAt = createdAt
    }

    public var group: Group {
        Group(id: id, name: name, kind: kind, timeZone: timeZone, ownerID: ownerID, createdAt: createdAt)
    }
}

public struct GroupMember: Codable, Sendable, Equatable {
    public var user: PublicProfile
    public var role: GroupRole
    public var joinedAt: Date

    public init(user: PublicProfile, role: GroupRole, joinedAt: Date) {
        self.user = user
        self.role = role
        self.joinedAt = joinedAt
    }
}

/// An invite to a group: the code to type and the link to share.
public struct GroupInvite: Codable, Sendable, Equatable {
    public var code: String
    public var link: String
    public var groupID: UUID
    public var createdBy: UUID?
    public var createdAt: Date
    public var expiresAt: Date

    public init(code: String, link: String, groupID: UUID, createdBy: UUID?, createdAt: Date, expiresAt: Date) {
        self.code = code
        self.link = link
        self.groupID = groupID
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
