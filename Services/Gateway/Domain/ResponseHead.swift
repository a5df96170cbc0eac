/// An HTTP/1.1 answer's head read straight from the bytes a service sent, for the gateway's upstream client: a status
/// line `HTTP/1.1 200 OK` (or `HTTP/1.0`), header lines as `RequestHead` reads them (values may also hold bytes above
/// 0x7F, as RFC 9110's obs-text), each ended by CRLF. Where the body ends is read from at most one `Content-Length` of
/// digits or `Transfer-Encoding: chunked` alone; anything else (both, another coding, folded lines, bare LFs) is
/// `unsupported`, and the connection's answer cannot be trusted.
///
/// Hand-written because NIO's client codec (llhttp and `HTTPHeaders` on the way in, its encoder on the way out) was
/// about a tenth of the gateway's CPU per proxied call once the client's side was read as bytes (docs/gateway.md).
public struct ResponseHead: Sendable, Equatable {
    public enum Parsed: Sendable, Equatable {
        /// The head has not fully arrived.
        case incomplete
        case head(ResponseHead)
        case unsupported
    }

    /// How the body after the head is delimited, as the head announces it.
    public enum Framing: Sendable, Equatable {
        case length(Int)
        case chunked
        /// Neither: the body runs until the service closes the connection.
        case untilClose
    }

    public var status: Int
    /// The reason phrase, as sent.
    public var reason: String
    public var fields: [RequestHead.Field]
    /// The head's bytes, its closing empty line included: the body starts there.
    public var length: Int
    public var framing: Framing
    /// Whether the service keeps the connection open after this answer: HTTP/1.1 without `Connection: close`, or
    /// HTTP/1.0 with `Connection: keep-alive` (a body delimited by the connection's end ends it all the same).
    public var keepsAlive: Bool

    /// The value of the field `name` (lower-case); several fields of that name combined, comma-separated.
    public subscript(name: String) -> String? {
        fields.combinedValue(of: name)
    }

    /// Whether the answer to a request of `method` carries a body at all (RFC 9112 §6.3): never for `HEAD`, 1xx,
    /// 204 or 304, whatever its head announces.
    public func hasBody(forMethod method: String) -> Bool {
        !(method == "HEAD" || status < 200 || status == 204 || status == 304)
    }

    /// Parses the head at the start of `bytes`; `unsupported` once `bytes` hold `limit` bytes without a whole head.
    public static func parse(_ bytes: UnsafeRawBufferPointer, limit: Int = 65_536) -> Parsed {
        var reader = HeadReader(bytes: bytes)
        func cut() -> Parsed { reader.atEnd && bytes.count < limit ? .incomplete : .unsupported }
        guard let version = reader.visible(until: space) else { return cut() }
        let http11 = version.elementsEqual(Self.http11)
        guard http11 || version.elementsEqual(Self.http10) else { return .unsupported }
        // `200 OK`, or `200` without a reason.
        guard let rest = reader.line() else { return cut() }
        let code = rest.prefix(3)
        guard code.count == 3, code.allSatisfy(isDigit), rest.count == 3 || rest[rest.startIndex + 3] == space else { return .unsupported }
        let status = code.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        let reason = rest.dropFirst(4)
        guard reason.allSatisfy({ $0 == tab || $0 >= 0x20 && $0 != 0x7F }) else { return .unsupported }
        var fields: [RequestHead.Field] = []
        fields.reserveCapacity(16)
        var contentLength: Int?
        var chunked = false
        var keepsAlive = http11
        while true {
            guard let line = reader.line() else { return cut() }
            if line.isEmpty { break }
            guard let field = headerField(line, allowingObsoleteText: true) else { return .unsupported }
            switch field.name {
            case "transfer-encoding":
                guard !chunked, field.value.lowercased() == "chunked" else { return .unsupported }
                chunked = true
            case "content-length":
                guard contentLength == nil, (1...18).contains(field.value.utf8.count), field.value.utf8.allSatisfy(isDigit),
                    let length = Int(field.value)
                else { return .unsupported }
                contentLength = length
            case "connection":
                let options = field.value.lowercased().split(separator: ",").map { $0.trimmingSpaces }
                if options.contains("close") { keepsAlive = false } else if options.contains("keep-alive") { keepsAlive = true }
            default:
                break
            }
            fields.append(field)
        }
        if chunked && contentLength != nil { return .unsupported }
        let framing: Framing = chunked ? .chunked : contentLength.map { .length($0) } ?? .untilClose
        return .head(
            ResponseHead(
                status: status, reason: String(decoding: reason, as: UTF8.self), fields: fields, length: reader.offset, framing: framing,
                keepsAlive: keepsAlive))
    }

    private static let http11 = Array("HTTP/1.1".utf8)
    private static let http10 = Array("HTTP/1.0".utf8)
}

/// Reads a body sent with `Transfer-Encoding: chunked` (RFC 9112 §7.1) as its bytes arrive: chunk sizes in hex with
/// any extensions ignored, each chunk's data and CRLF, the last chunk, trailer lines (dropped) and the empty line.
public struct ChunkedBody: Sendable, Equatable {
    public struct Read: Sendable, Equatable {
        /// The bytes of `bytes` taken (the data and the framing around it); the rest is for the next read.
        public var consumed: Int
        /// Where, within `bytes`, the body's data is.
        public var data: [Range<Int>]
        /// The body has ended; bytes after `consumed` are not its.
        public var finished: Bool
    }

    public struct Malformed: Error, Sendable, Equatable {}

    private enum State: Sendable, Equatable {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailer
        case finished
    }

    private var state = State.size

    public init() {}

    public var isFinished: Bool { state == .finished }

    /// Reads what it can of `bytes`.
    public mutating func read(_ bytes: UnsafeRawBufferPointer) throws(Malformed) -> Read {
        var reader = HeadReader(bytes: bytes)
        var data: [Range<Int>] = []
        var consumed = 0
        while state != .finished {
            switch state {
            case .size:
                guard let line = reader.line() else {
                    if reader.atEnd && bytes.count - consumed < 1_024 { return Read(consumed: consumed, data: data, finished: false) }
                    throw Malformed()
                }
                let digits = line.prefix { $0 != UInt8(ascii: ";") && $0 != space && $0 != tab }
                guard (1...15).contains(digits.count), let size = Int(String(decoding: digits, as: UTF8.self), radix: 16) else { throw Malformed() }
                state = size == 0 ? .trailer : .data(remaining: size)
            case .data(let remaining):
                let available = min(remaining, bytes.count - reader.offset)
                guard available > 0 else { return Read(consumed: consumed, data: data, finished: false) }
                data.append(reader.offset..<reader.offset + available)
                reader.offset += available
                state = remaining == available ? .dataEnd : .data(remaining: remaining - available)
            case .dataEnd:
                guard let line = reader.line() else {
                    if reader.atEnd { return Read(consumed: consumed, data: data, finished: false) }
                    throw Malformed()
                }
                guard line.isEmpty else { throw Malformed() }
                state = .size
            case .trailer:
                guard let line = reader.line() else {
                    if reader.atEnd && bytes.count - consumed < 16_384 { return Read(consumed: consumed, data: data, finished: false) }
                    throw Malformed()
                }
                if line.isEmpty { state = .finished }
            case .finished:
                break
            }
            // A line read only in part is read again whole next time: what counts as taken ends at the last step.
            consumed = reader.offset
        }
        return Read(consumed: consumed, data: data, finished: true)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var value = self
        while let first = value.first, first == " " || first == "\t" { value = value.dropFirst() }
        while let last = value.last, last == " " || last == "\t" { value = value.dropLast() }
        return value
    }
}
