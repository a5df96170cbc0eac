import Crypto
import Foundation

/// What makes two requests "the same" for an idempotency key: method, path with query, and body. A JSON body is
/// compared by meaning, not bytes: a retry may serialize its keys in another order.
public enum IdempotencyFingerprint {
    public static func of(method: String, path: String, body: Data) -> Data {
        var hasher = SHA256()
        hasher.update(data: Data(method.utf8))
        hasher.update(data: [0])
        hasher.update(data: Data(path.utf8))
        hasher.update(data: [0])
        hasher.update(data: canonical(body))
        return Data(hasher.finalize())
    }

    static func canonical(_ body: Data) -> Data {
        guard let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            let sorted = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return body }
        return sorted
    }

    /// Keys are client-chosen: 1 to 255 visible ASCII characters.
    public static func isAcceptable(_ key: String) -> Bool {
        (1...255).contains(key.utf8.count) && key.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) }
    }
}
