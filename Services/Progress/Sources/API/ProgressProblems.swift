import ProgressDomain
import SurgeContracts
import SurgeRuntime

/// Progress's domain errors as problem documents: the one place they are mapped. Use cases and the domain throw
/// `ProgressError`; the problem middleware answers with what this describes.
extension ProgressError: ProblemDescribing {
    public var problem: Problem { ProgressProblems.problem(for: self) }
}

enum ProgressProblems {
    static func problem(for error: ProgressError) -> Problem {
        switch error {
        case .invalidFields(let errors): Problem.validation(errors)
        case .unsupportedPhotoType:
            Problem(
                slug: "unsupported-media-type", title: "Unsupported media type", status: .unsupportedMediaType,
                detail: "Send the photo as one of \(PhotoRules.contentTypes.joined(separator: ", ")).")
        case .photoTooLarge(let limit): Problem.tooLarge(limit: limit)
        case .notFound(let missing): Problem.notFound(notFoundDetail(missing))
        case .challengeGone: Problem.notFound("The challenge no longer exists.")
        case .notActive(let status, .checkIn): Problem.conflict("attempt-not-active", "This attempt is \(status.rawValue); restart it to check in again.")
        case .notActive(_, .abandon): Problem.conflict("attempt-not-active", "Only an active attempt can be abandoned.")
        case .notActive(let status, .takeTimeOff):
            Problem.conflict("attempt-not-active", "This attempt is \(status.rawValue): only an active attempt can take time off.")
        case .notActive(let status, .resume): Problem.conflict("attempt-not-active", "This attempt is \(status.rawValue): there is nothing to resume.")
        case .attemptCompleted: Problem.conflict("attempt-completed", "A completed attempt is archived; start the challenge again instead.")
        case .alreadyStarted(let active?): Problem.conflict("already-started", "You already have an active attempt (\(active.key)) at this challenge.")
        case .alreadyStarted(nil): Problem.conflict("already-started", "You already have an active attempt at this challenge.")
        case .choreNotStartable: Problem.conflict("chore", "Household chores are completed occurrence by occurrence, not started.")
        case .competitionEnded: Problem.conflict("competition-ended", "This competition has ended.")
        case .endsBeyondSupportedDates(let endsOn):
            Problem(
                slug: "beyond-supported-dates", title: "Ends beyond the supported dates", status: .unprocessableContent,
                detail: "Started today, this would end on \(endsOn), after \(LocalDate.supportedRange.upperBound), the last date Surge supports.")
        case .choreAlreadyCompleted: Problem.conflict("chore-already-completed", "This chore was already completed.")
        case .amountAlreadyRemoved: Problem.conflict("already-removed", "That amount was already removed.")
        case .outsideCompetition(let startsAt, let endsAt):
            Problem(
                slug: "outside-competition", title: "Outside the competition", status: .unprocessableContent,
                detail: "The competition runs from \(Timestamp.format(startsAt)) to \(Timestamp.format(endsAt)).")
        case .checkInRefused(let refusal, let date): problem(for: refusal, date: date)
        case .dayOff(let date):
            Problem.conflict("day-off", "\(date) is a day off for this attempt (a pause, a vacation, a rest weekday or a skip day); resume it to check in.")
        case .pauseRefused(let refusal): problem(for: refusal)
        }
    }

    private static func notFoundDetail(_ missing: ProgressError.Missing) -> String {
        switch missing {
        case .attempt: "No such attempt."
        case .challenge: "No such challenge."
        case .group: "No such group."
        case .chore: "No such chore."
        case .photo: "No such photo."
        case .loggedAmount: "No such logged amount."
        }
    }

    private static func problem(for refusal: CheckInWindow.Refusal, date: LocalDate) -> Problem {
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

    private static func problem(for refusal: PauseRefusal) -> Problem {
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
}
