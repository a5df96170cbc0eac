import Crypto
import Foundation
import NotificationsDomain

/// Checks a webhook message signed as the Standard Webhooks specification says, the way `WebhookSigner` signs ours:
/// one of the `v1,<base64>` signatures must be the HMAC-SHA256, under the shared secret, of `<id>.<timestamp>.<body>`,
/// and the timestamp must be within `tolerance` of now (an old message replayed is refused). Resend's webhooks are
/// signed so by Svix, whose headers are `svix-id`, `svix-timestamp` and `svix-signature`; either set is read.
struct WebhookVerifier: Sendable {
    let secret: WebhookSecret
    static let tolerance: TimeInterval = 300

    struct Headers {
        var id: String
        var timestamp: String
        var signatures: String
    }

    /// The signing headers of a request, `webhook-*` or else `svix-*`; nil when a set is incomplete.
    static func headers(_ value: (String) -> String?) -> Headers? {
        for prefix in ["webhook-", "svix-"] {
            if let id = value(prefix + "id"), let timestamp = value(prefix + "timestamp"), let signatures = value(prefix + "signature") {
                return Headers(id: id, timestamp: timestamp, signatures: signatures)
            }
        }
        return nil
    }

    func isValid(_ headers: Headers, body: [UInt8], now: Date) -> Bool {
        guard let timestamp = Int(headers.timestamp), abs(Double(timestamp) - now.timeIntervalSince1970) <= Self.tolerance else { return false }
        let expected = Array(
            HMAC<SHA256>.authenticationCode(
                for: WebhookSignature.signedContent(id: headers.id, timestamp: timestamp, body: body), using: SymmetricKey(data: secret.key)))
        var matched = false
        for signature in headers.signatures.split(separator: " ") {
            let parts = signature.split(separator: ",", maxSplits: 1)
            guard parts.count == 2, parts[0] == "v1", let given = Data(base64Encoded: String(parts[1])) else { continue }
            // Every candidate is compared in full, in constant time: neither the match nor its place shows in the time taken.
            matched = Self.constantTimeEqual(Array(given), expected) || matched
        }
        return matched
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
