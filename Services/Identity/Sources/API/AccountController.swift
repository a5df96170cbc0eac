import Foundation
import Hummingbird
import SurgeRuntime

struct AccountController<Repository: AccountRepository> {
    let accounts: Repository

    struct AccountResponse: ResponseCodable {
        var user: Account
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(IdentityAPI.me, use: me)
    }

    @Sendable func me(request: Request, context: SurgeRequestContext) async throws -> AccountResponse {
        guard let account = try await accounts.account(try context.caller()) else { throw Problem.notFound("The account no longer exists.") }
        return AccountResponse(user: account)
    }
}
