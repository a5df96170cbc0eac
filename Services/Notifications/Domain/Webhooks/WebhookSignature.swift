import Foundation

/// A webhook subscription's signing secret as the Standard Webhooks specification writes it: `whsec_` and the
/// base64 of the key's bytes.
public struct WebhookSecret: Sendable, Hashable {
    public static let prefix = "whsec_"
    /// The specification asks for 24 to 64 bytes.
    public static let byteCount = 32

    public let key: [UInt8]

    public init(key: [UInt8]) {
        self.key = key
    }

    /// Reads `whsec_<base64>`; nil for anything else.
    public init?(_ text: String) {
        guard text.hasPrefix(Self.prefix), let data = Data(base64Encoded: String(text.dropFirst(Self.prefix.count))), !data.isEmpty else { return nil }
        key = Array(data)
    }

    public var text: String { Self.prefix + Data(key).base64EncodedString() }
}

/// What the Standard Webhooks specification signs and how the signatures travel: HMAC-SHA256 over
/// `<webhook-id>.<webhook-timestamp>.<body>`, sent as `v1,<base64>`, several separated by spaces (during a secret
/// rotation, one per secret). The HMAC itself is computed by the service.
public enum WebhookSignature {
    public static let idHeader = "webhook-id"
    public static let timestampHeader = "webhook-timestamp"
    public static let signatureHeader = "webhook-signature"
    static let version = "v1"

    /// The bytes every signature of one attempt covers.
    public static func signedContent(id: String, timestamp: Int, body: [UInt8]) -> [UInt8] {
        Array("\(id).\(timestamp).".utf8) + body
    }

    /// The `webhook-signature` header for these MACs, in order.
    public static func header(_ macs: [[UInt8]]) -> String {
        macs.map { "\(version),\(Data($0).base64EncodedString())" }.joined(separator: " ")
    }
}
