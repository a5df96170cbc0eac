import Foundation
import Hummingbird
import NotificationsDomain
import SurgeContracts
import SurgeRuntime

/// `POST /internal/mail`: identity hands over an account mail (it may carry a link with a token). Internal only: the
/// gateway routes no such path, and like every route here it answers only a call signed with `INTERNAL_AUTH_SECRET`.
struct MailController {
    let store: EmailDeliveryStore
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.post(RouterPath(AccountMail.path)) { request, context -> HTTPResponse.Status in
            let mail = try await request.decode(as: AccountMail.self, context: context)
            guard let rendered = MailTemplates.render(mail) else {
                throw Problem.validation(field: "kind", "lacks what a \(mail.kind.rawValue) mail needs")
            }
            try await store.enqueue(mail.mailID, kind: mail.kind.rawValue, to: mail.to, rendered, at: now())
            return .accepted
        }
    }
}
