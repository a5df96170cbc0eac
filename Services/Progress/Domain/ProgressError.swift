import Foundation
import SurgeContracts

/// What Progress refuses, from its rules and its use cases. Mapped to problem documents at the service's edge
/// (`ProgressProblems`); this module knows nothing of HTTP.
public enum ProgressError: Error, Equatable {
    /// Fields that break a rule (a 422 `validation`).
    case invalidFields([FieldError])
    /// A photo declared as none of `PhotoRules.contentTypes` (a 415 `unsupported-media-type`).
    case unsupportedPhotoType
    /// A photo of more than `limit` bytes (a 413 `payload-too-large`).
    case photoTooLarge(limit: Int)
    /// Nothing of the caller's, or nothing the caller may see, has this id.
    case notFound(Missing)
    /// The attempt's challenge was deleted.
    case challengeGone
    /// The attempt has ended or was never started, so `action` cannot be done to it.
    case notActive(AttemptStatus, for: AttemptAction)
    /// A completed attempt is archived: it cannot be restarted.
    case attemptCompleted
    /// The caller already has an active attempt at the challenge (its id, when known).
    case alreadyStarted(activeAttemptID: UUID?)
    /// Household chores are completed occurrence by occurrence, never started.
    case choreNotStartable
    case competitionEnded
    /// Started today, the attempt would end after the last supported date.
    case endsBeyondSupportedDates(LocalDate)
    case choreAlreadyCompleted
    case amountAlreadyRemoved
    /// A check-in that happened outside the competition's run.
    case outsideCompetition(startsAt: Date, endsAt: Date)
    /// A check-in for `date` that its window refuses.
    case checkInRefused(CheckInWindow.Refusal, date: LocalDate)
    /// A check-in for a day off (a pause, a vacation, a rest weekday or a skip day).
    case dayOff(LocalDate)
    case pauseRefused(PauseRefusal)

    public enum Missing: Sendable, Equatable {
        case attempt, challenge, group, chore, photo, loggedAmount
    }

    public enum AttemptAction: Sendable, Equatable {
        case checkIn, abandon, takeTimeOff, resume
    }

    /// One field that breaks a rule.
    public static func invalidField(_ field: String, _ message: String) -> ProgressError {
        .invalidFields([FieldError(field: field, message: message)])
    }
}

extension ProgressError {
    /// What `body` returns, or its pause refusal as a `ProgressError`.
    public static func refusingPause<Value>(_ body: () throws(PauseRefusal) -> Value) throws(ProgressError) -> Value {
        do {
            return try body()
        } catch {
            throw .pauseRefused(error)
        }
    }
}
