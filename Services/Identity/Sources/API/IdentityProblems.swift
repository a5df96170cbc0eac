import IdentityDomain
import SurgeContracts
import SurgeRuntime

/// Identity's domain errors as problem documents: the one place they are mapped. Controllers map the requests they
/// validate; the group store maps an invite's lifetime.
extension IdentityProblems {
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
