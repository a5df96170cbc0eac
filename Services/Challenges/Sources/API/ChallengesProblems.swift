import ChallengesDomain
import SurgeContracts
import SurgeRuntime

/// Challenges' domain errors as problem documents: the one place they are mapped. The controller maps a query it
/// cannot read; authoring maps a draft that breaks the rules, inside the transaction that would have saved it.
enum ChallengesProblems {
    static func problem(for error: ChallengesError) -> Problem {
        switch error {
        case .brokenRules(let errors): Problem.validation(errors, detail: "The definition breaks \(errors.count) rule(s).")
        case .invalidParameters(let errors): Problem.validation(errors)
        case .nulCharacters(let errors): Problem.invalidCharacters(errors)
        }
    }

    /// What `body` returns, or its domain error as a problem document (other errors pass unchanged).
    static func mapping<Value>(_ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch let error as ChallengesError {
            throw problem(for: error)
        }
    }
}

/// The problems only challenges answers with (declared on the operations in `ChallengesAPI`).
extension Problem {
    static func confirmationRequired() -> Problem {
        Problem(
            slug: "confirmation-required", title: "Confirmation required", status: .unprocessableContent,
            detail: "Deleting removes the definition and its whole history for good. Repeat the request with ?confirm=true.")
    }

    static func notInvitable(_ kind: ChallengeKind) -> Problem {
        Problem(
            slug: "not-invitable", title: "Not invitable", status: .conflict,
            detail: "Invitations are for competitions and curated challenges; a \(kind.rawValue) is not shared by invitation.")
    }
}
