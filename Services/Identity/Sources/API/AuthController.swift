import Foundation
import Hummingbird
import JWTKit
import SurgeAuth
import SurgeRuntime

struct AuthController<Repository: AccountRepository> {
    let accounts: Repository
    let tokens: AccessTokenIssuer

    struct GuestRequest: Codable {
        var displayName: String
        var timeZone: String
        var locale: String?
    }

    struct Tokens: Codable {
        var accessToken: String
        var accessTokenExpiresAt: Date
    }

    struct SessionResponse: ResponseCodable {
        var user: Account
        var tokens: Tokens
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(IdentityAPI.registerGuest, use: registerGuest)
        router.get("/internal/jwks.json") { _, _ in
            let data = try JSONEncoder().encode(tokens.jwks)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
    }

    @Sendable func registerGuest(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<SessionResponse> {
        let body = try await request.decode(as: GuestRequest.self, context: context)
        let registration = try GuestRegistration(displayName: body.displayName, timeZone: body.timeZone, locale: body.locale)
        let account = try await accounts.registerGuest(registration, trace: context.trace)
        return EditedResponse(status: .created, response: SessionResponse(user: account, tokens: try await session(for: account)))
    }

    private func session(for account: Account) async throws -> Tokens {
        let access = try await tokens.issue(userID: account.id, kind: account.kind.rawValue)
        return Tokens(accessToken: access.token, accessTokenExpiresAt: access.expiresAt)
    }
}
