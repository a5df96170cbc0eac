import Foundation
import Hummingbird
import SurgeRuntime

struct AuthController<Repository: AccountRepository> {
    let accounts: Repository

    struct GuestRequest: Codable {
        var displayName: String
        var timeZone: String
        var locale: String?
    }

    struct AccountResponse: ResponseCodable {
        var user: Account
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(IdentityAPI.registerGuest, use: registerGuest)
    }

    @Sendable func registerGuest(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<AccountResponse> {
        let body = try await request.decode(as: GuestRequest.self, context: context)
        let registration = try GuestRegistration(displayName: body.displayName, timeZone: body.timeZone, locale: body.locale)
        let account = try await accounts.registerGuest(registration, trace: context.trace)
        return EditedResponse(status: .created, response: AccountResponse(user: account))
    }
}
