import Foundation
import Hummingbird
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeContracts
import SurgeRuntime

/// Webhook subscriptions, each owned by the user who made it; another user's is 404.
struct WebhooksController {
    let client: PostgresClient
    let settings: WebhookSettings
    let clock: ServiceClock
    let logger: Logger

    struct Position: Codable, Sendable {
        var createdAt: Date
        var id: UUID
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(NotificationsAPI.createWebhook) { request, context -> EditedResponse<WebhookWithSecretView> in
            let caller = try context.caller()
            let body = try await request.decode(as: CreateWebhookRequest.self, context: context)
            do {
                try await WebhookTargetGuard(policy: settings.policy).check(body.url, requireResolution: false)
            } catch let refusal as WebhookTargetRefusal {
                throw Problem(
                    slug: "webhook-target-refused", title: "Webhook URL refused", status: .unprocessableContent, detail: "The URL \(refusal).",
                    errors: [FieldError(field: "url", message: refusal.description)])
            }
            if let groupID = body.groupID {
                // A group joined a moment ago may not have reached this service yet; one the caller is not in is 404.
                let member = try await client.withConnection { connection in
                    try await CatchUp.standard.until { try await WebhookStore(connection: connection, logger: logger).isMember(caller, of: groupID) }
                }
                guard member else { throw Problem.notFound("No such group.") }
            }
            let secret = WebhookSigner.newSecret()
            let created = try await client.transaction(logger: logger) { connection in
                let store = WebhookStore(connection: connection, logger: logger)
                guard try await store.count(ownedBy: caller) < WebhookStore.maxPerOwner else {
                    throw Problem.conflict(
                        "webhook-limit-reached", "An account may have at most \(WebhookStore.maxPerOwner) webhooks; delete one first.")
                }
                return try await store.create(UUID(), owner: caller, group: body.groupID, url: body.url, secret: secret, at: clock.now())
            }
            return EditedResponse(
                status: .created, headers: [.location: "/v1/webhooks/\(created.webhookID.key)"],
                response: WebhookWithSecretView(webhook: view(created, attempts: nil), secret: secret.text))
        }
        router.add(NotificationsAPI.listWebhooks) { request, context in
            let caller = try context.caller()
            let page = try PageRequest<Position>(request)
            let rows = try await client.withConnection { connection in
                try await WebhookStore(connection: connection, logger: logger).subscriptions(
                    ownedBy: caller, after: page.after.map { ($0.createdAt, $0.id) }, limit: page.limit + 1)
            }
            let paged = page.page(rows.map { view($0, attempts: nil) }) { Position(createdAt: $0.createdAt, id: $0.webhookID) }
            return WebhookPageView(items: paged.items, nextCursor: paged.nextCursor)
        }
        router.add(NotificationsAPI.getWebhook) { request, context in
            let caller = try context.caller()
            let id = try request.uuidParameter("webhookID", context: context)
            return try await client.withConnection { connection in
                let store = WebhookStore(connection: connection, logger: logger)
                guard let subscription = try await store.subscription(id, ownedBy: caller) else { throw Problem.notFound("No such webhook.") }
                return view(subscription, attempts: try await store.attempts(of: id))
            }
        }
        router.add(NotificationsAPI.deleteWebhook) { request, context in
            let caller = try context.caller()
            let id = try request.uuidParameter("webhookID", context: context)
            let deleted = try await client.withConnection { connection in
                try await WebhookStore(connection: connection, logger: logger).delete(id, ownedBy: caller)
            }
            guard deleted else { throw Problem.notFound("No such webhook.") }
            return Response(status: .noContent)
        }
        router.add(NotificationsAPI.rotateWebhookSecret) { request, context in
            let caller = try context.caller()
            let id = try request.uuidParameter("webhookID", context: context)
            let secret = WebhookSigner.newSecret()
            let rotated = try await client.withConnection { connection in
                try await WebhookStore(connection: connection, logger: logger).rotate(
                    id, ownedBy: caller, to: secret, graceUntil: clock.now().addingTimeInterval(settings.rotationGrace))
            }
            guard let rotated else { throw Problem.notFound("No such webhook.") }
            return WebhookWithSecretView(webhook: view(rotated, attempts: nil), secret: secret.text)
        }
        router.add(NotificationsAPI.enableWebhook) { request, context in
            let caller = try context.caller()
            let id = try request.uuidParameter("webhookID", context: context)
            let enabled = try await client.withConnection { connection in
                try await WebhookStore(connection: connection, logger: logger).enable(id, ownedBy: caller)
            }
            guard let enabled else { throw Problem.notFound("No such webhook.") }
            return view(enabled, attempts: nil)
        }
    }

    private func view(_ subscription: WebhookSubscription, attempts: [WebhookAttempt]?) -> WebhookView {
        let now = clock.now()
        return WebhookView(
            webhookID: subscription.webhookID, url: subscription.url, groupID: subscription.groupID,
            status: subscription.disabledAt == nil ? .active : .disabled, disabledReason: subscription.disabledReason, disabledAt: subscription.disabledAt,
            failingSince: subscription.failingSince, lastFailure: subscription.lastFailure, lastFailureAt: subscription.lastFailureAt,
            previousSecretValidUntil: subscription.previousSecretUntil.flatMap { $0 > now ? $0 : nil }, createdAt: subscription.createdAt,
            recentAttempts: attempts?.map { attempt in
                WebhookAttemptView(
                    deliveryID: attempt.deliveryID, notificationID: attempt.notificationID, attempt: attempt.attempt, attemptedAt: attempt.attemptedAt,
                    statusCode: attempt.statusCode, outcome: attempt.outcome, detail: attempt.detail, durationMilliseconds: attempt.durationMilliseconds)
            })
    }
}
