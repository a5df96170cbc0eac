import Foundation

/// base64url without padding (RFC 4648 §5), as JWTs, JWKs and page cursors use it.
///
/// The alphabet is swapped byte by byte: every signed internal call is checked with `encode`, and Foundation's
/// `replacingOccurrences` (three string searches through NSString) cost more than the HMAC itself.
public enum Base64URL {
    public static func encode(_ data: Data) -> String {
        let base64 = data.base64EncodedData()
        return String(unsafeUninitializedCapacity: base64.count) { buffer in
            var count = 0
            for byte in base64 where byte != UInt8(ascii: "=") {
                buffer[count] = byte == UInt8(ascii: "+") ? UInt8(ascii: "-") : byte == UInt8(ascii: "/") ? UInt8(ascii: "_") : byte
                count += 1
            }
            return count
        }
    }

    /// The bytes of base64url text, padded or not; nil when it is not base64url.
    public static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = Data(capacity: text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "+"), UInt8(ascii: "/"): return nil
            case UInt8(ascii: "-"): base64.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): base64.append(UInt8(ascii: "/"))
            default: base64.append(byte)
            }
        }
        base64.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - base64.count % 4) % 4))
        return Data(base64Encoded: base64)
    }
}
