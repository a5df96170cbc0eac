import Crypto
import Foundation
import NotificationsDomain

/// Signs a webhook message as the Standard Webhooks specification does, once per secret that is still valid.
enum WebhookSigner {
    static func signatureHeader(id: String, timestamp: Int, body: [UInt8], secrets: [WebhookSecret]) -> String {
        let content = WebhookSignature.signedContent(id: id, timestamp: timestamp, body: body)
        return WebhookSignature.header(secrets.map { secret in
            Array(HMAC<SHA256>.authenticationCode(for: content, using: SymmetricKey(data: secret.key)))
        })
    }

    static func newSecret() -> WebhookSecret {
        var generator = SystemRandomNumberGenerator()
        return WebhookSecret(key: (0..<WebhookSecret.byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
