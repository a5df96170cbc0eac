import SurgeContracts

/// What Challenges' rules refuse, each naming the offending fields. Mapped to problem documents at the service's
/// edge (`ChallengesProblems`); this module knows nothing of HTTP.
public enum ChallengesError: Error, Equatable {
    /// A draft or edit breaks definition rules: every broken rule, by its JSON path (a 422 `validation`).
    case brokenRules([FieldError])
    /// Query parameters that cannot be read as the library's filters (a 422 `validation`).
    case invalidParameters([FieldError])
    /// Parameters containing U+0000, which PostgreSQL cannot store (a 400 `invalid-characters`).
    case nulCharacters([FieldError])
}
