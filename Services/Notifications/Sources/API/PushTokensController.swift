import Foundation
import Hummingbird
import NotificationsDomain
import SurgeRuntime

/// The caller's push devices.
struct PushTokensController {
    let tokens: PushTokenStore
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(NotificationsAPI.registerPushToken) { request, context in
            let caller = try context.caller()
            let body = try await request.decode(as: PushTokenRequest.self, context: context)
            let errors = PushTokenRules.validate(body.token)
            guard errors.isEmpty else { throw Problem.validation(errors) }
            return PushTokenView(try await tokens.register(body.platform, token: body.token, for: caller, at: now()))
        }
        router.add(NotificationsAPI.listPushTokens) { _, context in
            PushTokenListView(items: try await tokens.tokens(of: try context.caller()).map(PushTokenView.init))
        }
        router.add(NotificationsAPI.deletePushToken) { request, context -> HTTPResponse.Status in
            let caller = try context.caller()
            guard try await tokens.remove(try request.uuidParameter("pushTokenID", context: context), of: caller) else {
                throw Problem.notFound("No such push device.")
            }
            return .noContent
        }
    }
}
