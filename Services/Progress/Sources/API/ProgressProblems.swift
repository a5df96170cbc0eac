import ProgressDomain
import SurgeContracts
import SurgeRuntime

/// Progress's domain errors and check-in refusals as problem documents: the one place they are mapped. The check-in
/// controller maps a photo it refuses; the repository maps a check-in the rules or the day's window refuse.
enum ProgressProblems {
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

    /// What `body` returns, or its domain error as a problem document (other errors pass unchanged).
    static func mapping<Value>(_ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch let error as ProgressError {
            throw problem(for: error)
        }
    }
}
