import SurgeContracts

/// What Progress's rules refuse. Mapped to problem documents at the service's edge (`ProgressProblems`); this module
/// knows nothing of HTTP.
public enum ProgressError: Error, Equatable {
    /// Fields that break a rule (a 422 `validation`).
    case invalidFields([FieldError])
    /// A photo declared as none of `PhotoRules.contentTypes` (a 415 `unsupported-media-type`).
    case unsupportedPhotoType
    /// A photo of more than `limit` bytes (a 413 `payload-too-large`).
    case photoTooLarge(limit: Int)

    /// One field that breaks a rule.
    static func invalidField(_ field: String, _ message: String) -> ProgressError {
        .invalidFields([FieldError(field: field, message: message)])
    }
}
