import Foundation
import Logging
import NotificationsDomain
import SurgeContracts
import SurgeRuntime

/// E-mail through an HTTP provider API of Resend's shape: `POST {EMAIL_PROVIDER_URL}` with `authorization: Bearer
/// {EMAIL_PROVIDER_TOKEN}` and `{"from", "to": [...], "subject", "text", "html"}`; the mail's id goes as the
/// `Idempotency-Key`, so a retried send is not sent twice by a provider that honours it. The body holds the mail,
/// links and their tokens included: it is never logged.
struct EmailChannel: DeliveryChannel {
    struct Settings: Sendable {
        var endpoint: String
        var token: String
        var from: String
        var interval: Duration

        /// Off unless both the endpoint and the token are given; one without the other is a configuration error.
        static func from(_ reader: EnvironmentReader) throws -> Settings? {
            let interval = Duration.milliseconds(try reader.int("EMAIL_INTERVAL_MS", default: 1000, range: 10...60_000))
            switch (reader.string("EMAIL_PROVIDER_URL"), reader.string("EMAIL_PROVIDER_TOKEN")) {
            case (nil, nil):
                return nil
            case (let endpoint?, let token?):
                guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme), url.host != nil else {
                    throw ConfigurationError(variable: "EMAIL_PROVIDER_URL", problem: "must be an http(s) URL")
                }
                return Settings(endpoint: endpoint, token: token, from: reader.string("EMAIL_FROM", default: "Surge <no-reply@surge.example>"), interval: interval)
            case (nil, _?):
                throw ConfigurationError(variable: "EMAIL_PROVIDER_URL", problem: "is required with EMAIL_PROVIDER_TOKEN")
            case (_?, nil):
                throw ConfigurationError(variable: "EMAIL_PROVIDER_TOKEN", problem: "is required with EMAIL_PROVIDER_URL")
            }
        }
    }

    struct Addressed: Sendable {
        var mailID: UUID
        var mail: RenderedMail
    }

    let settings: Settings
    let http: ProviderHTTP
    let logger: Logger

    func send(_ message: Addressed, to address: String) async -> DeliveryOutcome {
        struct Body: Encodable {
            var from: String
            var to: [String]
            var subject: String
            var text: String
            var html: String
        }
        do {
            let body = try SurgeJSON.apiEncode(
                Body(from: settings.from, to: [address], subject: message.mail.subject, text: message.mail.text, html: message.mail.html))
            let answer = try await http.post(
                settings.endpoint,
                headers: [
                    "authorization": "Bearer \(settings.token)", "content-type": "application/json",
                    "idempotency-key": message.mailID.uuidString.lowercased(),
                ],
                body: body)
            return ProviderResponse.email(
                status: answer.status, body: answer.body, retryAfter: ProviderResponse.retryAfter(answer.headers.first(name: "retry-after"), now: Date()))
        } catch {
            logger.warning("E-mail provider unreachable", metadata: ["error": "\(type(of: error))"])
            return .retry(after: nil, reason: "email-unreachable")
        }
    }
}
