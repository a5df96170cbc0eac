import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NotificationsDomain
import SurgeContracts
import SurgeRuntime

/// `POST /v1/email-provider/events`: the e-mail provider's reports of bounces and complaints, through the gateway
/// like every public route. Only a message signed with `EMAIL_WEBHOOK_SECRET` is read; without the secret configured,
/// every message is refused. Logs name the report, the kind and our mail, never the address or the secret.
struct EmailProviderEventsController {
    let verifier: WebhookVerifier?
    let bounces: EmailBounceStore
    let now: @Sendable () -> Date

    static let maxBody = 64 * 1024
    static let invalidSignature = Problem(
        slug: "invalid-webhook-signature", title: "Invalid webhook signature", status: .unauthorized,
        detail: "The message must be signed with the shared webhook secret (Standard Webhooks), within 5 minutes of now.")

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(NotificationsAPI.receiveEmailProviderEvent) { request, context -> HTTPResponse.Status in
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: Self.maxBody)
            } catch is NIOTooManyBytesError {
                throw Problem.tooLarge(limit: Self.maxBody)
            }
            let bytes = Array(body.readableBytesView)
            // The signature is checked on the real clock: a simulated one would refuse every fresh message.
            guard let verifier, let headers = WebhookVerifier.headers({ name in HTTPField.Name(name).flatMap { request.headers[$0] } }),
                verifier.isValid(headers, body: bytes, now: Date())
            else {
                context.logger.warning("E-mail provider report refused: bad or missing signature", metadata: ["configured": "\(verifier != nil)"])
                throw Self.invalidSignature
            }
            let event: EmailProviderEvent
            do {
                event = try SurgeJSON.decode(EmailProviderEvent.self, from: Data(bytes))
            } catch {
                throw Problem.malformedBody("The body is not an e-mail provider event: {\"type\", \"data\": {...}}.")
            }
            guard let bounce = event.bounce else { return .noContent }
            let recorded = try await bounces.record(bounce, reportID: headers.id, at: now())
            var metadata: Logger.Metadata = ["report": "\(headers.id)", "kind": "\(bounce.kind.rawValue)", "detail": "\(bounce.detail ?? "-")"]
            switch recorded {
            case .recorded(let mailID, let suppressed):
                metadata["mail"] = "\(mailID.map { "\($0)" } ?? "-")"
                metadata["suppressed"] = "\(suppressed)"
                context.logger.info("E-mail bounce recorded", metadata: metadata)
            case .alreadyRecorded:
                context.logger.debug("E-mail bounce already recorded", metadata: metadata)
            case .noAddress:
                throw Problem.validation(field: "data.to", "names no recipient, and `data.email_id` no mail of ours")
            }
            return .noContent
        }
    }
}
