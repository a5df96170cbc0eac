import Foundation

/// base64url without padding (RFC 4648 §5), as JWTs, JWKs and page cursors use it.
///
/// `encode` writes the text itself: every signed internal call and every page cursor goes through it, and Foundation's
/// base64 text translated to the URL alphabet cost more than the HMAC it encodes.
public enum Base64URL {
    public static func encode(_ data: Data) -> String {
        data.withUnsafeBytes { encode($0) }
    }

    /// Unpadded base64url of the bytes, written straight into the string (no base64 text to translate first).
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        let length = (bytes.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: length) { output in
            var position = 0
            var index = 0
            func emit(_ group: UInt32, shift: UInt32) {
                output[position] = alphabet[Int(group >> shift & 0x3F)]
                position += 1
            }
            while index + 3 <= bytes.count {
                let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                emit(group, shift: 18)
                emit(group, shift: 12)
                emit(group, shift: 6)
                emit(group, shift: 0)
                index += 3
            }
            let rest = bytes.count - index
            if rest > 0 {
                let group = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
                emit(group, shift: 18)
                emit(group, shift: 12)
                if rest == 2 { emit(group, shift: 6) }
            }
            return position
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

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
