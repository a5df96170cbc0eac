import IdentityDomain
import SurgeContracts
import SurgeRuntime

/// Identity's problem documents: its domain errors mapped in one place, and the problems more than one part of it
/// answers with. Controllers map the requests they validate; the group store maps an invite's lifetime.
enum IdentityProblems {
    /// The access token is still valid but its account was deleted.
    static let accountGone = Problem(
        slug: "account-deleted", title: "Account deleted", status: .unauthorized, detail: "This account no longer exists.")

    static func problem(for error: IdentityError) -> Problem {
        switch error {
        case .invalidFields(let errors): Problem.validation(errors)
        }
    }

    /// What `body` returns, or its domain error as a problem document (other errors pass unchanged).
    static func mapping<Value>(_ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch let error as IdentityError {
            throw problem(for: error)
        }
    }
}
