import GatewayDomain
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// The gateway's HTTP/1.1 client for the services behind it: keep-alive connections per event loop and upstream, a
/// request written as bytes with one flush, the answer's head read by `ResponseHead` and its body collected into one
/// buffer (or streamed once it outgrows `bufferLimit`: photos, exports).
///
/// Hand-written because AsyncHTTPClient's per-request machinery (URL parsing, tracing attributes, request state
/// machines, a task per request) cost about 190 µs of CPU per proxied call, three times the rest of the gateway's
/// work on it (docs/architecture.md, "The gateway's hop"). This does only what the gateway needs: no redirects,
/// cookies, proxies or HTTP/2, and a request is never retried (the caller fails over only when no connection was made).
final class UpstreamClient: Sendable {
    /// Where a service listens: `http(s)://host[:port]`, and a path its routes sit under, if any.
    struct Endpoint: Hashable, Sendable {
        var host: String
        var port: Int
        var tls: Bool
        /// Put before every request's target: "" or a path such as `/progress`.
        var pathPrefix: String

        init?(url: String) {
            let tls = url.hasPrefix("https://")
            guard tls || url.hasPrefix("http://") else { return nil }
            let rest = url.dropFirst(tls ? 8 : 7)
            let authority = rest.prefix { $0 != "/" }
            pathPrefix = String(rest.dropFirst(authority.count).reversed().drop { $0 == "/" }.reversed())
            guard !authority.isEmpty, !pathPrefix.contains("?"), !pathPrefix.contains("#") else { return nil }
            if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
                guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else { return nil }
                host = String(authority[..<colon])
                self.port = port
            } else {
                host = String(authority)
                port = tls ? 443 : 80
            }
            host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            guard !host.isEmpty else { return nil }
            self.tls = tls
        }

        var hostHeader: String { port == (tls ? 443 : 80) ? host : "\(host):\(port)" }
    }

    struct Request: Sendable {
        var method: HTTPMethod
        var target: String
        var headers: HeaderLines
        var body: ByteBuffer?

        init(method: HTTPMethod = .GET, target: String, headers: HeaderLines = [:], body: ByteBuffer? = nil) {
            (self.method, self.target, self.headers, self.body) = (method, target, headers, body)
        }
    }

    /// A request's header lines as they go on the wire (`name: value` and a line break each), written once where the
    /// request is made. `Host`, `Content-Length` and `Transfer-Encoding` are the client's own to write: never add them.
    struct HeaderLines: Sendable, ExpressibleByDictionaryLiteral {
        private(set) var bytes: ByteBuffer

        init() {
            bytes = ByteBuffer()
            bytes.reserveCapacity(512)
        }

        init(dictionaryLiteral elements: (String, String)...) {
            self.init()
            for (name, value) in elements { add(name, value) }
        }

        mutating func add(_ name: String, _ value: String) {
            bytes.writeString(name)
            bytes.writeStaticString(": ")
            bytes.writeString(value)
            bytes.writeStaticString("\r\n")
        }
    }

    struct Response: Sendable {
        var status: HTTPResponseStatus
        var headers: Fields
        var body: Body
    }

    /// An answer's header fields, names in lower case, in the order sent.
    struct Fields: Sendable, Sequence {
        var list: [RequestHead.Field]

        /// The first field named `name` (lower-case).
        func first(name: String) -> String? {
            list.first { $0.name == name }?.value
        }

        func makeIterator() -> some IteratorProtocol<(name: String, value: String)> {
            list.lazy.map { ($0.name, $0.value) }.makeIterator()
        }
    }

    enum Body: Sendable {
        case buffered(ByteBuffer)
        case streamed(AsyncThrowingStream<ByteBuffer, any Error>)

        /// The whole body; `Failure.tooLarge` past `limit` bytes.
        func collect(upTo limit: Int) async throws -> ByteBuffer {
            switch self {
            case .buffered(let buffer):
                guard buffer.readableBytes <= limit else { throw Failure.tooLarge }
                return buffer
            case .streamed(let parts):
                var collected = ByteBuffer()
                for try await var part in parts {
                    guard collected.readableBytes + part.readableBytes <= limit else { throw Failure.tooLarge }
                    collected.writeBuffer(&part)
                }
                return collected
            }
        }
    }

    enum Failure: Error, Equatable {
        /// An `https://` endpoint on a client made without `tls`.
        case tlsNotConfigured
        case timedOut
        case connectionClosed
        case tooLarge
        /// The service's bytes are not an HTTP/1.1 answer `ResponseHead` reads, or more came than was asked for.
        case malformedAnswer
    }

    static let connectTimeout: TimeAmount = .seconds(2)
    /// Idle connections kept per event loop and upstream; more are closed when they come back.
    static let idleLimit = 128

    private let pools: [ObjectIdentifier: Pool]
    private let loops: [any EventLoop]
    private let next = Atomic<Int>(0)
    private let bufferLimit: Int
    private let tls: NIOSSLContext?

    /// `tls`: whether any upstream is `https://` (the system's trust roots cost the process a few MiB, so they are
    /// loaded only then).
    init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, bufferLimit: Int = 1 << 20, tls: Bool = false) throws {
        var loops: [any EventLoop] = []
        for loop in group.makeIterator() { loops.append(loop) }
        self.loops = loops
        self.pools = Dictionary(uniqueKeysWithValues: loops.map { (ObjectIdentifier($0), Pool(loop: $0)) })
        self.bufferLimit = bufferLimit
        self.tls = tls ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
    }

    /// How an exchange ends: the service's answer, or why there is none. Runs on the event loop the request was sent from.
    typealias Completion = (Result<Response, any Error>) -> Void

    /// Sends `request` to `endpoint` from a task, on `loop` or the next loop in turn.
    func execute(_ request: Request, to endpoint: Endpoint, on loop: (any EventLoop)? = nil, timeout: TimeAmount) async throws -> Response {
        let loop = loop ?? loops[next.add(1, ordering: .relaxed).oldValue % loops.count]
        let promise = loop.makePromise(of: Response.self)
        loop.execute { self.send(request, to: endpoint, on: loop, timeout: timeout, promise.completeWith) }
        return try await promise.futureResult.get()
    }

    /// Sends `request` to `endpoint` from `loop`, the client connection's (so the answer is written from where it
    /// arrives): called on `loop`, and `completion` runs there. No future: callbacks cost a proxied call less than the
    /// futures they replaced (allocations and generic metadata lookups).
    func send(_ request: Request, to endpoint: Endpoint, on loop: any EventLoop, timeout: TimeAmount, _ completion: @escaping Completion) {
        loop.preconditionInEventLoop()
        if endpoint.tls && self.tls == nil { return completion(.failure(Failure.tlsNotConfigured)) }
        let (bufferLimit, tls) = (self.bufferLimit, endpoint.tls ? self.tls : nil)
        if let pool = pools[ObjectIdentifier(loop)] {
            return pool.send(request, to: endpoint, timeout: timeout, bufferLimit: bufferLimit, tls: tls, completion)
        }
        // A loop of another group: the exchange runs on one of this client's, and its end comes back.
        let pool = pools[ObjectIdentifier(loops[next.add(1, ordering: .relaxed).oldValue % loops.count])]!
        let back = NIOLoopBound(completion, eventLoop: loop)
        pool.loop.execute {
            pool.send(request, to: endpoint, timeout: timeout, bufferLimit: bufferLimit, tls: tls) { result in loop.execute { back.value(result) } }
        }
    }

    /// Closes every idle connection.
    func shutdown() async {
        for pool in pools.values {
            try? await pool.loop.submit { pool.closeIdle() }.get()
        }
    }

    /// One event loop's connections. Everything here runs on `loop`.
    private final class Pool: Sendable {
        let loop: any EventLoop
        private let idle: NIOLoopBoundBox<[Endpoint: [Connection]]>

        init(loop: any EventLoop) {
            self.loop = loop
            idle = .makeBoxSendingValue([:], as: [Endpoint: [Connection]].self, eventLoop: loop)
        }

        func send(
            _ request: Request, to endpoint: Endpoint, timeout: TimeAmount, bufferLimit: Int, tls: NIOSSLContext?,
            _ completion: @escaping Completion
        ) {
            while let connection = idle.value[endpoint]?.popLast() {
                if connection.channel.isActive { return connection.handler.send(request, timeout: timeout, completion) }
            }
            var bootstrap = ClientBootstrap(group: loop).connectTimeout(UpstreamClient.connectTimeout)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
            bootstrap = bootstrap.channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: endpoint.host))
                    }
                    try channel.pipeline.syncOperations.addHandler(UpstreamHandler(bufferLimit: bufferLimit, endpoint: endpoint))
                }
            }
            bootstrap.connect(host: endpoint.host, port: endpoint.port).assumeIsolated().whenComplete { result in
                switch result {
                case .failure(let error):
                    completion(.failure(error))
                case .success(let channel):
                    do {
                        let handler = try channel.pipeline.syncOperations.handler(type: UpstreamHandler.self)
                        let connection = Connection(channel: channel, handler: handler)
                        handler.onIdle = { self.giveBack(connection, to: endpoint) }
                        handler.send(request, timeout: timeout, completion)
                    } catch {
                        completion(.failure(error))
                        channel.close(promise: nil)
                    }
                }
            }
        }

        private func giveBack(_ connection: Connection, to endpoint: Endpoint) {
            guard connection.channel.isActive else { return }
            if idle.value[endpoint, default: []].count < UpstreamClient.idleLimit {
                idle.value[endpoint, default: []].append(connection)
            } else {
                connection.channel.close(promise: nil)
            }
        }

        func closeIdle() {
            for connection in idle.value.values.joined() { connection.channel.close(promise: nil) }
            idle.value = [:]
        }
    }

    private final class Connection {
        let channel: any Channel
        let handler: UpstreamHandler

        init(channel: any Channel, handler: UpstreamHandler) {
            (self.channel, self.handler) = (channel, handler)
        }
    }
}

/// One upstream connection's exchanges, one at a time: writes a request, reads its answer, then offers the connection
/// back (`onIdle`) unless the service asked to close it (the gateway's requests never do).
private final class UpstreamHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Framing {
        case length(remaining: Int)
        case chunked(ChunkedBody)
        case untilClose

        var endsWithConnection: Bool {
            if case .untilClose = self { true } else { false }
        }
    }

    private enum State {
        case idle
        case awaitingHead(UpstreamClient.Completion, method: String)
        case buffering(UpstreamClient.Completion, ResponseHead, Framing, ByteBuffer)
        case streaming(AsyncThrowingStream<ByteBuffer, any Error>.Continuation, ResponseHead, Framing)
        case closed
    }

    private let bufferLimit: Int
    private let hostHeader: String
    private let pathPrefix: String
    private var state = State.idle
    /// What arrived and is not read yet.
    private var received: ByteBuffer?
    private var context: ChannelHandlerContext?
    /// When the exchange in flight times out.
    private var deadline: NIODeadline?
    /// The connection's one timer and when it fires. It is re-armed only when it fires during an exchange whose
    /// deadline is later, rather than scheduled and cancelled per exchange (that cost a proxied call more than the rest
    /// of the exchange's bookkeeping).
    private var timer: (task: Scheduled<Void>, at: NIODeadline)?
    var onIdle: (() -> Void)?

    init(bufferLimit: Int, endpoint: UpstreamClient.Endpoint) {
        (self.bufferLimit, self.hostHeader, self.pathPrefix) = (bufferLimit, endpoint.hostHeader, endpoint.pathPrefix)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func send(_ request: UpstreamClient.Request, timeout: TimeAmount, _ completion: @escaping UpstreamClient.Completion) {
        guard case .idle = state, let context else {
            completion(.failure(UpstreamClient.Failure.connectionClosed))
            return
        }
        state = .awaitingHead(completion, method: request.method.rawValue)
        deadline = .now() + timeout
        armTimer(context: context)
        var bytes = context.channel.allocator.buffer(capacity: 1_024 + (request.body?.readableBytes ?? 0))
        bytes.writeString(request.method.rawValue)
        bytes.writeStaticString(" ")
        bytes.writeString(pathPrefix)
        bytes.writeString(request.target)
        bytes.writeStaticString(" HTTP/1.1\r\nhost: ")
        bytes.writeString(hostHeader)
        bytes.writeStaticString("\r\n")
        bytes.writeImmutableBuffer(request.headers.bytes)
        // A request without a body says so, unless its method never has one.
        if let body = request.body {
            bytes.writeStaticString("content-length: ")
            bytes.writeString(String(body.readableBytes))
            bytes.writeStaticString("\r\n\r\n")
            bytes.writeImmutableBuffer(body)
        } else if request.method == .GET || request.method == .HEAD {
            bytes.writeStaticString("\r\n")
        } else {
            bytes.writeStaticString("content-length: 0\r\n\r\n")
        }
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    /// Sets the timer for the deadline when it is not set for that or earlier.
    private func armTimer(context: ChannelHandlerContext) {
        guard let deadline else { return }
        if let timer {
            if timer.at <= deadline { return }
            timer.task.cancel()
        }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = (context.eventLoop.scheduleTask(deadline: deadline) { handler.value.timerFired() }, deadline)
    }

    private func timerFired() {
        timer = nil
        guard let deadline, let context else { return }
        if deadline <= .now() {
            fail(UpstreamClient.Failure.timedOut)
        } else {
            armTimer(context: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var part = unwrapInboundIn(data)
        if received == nil || received!.readableBytes == 0 {
            received = part
        } else {
            received!.writeBuffer(&part)
        }
        do {
            try readAnswer()
        } catch {
            fail(error)
        }
    }

    /// Reads what `received` holds of the answer in progress.
    private func readAnswer() throws {
        while var bytes = received, bytes.readableBytes > 0 {
            switch state {
            case .idle, .closed:
                // Bytes nobody asked for: nothing more can be trusted from this connection.
                throw UpstreamClient.Failure.malformedAnswer
            case .awaitingHead(let completion, let method):
                let parsed = bytes.withUnsafeReadableBytes { ResponseHead.parse($0) }
                guard case .head(let head) = parsed else {
                    if parsed == .incomplete { return }
                    throw UpstreamClient.Failure.malformedAnswer
                }
                bytes.moveReaderIndex(forwardBy: head.length)
                received = bytes
                // An interim answer (100 Continue) is not the answer; a switch of protocols is not for a proxied call.
                if head.status < 200 {
                    guard head.status != 101 else { throw UpstreamClient.Failure.malformedAnswer }
                    continue
                }
                let framing: Framing =
                    switch head.hasBody(forMethod: method) ? head.framing : .length(0) {
                    case .length(let length): .length(remaining: length)
                    case .chunked: .chunked(ChunkedBody())
                    case .untilClose: .untilClose
                    }
                state = .buffering(completion, head, framing, ByteBuffer())
                try readBody()
            case .buffering, .streaming:
                try readBody()
                return
            }
        }
    }

    /// Takes the body's bytes from `received`; finishes the exchange when the body has ended.
    private func readBody() throws {
        var bytes = received ?? ByteBuffer()
        var parts: [ByteBuffer] = []
        var ended: Bool
        switch framing {
        case .length(let remaining)?:
            let taken = min(remaining, bytes.readableBytes)
            if taken > 0 { parts.append(bytes.readSlice(length: taken)!) }
            setFraming(.length(remaining: remaining - taken))
            ended = remaining == taken
        case .chunked(var chunks)?:
            guard let read = try? bytes.withUnsafeReadableBytes({ pointer throws(ChunkedBody.Malformed) in try chunks.read(pointer) }) else {
                throw UpstreamClient.Failure.malformedAnswer
            }
            for range in read.data { parts.append(bytes.getSlice(at: bytes.readerIndex + range.lowerBound, length: range.count)!) }
            bytes.moveReaderIndex(forwardBy: read.consumed)
            setFraming(.chunked(chunks))
            ended = read.finished
        case .untilClose?:
            if bytes.readableBytes > 0 { parts.append(bytes.readSlice(length: bytes.readableBytes)!) }
            ended = false
        case nil:
            return
        }
        received = bytes
        for var part in parts where part.readableBytes > 0 {
            switch state {
            case .buffering(let completion, let head, let framing, var body):
                state = .idle
                // The first part is kept as it came (a slice of what was read); later ones are appended.
                if body.readableBytes == 0 { body = part } else { body.writeBuffer(&part) }
                if body.readableBytes > bufferLimit {
                    let (stream, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
                    continuation.yield(body)
                    state = .streaming(continuation, head, framing)
                    completion(.success(.init(status: head.responseStatus, headers: .init(list: head.fields), body: .streamed(stream))))
                } else {
                    state = .buffering(completion, head, framing, body)
                }
            case .streaming(let continuation, _, _):
                continuation.yield(part)
            default:
                break
            }
        }
        if ended { try complete() }
    }

    private var framing: Framing? {
        switch state {
        case .buffering(_, _, let framing, _), .streaming(_, _, let framing): framing
        default: nil
        }
    }

    private func setFraming(_ framing: Framing) {
        switch state {
        case .buffering(let completion, let head, _, let body): state = .buffering(completion, head, framing, body)
        case .streaming(let continuation, let head, _): state = .streaming(continuation, head, framing)
        default: break
        }
    }

    /// The answer has ended: it is delivered, and the connection goes back to the pool or is closed. Bytes after it
    /// were not asked for: the connection is closed.
    private func complete() throws {
        let leftOver = (received?.readableBytes ?? 0) > 0
        switch state {
        case .buffering(let completion, let head, let framing, let body):
            finish(keepAlive: head.keepsAlive && !leftOver && !framing.endsWithConnection)
            completion(.success(.init(status: head.responseStatus, headers: .init(list: head.fields), body: .buffered(body))))
        case .streaming(let continuation, let head, let framing):
            finish(keepAlive: head.keepsAlive && !leftOver && !framing.endsWithConnection)
            continuation.finish()
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // An answer delimited by the connection's end has ended; any other is cut short.
        if case .untilClose? = framing {
            try? complete()
        }
        fail(UpstreamClient.Failure.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
    }

    /// The exchange is over: the connection goes back to the pool, or is closed.
    private func finish(keepAlive: Bool) {
        deadline = nil
        state = .idle
        if keepAlive, let onIdle {
            received = nil
            onIdle()
        } else {
            state = .closed
            context?.close(promise: nil)
        }
    }

    /// Ends the exchange in flight (if any) with `error` and closes the connection for good.
    private func fail(_ error: any Error) {
        deadline = nil
        timer?.task.cancel()
        timer = nil
        let previous = state
        state = .closed
        received = nil
        switch previous {
        case .awaitingHead(let completion, _), .buffering(let completion, _, _, _): completion(.failure(error))
        case .streaming(let continuation, _, _): continuation.finish(throwing: error)
        case .idle, .closed: break
        }
        context?.close(promise: nil)
    }
}

extension ResponseHead {
    fileprivate var responseStatus: HTTPResponseStatus {
        status == 200 ? .ok : HTTPResponseStatus(statusCode: status, reasonPhrase: reason)
    }
}
