import SurgeContracts

/// What identity's rules refuse. Mapped to problem documents at the service's edge (`IdentityProblems`); this module
/// knows nothing of HTTP.
public enum IdentityError: Error, Equatable {
    /// Fields that break a rule, every one of them at once (a 422 `validation`).
    case invalidFields([FieldError])
}
