import Foundation
import SurgeContracts

/// What Challenges refuses, from its rules and its use cases. Mapped to problem documents at the service's edge
/// (`ChallengesProblems`); this module knows nothing of HTTP.
public enum ChallengesError: Error, Equatable {
    /// A draft or edit breaks definition rules: every broken rule, by its JSON path (a 422 `validation`).
    case brokenRules([FieldError])
    /// Query parameters that cannot be read as the library's filters (a 422 `validation`).
    case invalidParameters([FieldError])
    /// Request fields that break a rule (a 422 `validation`).
    case invalidFields([FieldError])
    /// Parameters containing U+0000, which PostgreSQL cannot store (a 400 `invalid-characters`).
    case nulCharacters([FieldError])
    /// Nothing the caller may see has this id.
    case notFound(Missing)
    /// The caller sees the challenge but may not do this to it.
    case forbidden(Forbidden)
    /// A deletion asked without `?confirm=true`.
    case confirmationRequired
    /// Only competitions and curated challenges are shared by invitation.
    case notInvitable(ChallengeKind)
    /// A page cursor from another sort, or one forged.
    case unknownCursor

    public enum Missing: Equatable, Sendable {
        case challenge
        case version(Int)
        case group
        /// A group the caller named that is not among theirs.
        case groupAmongYours(UUID)
    }

    public enum Forbidden: Equatable, Sendable {
        case editChore, edit, deleteCurated, deleteChore, delete, invite
    }

    /// One field that breaks a rule.
    public static func invalidField(_ field: String, _ message: String) -> ChallengesError {
        .invalidFields([FieldError(field: field, message: message)])
    }
}
