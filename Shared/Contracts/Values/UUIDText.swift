import Foundation

/// UUIDs to and from their 36-character text without Foundation's `sscanf` and `sprintf`: on Linux
/// `UUID(uuidString:)` and `uuidString` cost more than the rest of decoding an event's id, and every event, key and
/// route carries a few.
extension UUID {
    /// The canonical text form of ids in keys, subjects and JSON: lower-case hex, `8-4-4-4-12`.
    public var key: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    text[position] = Self.hexDigits[Int(byte >> 4)]
                    text[position + 1] = Self.hexDigits[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }

    /// Parses `8-4-4-4-12` hex digits in either case, what `UUID(uuidString:)` accepts from Surge's inputs; nil for
    /// anything else.
    public init?(text: some StringProtocol) {
        var text = String(text)
        guard let parsed = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    /// `init?(text:)` over UTF-8 bytes.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard bytes.count == 36 else { return nil }
        var result: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &result) { output -> Bool in
            var position = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard bytes[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = HexDigit.value(bytes[position]), let low = HexDigit.value(bytes[position + 1]) else { return false }
                output[index] = high << 4 | low
                position += 2
            }
            return true
        }
        return parsed ? UUID(uuid: result) : nil
    }

    /// PostgreSQL's order of uuids: their 16 bytes compared as unsigned numbers, which is also the order of `key`.
    public func precedesInByteOrder(_ other: UUID) -> Bool {
        withUnsafeBytes(of: uuid) { mine in withUnsafeBytes(of: other.uuid) { theirs in mine.lexicographicallyPrecedes(theirs) } }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

/// One hexadecimal digit's value, either case: UUIDs and JSON's `\u` escapes.
enum HexDigit {
    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
