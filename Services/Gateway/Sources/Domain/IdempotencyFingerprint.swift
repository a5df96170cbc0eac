import Crypto
import Foundation

/// What makes two requests "the same" for an idempotency key: method, path with query, and body.
public enum IdempotencyFingerprint {
    public static func of(method: String, path: String, body: Data) -> Data {
        var hasher = SHA256()
        hasher.update(data: Data(method.utf8))
        hasher.update(data: [0])
        hasher.update(data: Data(path.utf8))
        hasher.update(data: [0])
        hasher.update(data: body)
        return Data(hasher.finalize())
    }

    /// Keys are client-chosen: 1 to 255 visible ASCII characters.
    public static func isAcceptable(_ key: String) -> Bool {
        (1...255).contains(key.utf8.count) && key.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) }
    }
}
