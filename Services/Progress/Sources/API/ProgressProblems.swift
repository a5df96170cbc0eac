import ProgressDomain
import SurgeContracts
import SurgeRuntime

/// Progress's domain errors and check-in refusals as problem documents: the one place they are mapped. The check-in
/// controller maps a photo it refuses; `CheckInHandler` maps a check-in the rules or the day's window refuse.
enum ProgressProblems {
    /// No attempt of the caller's has this id.
    static var noSuchAttempt: Problem { Problem.notFound("No such attempt.") }

    /// The attempt's challenge was deleted.
    static var challengeGone: Problem { Problem.notFound("The challenge no longer exists.") }

    /// A check-in for an attempt that has ended.
    static func notActiveForCheckIn(_ status: AttemptStatus) -> Problem {
        Problem.conflict("attempt-not-active", "This attempt is \(status.rawValue); restart it to check in again.")
    }

    static func problem(for error: ProgressError) -> Problem {
        switch error {
        case .invalidFields(let errors): Problem.validation(errors)
        case .unsupportedPhotoType:
            Problem(
                slug: "unsupported-media-type", title: "Unsupported media type", status: .unsupportedMediaType,
                detail: "Send the photo as one of \(PhotoRules.contentTypes.joined(separator: ", ")).")
        case .photoTooLarge(let limit): Problem.tooLarge(limit: limit)
        }
    }

    static func problem(for refusal: CheckInWindow.Refusal, date: LocalDate) -> Problem {
        switch refusal {
        case .tooLate(let closedAt):
            Problem(
                slug: "check-in-window-closed", title: "Too late for that day", status: .unprocessableContent,
                detail: "Check-ins for \(date) were accepted until \(Timestamp.format(closedAt)).")
        case .inFuture:
            Problem(slug: "check-in-in-future", title: "Check-in in the future", status: .unprocessableContent,
                    detail: "happenedAt is later than now; check the device clock.")
        case .beforeStart:
            Problem(slug: "check-in-before-start", title: "Before the attempt", status: .unprocessableContent,
                    detail: "\(date) is before this attempt started.")
        case .afterEnd:
            Problem(slug: "check-in-after-end", title: "After the attempt", status: .unprocessableContent, detail: "\(date) is after this attempt's last day.")
        }
    }

    static func problem(for refusal: PauseRefusal) -> Problem {
        switch refusal {
        case .notAllowed(let rule):
            Problem(slug: "pause-not-allowed", title: "No time off in this challenge", status: .unprocessableContent, detail: rule)
        case .tooLate(let date, let closedAt):
            Problem(
                slug: "pause-too-late", title: "Too late to take that day off", status: .unprocessableContent,
                detail: "\(date) could be taken off until \(Timestamp.format(closedAt)), when its check-in window closed; a judged day stays judged.")
        case .overlaps(let pause):
            Problem.conflict(
                "pause-overlaps",
                "The attempt already has time off from \(pause.from)\(pause.through.map { " through \($0)" } ?? " until resumed") (\(pause.kind.rawValue) \(pause.pauseID.key)).")
        case .tooLong(let maximum):
            Problem(
                slug: "pause-too-long", title: "Pause too long", status: .unprocessableContent,
                detail: "A pause may last at most \(maximum) days (rules.pause.maxDaysPerPause).")
        case .limitReached(let rule):
            Problem(slug: "pause-limit-reached", title: "No time off left", status: .unprocessableContent, detail: rule)
        case .outsideAttempt(let field, let message), .beyondSupportedDates(let field, let message):
            Problem.validation(field: field, message)
        case .notPaused:
            Problem.conflict("not-paused", "This attempt has no pause in progress or to come.")
        }
    }

    /// The check-in refusal for a day off.
    static func dayOff(_ date: LocalDate) -> Problem {
        Problem.conflict("day-off", "\(date) is a day off for this attempt (a pause, a vacation, a rest weekday or a skip day); resume it to check in.")
    }

    /// What `body` returns, or its pause refusal as a problem document.
    static func mappingRefusal<Value>(_ body: () throws(PauseRefusal) -> Value) throws -> Value {
        do {
            return try body()
        } catch {
            throw problem(for: error)
        }
    }

    /// What `body` returns, or its domain error as a problem document (other errors pass unchanged).
    static func mapping<Value>(_ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch let error as ProgressError {
            throw problem(for: error)
        }
    }
}
