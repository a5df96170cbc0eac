import ChallengesDomain
import SurgeContracts
import SurgeRuntime

/// Challenges' domain errors as problem documents: the one place they are mapped. Use cases and the domain throw
/// `ChallengesError`; the problem middleware answers with what this describes.
extension ChallengesError: ProblemDescribing {
    public var problem: Problem { ChallengesProblems.problem(for: self) }
}

enum ChallengesProblems {
    static func problem(for error: ChallengesError) -> Problem {
        switch error {
        case .brokenRules(let errors): Problem.validation(errors, detail: "The definition breaks \(errors.count) rule(s).")
        case .invalidParameters(let errors), .invalidFields(let errors): Problem.validation(errors)
        case .nulCharacters(let errors): Problem.invalidCharacters(errors)
        case .notFound(.challenge): Problem.notFound("No such challenge.")
        case .notFound(.version(let number)): Problem.notFound("This challenge has no version \(number).")
        case .notFound(.group): Problem.notFound("No such group.")
        case .notFound(.groupAmongYours(let groupID)): Problem.notFound("No group \(groupID.key) among yours.")
        case .forbidden(.editChore): Problem.forbidden("Only members of the household may edit its chores.")
        case .forbidden(.edit): Problem.forbidden("Only the owner may edit this challenge.")
        case .forbidden(.deleteCurated): Problem.forbidden("Curated challenges are part of the library and cannot be deleted.")
        case .forbidden(.deleteChore): Problem.forbidden("Only members of the household may delete its chores.")
        case .forbidden(.delete): Problem.forbidden("Only the owner may delete this challenge.")
        case .forbidden(.invite): Problem.forbidden("Only the owner may invite people to this challenge.")
        case .confirmationRequired:
            Problem(
                slug: "confirmation-required", title: "Confirmation required", status: .unprocessableContent,
                detail: "Deleting removes the definition and its whole history for good. Repeat the request with ?confirm=true.")
        case .notInvitable(let kind):
            Problem(
                slug: "not-invitable", title: "Not invitable", status: .conflict,
                detail: "Invitations are for competitions and curated challenges; a \(kind.rawValue) is not shared by invitation.")
        case .unknownCursor: Problem.unknownCursor()
        }
    }
}
