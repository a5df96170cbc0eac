import Hummingbird
import IdentityDomain
import SurgeRuntime

/// An access token stays cryptographically valid until it expires, even after its account was deleted. Every request
/// that carries a caller is therefore checked against the accounts table first: a deleted account gets 401
/// `account-deleted` on every route, never data (not even an empty list).
struct AccountExistsMiddleware: RouterMiddleware {
    typealias Context = SurgeRequestContext
    let accounts: Accounts

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let caller = context.callerID, try await !accounts.exists(caller) {
            throw IdentityError.accountGone
        }
        return try await next(request, context)
    }
}
