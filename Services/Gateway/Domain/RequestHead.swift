/// An HTTP/1.1 request head read straight from the bytes a client sent, for the gateway's proxy in front of NIO's
/// decoder. It reads a strict subset of RFC 9112 and says `unsupported` for anything outside it, which the decoder then
/// reads as it always has: a request line `METHOD /target HTTP/1.1` (an upper-case method, an origin-form target of
/// visible ASCII), header lines `name: value` (a token name, a value of visible ASCII, spaces and tabs), each ended by
/// CRLF; at most one `Content-Length`, of digits, and no `Transfer-Encoding`, so where the request ends is never in doubt.
/// Folded lines, bare LFs, control or non-ASCII bytes, leading empty lines and other HTTP versions are unsupported.
///
/// Hand-written because NIO's decoder (llhttp) gives each head as `HTTPHeaders` that Hummingbird converts to `HTTPTypes`
/// (a `URLComponents` parse of the target among it): most of what a proxied read costs the gateway above a byte relay's
/// floor (docs/gateway.md, "The floor of a proxy on SwiftNIO").
public struct RequestHead: Sendable, Equatable {
    public struct Field: Sendable, Equatable {
        /// Lower-case, as HTTP/2 writes names: names are case-insensitive.
        public var name: String
        /// Without the spaces and tabs around it.
        public var value: String

        public init(name: String, value: String) {
            (self.name, self.value) = (name, value)
        }
    }

    public enum Parsed: Sendable, Equatable {
        /// The head has not fully arrived.
        case incomplete
        case head(RequestHead)
        /// Not in the subset (or longer than the limit): the decoder's to read.
        case unsupported
    }

    public var method: String
    public var target: String
    public var fields: [Field]
    /// The head's bytes, its closing empty line included: the body starts there.
    public var length: Int
    /// The announced body length; 0 without `Content-Length`.
    public var contentLength: Int

    /// The value of the field `name` (lower-case); several fields of that name combined, comma-separated, as
    /// `HTTPFields` combines them.
    public subscript(name: String) -> String? {
        fields.combinedValue(of: name)
    }

    /// Parses the head at the start of `bytes`; `unsupported` once `bytes` hold `limit` bytes without a whole head.
    public static func parse(_ bytes: UnsafeRawBufferPointer, limit: Int = 16_384) -> Parsed {
        var reader = HeadReader(bytes: bytes)
        guard let method = reader.token(until: space), !method.isEmpty, method.allSatisfy({ isUpper($0) }) else {
            return reader.atEnd && bytes.count < limit ? .incomplete : .unsupported
        }
        guard let target = reader.visible(until: space), target.first == slash else {
            return reader.atEnd && bytes.count < limit ? .incomplete : .unsupported
        }
        guard let version = reader.line(), version.elementsEqual(http11) else {
            return reader.atEnd && bytes.count < limit ? .incomplete : .unsupported
        }
        var fields: [Field] = []
        fields.reserveCapacity(16)
        var contentLength: Int?
        while true {
            guard let line = reader.line() else { return reader.atEnd && bytes.count < limit ? .incomplete : .unsupported }
            if line.isEmpty { break }
            guard let field = headerField(line) else { return .unsupported }
            switch field.name {
            case "transfer-encoding":
                return .unsupported
            case "content-length":
                guard contentLength == nil, (1...10).contains(field.value.utf8.count), field.value.utf8.allSatisfy(isDigit),
                    let length = Int(field.value)
                else { return .unsupported }
                contentLength = length
            default:
                break
            }
            fields.append(field)
        }
        return .head(
            RequestHead(
                method: String(decoding: method, as: UTF8.self), target: String(decoding: target, as: UTF8.self), fields: fields,
                length: reader.offset, contentLength: contentLength ?? 0))
    }

    private static let http11 = Array("HTTP/1.1".utf8)
}

extension [RequestHead.Field] {
    /// The value of the fields named `name` (lower-case), several combined, comma-separated; nil without one.
    func combinedValue(of name: String) -> String? {
        var combined: String?
        for field in self where field.name == name {
            combined = combined.map { $0 + ", " + field.value } ?? field.value
        }
        return combined
    }
}

/// A header line `name: value` (a token name, lower-cased; a value of visible ASCII, spaces and tabs, and with
/// `allowingObsoleteText` bytes above 0x7F, without the spaces and tabs around it); nil for anything else.
func headerField(_ line: Slice<UnsafeRawBufferPointer>, allowingObsoleteText: Bool = false) -> RequestHead.Field? {
    guard let colon = line.firstIndex(of: colon), colon > line.startIndex,
        line[line.startIndex..<colon].allSatisfy(isTokenByte)
    else { return nil }
    var value = line[(colon + 1)...]
    guard value.allSatisfy({ $0 == tab || (0x20...0x7E).contains($0) || (allowingObsoleteText && $0 >= 0x80) }) else { return nil }
    while let first = value.first, first == space || first == tab { value = value.dropFirst() }
    while let last = value.last, last == space || last == tab { value = value.dropLast() }
    let name = String(unsafeUninitializedCapacity: colon - line.startIndex) { output in
        for (index, byte) in line[line.startIndex..<colon].enumerated() { output[index] = isUpper(byte) ? byte | 0x20 : byte }
        return colon - line.startIndex
    }
    return RequestHead.Field(name: name, value: String(decoding: value, as: UTF8.self))
}

/// Reads forward through a head.
struct HeadReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0
    /// Set when a read ran out of bytes before what it looked for.
    var atEnd = false

    /// Token bytes up to `end` (consumed); nil at anything else.
    mutating func token(until end: UInt8) -> Slice<UnsafeRawBufferPointer>? {
        scan(until: end) { isTokenByte($0) }
    }

    /// Visible ASCII up to `end` (consumed); nil at anything else.
    mutating func visible(until end: UInt8) -> Slice<UnsafeRawBufferPointer>? {
        scan(until: end) { (0x21...0x7E).contains($0) }
    }

    /// The bytes up to the next CRLF (consumed); nil at a bare CR or LF, or when no CRLF has arrived.
    mutating func line() -> Slice<UnsafeRawBufferPointer>? {
        let start = offset
        while offset < bytes.count {
            switch bytes[offset] {
            case carriageReturn:
                guard offset + 1 < bytes.count else {
                    atEnd = true
                    return nil
                }
                guard bytes[offset + 1] == lineFeed else { return nil }
                let line = bytes[start..<offset]
                offset += 2
                return line
            case lineFeed:
                return nil
            default:
                offset += 1
            }
        }
        atEnd = true
        return nil
    }

    private mutating func scan(until end: UInt8, _ allowed: (UInt8) -> Bool) -> Slice<UnsafeRawBufferPointer>? {
        let start = offset
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == end {
                offset += 1
                return bytes[start..<offset - 1]
            }
            guard allowed(byte) else { return nil }
            offset += 1
        }
        atEnd = true
        return nil
    }
}

let space = UInt8(ascii: " ")
let tab = UInt8(ascii: "\t")
let colon = UInt8(ascii: ":")
let slash = UInt8(ascii: "/")
let carriageReturn = UInt8(ascii: "\r")
let lineFeed = UInt8(ascii: "\n")

func isUpper(_ byte: UInt8) -> Bool { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }
func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

/// `tchar` of RFC 9110 §5.6.2.
func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"),
        UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"),
        UInt8(ascii: "~"):
        true
    default: false
    }
}
