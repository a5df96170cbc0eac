import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny HTTP/1.1 client on a plain TCP socket, for the requests a well-behaved client library will not send: a
/// body in pieces seconds apart, hand-made chunked encoding, several requests in one write, a request cut off
/// mid-headers, a garbage request line, headers far too large.
///
/// Each exchange runs on its own thread (blocking socket calls must stay off the cooperative pool) and is bridged
/// back with a continuation. While it waits between pieces it keeps reading, so a response the server sends before
/// the whole request has arrived is seen as soon as it is written.
public struct RawHTTP: Sendable {
    public let host: String
    public let port: Int

    /// `host` is an IPv4 address.
    public init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    /// The HTTP port of a started service or gateway.
    public init(_ process: ServiceProcess) throws {
        self.init(port: try process.port)
    }

    // MARK: What to send

    /// Bytes written after a pause.
    public struct Piece: Sendable {
        public var pause: Duration
        public var bytes: [UInt8]

        public init(_ bytes: [UInt8], after pause: Duration = .zero) {
            self.bytes = bytes
            self.pause = pause
        }

        public init(_ text: String, after pause: Duration = .zero) {
            self.init(Array(text.utf8), after: pause)
        }
    }

    /// What happens once every piece is written.
    public enum Finish: Sendable {
        /// Keep the connection open and read until the expected responses arrived, the server closed, or the read
        /// timeout passed.
        case read
        /// Shut down our sending side (the server reads end of stream), then read as for `read`.
        case halfClose
        /// Close at once without reading: a client that vanished mid-request.
        case close
    }

    // MARK: What came back

    public struct Response: Sendable, CustomStringConvertible {
        public var version: String
        public var status: Int
        public var reason: String
        public var headers: [Header]
        /// The body, de-chunked.
        public var body: [UInt8]

        public struct Header: Sendable {
            public var name: String
            public var value: String
        }

        /// The first value of a header, by case-insensitive name.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        public var contentType: String? { header("content-type") }
        public var isProblem: Bool { contentType?.lowercased().hasPrefix("application/problem+json") == true }
        public var text: String { String(decoding: body, as: UTF8.self) }

        public var description: String {
            let shown = text.count > 300 ? String(text.prefix(300)) + "…" : text
            return "\(status) \(reason) [content-type: \(contentType ?? "none")] \(shown)"
        }
    }

    public struct Exchange: Sendable, CustomStringConvertible {
        /// Complete final responses (interim 1xx responses are not counted), in order.
        public var responses: [Response]
        /// Every byte the server sent.
        public var received: [UInt8]
        /// The server closed (or reset) the connection.
        public var peerClosed: Bool
        /// Why not every piece could be written (the server closed or stopped reading), if so.
        public var sendError: String?
        /// Fewer responses than expected arrived before the read timeout.
        public var timedOut: Bool
        /// How many bytes of the request were written.
        public var bytesSent: Int

        public var response: Response? { responses.first }
        public var status: Int? { responses.first?.status }
        public var receivedText: String { String(decoding: received, as: UTF8.self) }

        public var description: String {
            var parts = ["\(responses.count) response(s)"]
            parts += responses.map { "  \($0)" }
            if responses.isEmpty && !received.isEmpty { parts.append("  raw: \(receivedText.prefix(300))") }
            if peerClosed { parts.append("peer closed") }
            if timedOut { parts.append("timed out") }
            if let sendError { parts.append("send stopped: \(sendError) after \(bytesSent) bytes") }
            return parts.joined(separator: "\n")
        }
    }

    public struct ConnectError: Error, CustomStringConvertible {
        public let description: String
    }

    // MARK: Building requests

    /// A request head (request line, headers, blank line). `Host` is added unless given; nothing else is.
    public func head(_ method: String, _ target: String, headers: [(String, String)] = [], version: String = "HTTP/1.1") -> [UInt8] {
        var text = "\(method) \(target) \(version)\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { text += "Host: \(host):\(port)\r\n" }
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// A whole request; `Content-Length` is added for a body unless a length or transfer encoding is given.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil) -> [UInt8] {
        var headers = headers
        let framed = headers.contains { ["content-length", "transfer-encoding"].contains($0.0.lowercased()) }
        if let body, !framed { headers.append(("Content-Length", String(body.count))) }
        return head(method, target, headers: headers) + (body ?? [])
    }

    /// `body` in chunked transfer coding, `size` bytes a chunk, with the terminating zero chunk when `terminate`.
    public static func chunked(_ body: [UInt8], size: Int, terminate: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(body.count + body.count / max(size, 1) * 8 + 8)
        var index = 0
        while index < body.count {
            let end = min(index + size, body.count)
            out += Array(String(end - index, radix: 16).utf8) + [13, 10]
            out += body[index..<end]
            out += [13, 10]
            index = end
        }
        if terminate { out += Array("0\r\n\r\n".utf8) }
        return out
    }

    /// One chunk of chunked transfer coding (an empty one is the terminator).
    public static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        bytes.isEmpty ? Array("0\r\n\r\n".utf8) : Array(String(bytes.count, radix: 16).utf8) + [13, 10] + bytes + [13, 10]
    }

    // MARK: Exchanging

    /// Connects, writes each piece after its pause, then finishes as asked. Returns what came back.
    public func exchange(
        _ pieces: [Piece], expecting count: Int = 1, readTimeout: Duration = .seconds(10), finish: Finish = .read
    ) async throws -> Exchange {
        let host = self.host
        let port = self.port
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result {
                        try RawHTTP.run(host: host, port: port, pieces: pieces, expecting: count, readTimeout: readTimeout, finish: finish)
                    })
            }
            thread.name = "raw-http"
            thread.start()
        }
    }

    /// One request sent whole, one response read.
    public func send(_ bytes: [UInt8], readTimeout: Duration = .seconds(10)) async throws -> Exchange {
        try await exchange([Piece(bytes)], readTimeout: readTimeout)
    }

    // MARK: The socket work, on a thread of its own

    private static func run(
        host: String, port: Int, pieces: [Piece], expecting count: Int, readTimeout: Duration, finish: Finish
    ) throws -> Exchange {
        let fd = try connectSocket(host: host, port: port)
        defer { close(fd) }
        var state = ReadState()
        var sendError: String?
        var bytesSent = 0

        sending: for piece in pieces {
            if piece.pause > .zero {
                let until = ContinuousClock.now + piece.pause
                while ContinuousClock.now < until {
                    pollAndRead(fd, &state, events: Int16(POLLIN), until: until)
                }
            }
            var offset = 0
            let stallDeadline = { ContinuousClock.now + readTimeout }
            var deadline = stallDeadline()
            while offset < piece.bytes.count {
                let written = piece.bytes.withUnsafeBytes { raw in
                    sendBytes(fd, raw.baseAddress! + offset, raw.count - offset)
                }
                if written > 0 {
                    offset += written
                    bytesSent += written
                    deadline = stallDeadline()
                    continue
                }
                let error = errno
                if written < 0 && error != EAGAIN && error != EWOULDBLOCK && error != EINTR {
                    sendError = String(cString: strerror(error))
                    break sending
                }
                // The socket buffer is full: read while waiting, so a server that answered early is not blocked.
                if ContinuousClock.now >= deadline {
                    sendError = "the server stopped reading"
                    break sending
                }
                pollAndRead(fd, &state, events: Int16(POLLIN) | Int16(POLLOUT), until: min(deadline, ContinuousClock.now + .milliseconds(200)))
                if state.peerClosed && state.readError != nil {
                    sendError = state.readError
                    break sending
                }
            }
        }

        switch finish {
        case .close:
            break
        case .read, .halfClose:
            if case .halfClose = finish { shutdown(fd, Int32(SHUT_WR)) }
            let deadline = ContinuousClock.now + readTimeout
            while !state.peerClosed && ContinuousClock.now < deadline && parse(state.buffer, peerClosed: false).count < count {
                pollAndRead(fd, &state, events: Int16(POLLIN), until: deadline)
            }
        }
        let responses = parse(state.buffer, peerClosed: state.peerClosed)
        return Exchange(
            responses: responses, received: state.buffer, peerClosed: state.peerClosed, sendError: sendError,
            timedOut: finish != .close && responses.count < count && !state.peerClosed, bytesSent: bytesSent)
    }

    private struct ReadState {
        var buffer: [UInt8] = []
        var peerClosed = false
        var readError: String?
    }

    private static func connectSocket(host: String, port: Int) throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw ConnectError(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw ConnectError(description: "not an IPv4 address: \(host)")
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw ConnectError(description: "connect to \(host):\(port): \(message)")
        }
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    private static func sendBytes(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.send(fd, pointer, count, Int32(MSG_NOSIGNAL))
        #else
        return Darwin.send(fd, pointer, count, 0)
        #endif
    }

    /// Waits (until `until` at the latest) for the socket to be readable (or writable, if asked), and reads whatever
    /// is there.
    private static func pollAndRead(_ fd: Int32, _ state: inout ReadState, events: Int16, until: ContinuousClock.Instant) {
        if state.peerClosed {
            // Nothing more to read; only honour the wait so pauses keep their length.
            let remaining = until - ContinuousClock.now
            if remaining > .zero { Thread.sleep(forTimeInterval: min(seconds(remaining), 0.05)) }
            return
        }
        let remaining = until - ContinuousClock.now
        let milliseconds = max(0, min(Int32(seconds(remaining) * 1000) + 1, 1000))
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        guard ready > 0, descriptor.revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let read = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if read > 0 {
                state.buffer += chunk[0..<read]
                continue
            }
            if read == 0 {
                state.peerClosed = true
            } else {
                let error = errno
                if error == EAGAIN || error == EWOULDBLOCK || error == EINTR { return }
                state.peerClosed = true
                state.readError = String(cString: strerror(error))
            }
            return
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    // MARK: Parsing responses

    /// The complete final responses at the start of `bytes`. A response without a length ends when the peer closed.
    static func parse(_ bytes: [UInt8], peerClosed: Bool) -> [Response] {
        var responses: [Response] = []
        var index = 0
        while index < bytes.count {
            guard let headEnd = find([13, 10, 13, 10], in: bytes, from: index) else { break }
            let headText = String(decoding: bytes[index..<headEnd], as: UTF8.self)
            var lines = headText.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst()
            let statusParts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else { break }
            let headers = lines.compactMap { line -> Response.Header? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return Response.Header(
                    name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            var response = Response(
                version: String(statusParts[0]), status: status, reason: statusParts.count > 2 ? String(statusParts[2]) : "",
                headers: headers, body: [])
            var bodyStart = headEnd + 4
            if (100..<200).contains(status) && status != 101 {
                index = bodyStart
                continue
            }
            if status == 204 || status == 304 {
                index = bodyStart
            } else if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
                var body: [UInt8] = []
                var complete = false
                while let lineEnd = find([13, 10], in: bytes, from: bodyStart) {
                    let sizeText = String(decoding: bytes[bodyStart..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
                    guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { break }
                    if size == 0 {
                        // Trailers, then a blank line.
                        guard let end = find([13, 10, 13, 10], in: bytes, from: lineEnd) else { break }
                        bodyStart = end + 4
                        complete = true
                        break
                    }
                    let dataStart = lineEnd + 2
                    guard dataStart + size + 2 <= bytes.count else { break }
                    body += bytes[dataStart..<dataStart + size]
                    bodyStart = dataStart + size + 2
                }
                guard complete else { break }
                response.body = body
                index = bodyStart
            } else if let length = response.header("content-length").flatMap({ Int($0) }) {
                guard bodyStart + length <= bytes.count else { break }
                response.body = Array(bytes[bodyStart..<bodyStart + length])
                index = bodyStart + length
            } else {
                guard peerClosed else { break }
                response.body = Array(bytes[bodyStart...])
                index = bytes.count
            }
            responses.append(response)
        }
        return responses
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count - start, start >= 0 else { return nil }
        var index = start
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == needle[0] {
                var matched = true
                for offset in 1..<needle.count where haystack[index + offset] != needle[offset] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }
}
