import Foundation
import Hummingbird
import SurgeRuntime

struct AuthController<Repository: AccountRepository> {
    let accounts: Repository

    struct GuestRequest: Decodable {
        var displayName: String
        var timeZone: String
        var locale: String?
    }

    struct AccountResponse: ResponseEncodable {
        var user: Account
    }

    func addRoutes(to group: RouterGroup<SurgeRequestContext>) {
        group.post("guest", use: registerGuest)
    }

    @Sendable func registerGuest(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<AccountResponse> {
        let body = try await request.decode(as: GuestRequest.self, context: context)
        let registration = try GuestRegistration(displayName: body.displayName, timeZone: body.timeZone, locale: body.locale)
        let account = try await accounts.registerGuest(registration, trace: context.trace)
        return EditedResponse(status: .created, response: AccountResponse(user: account))
    }
}
