import Dispatch
import Foundation
import GatewayDomain
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import SurgeContracts
import SurgeRuntime
import Synchronization

/// The calls most public traffic is, proxied on the client connection's event loop from the bytes the client sent: a
/// read or a command of a route a service answers, with at most a small body of announced length, no `Origin`,
/// `If-Match` or connection options, by a caller whose token was verified before (or on an anonymous route). It gets
/// exactly what the router would give it (rate limits and their headers, the signed caller, idempotency key, request id
/// and trace, a read's entity tag and its 304 for `If-None-Match`, the service's answer, its metrics), made with the same
/// pieces (`RoutePipeline`, `ProxyController`, `ConditionalRequests`, `TraceMiddleware`); every other request goes on to
/// NIO's decoder and the router unchanged.
///
/// Why before the decoder: Hummingbird answers a request from a Swift task (a proxied read crossed between the event
/// loop and the executor four times), and NIO's decoder and Hummingbird's conversions to `HTTPTypes` cost a proxied read
/// more than a whole byte relay does (docs/gateway.md, "The floor of a proxy on SwiftNIO").
struct EventLoopProxy: Sendable {
    /// A request the proxy answers: its route and method, the caller its token proves (nil on an anonymous route) and its
    /// `Idempotency-Key` on a keyed route.
    struct Call {
        let route: PublicRoute
        let method: HTTPRequest.Method
        let caller: Authenticator.Caller?
        let idempotencyKey: String?
    }

    /// What the proxy writes back, as bytes: a whole answer, or a head and a body streamed from the service (photos),
    /// chunked when the service announced no length.
    enum Answer {
        case whole(HTTPResponse.Status, ByteBuffer)
        case streamed(HTTPResponse.Status, head: ByteBuffer, chunked: Bool, AsyncThrowingStream<ByteBuffer, any Error>)
    }

    let routes: ProxiedRoutes
    let pipeline: RoutePipeline
    let proxy: ProxyController
    let serverName: String
    let logger: Logger
    let metrics = RequestMetricsCache()
    /// `surge_gateway_event_loop_calls_total`: requests answered here rather than by the router; made with the proxy, so
    /// the series exists from the start.
    let answered = Counter(label: "surge_gateway_event_loop_calls_total")

    /// The service's answer headers the gateway sets itself (lower-case), besides the hop-by-hop and internal ones.
    private static let replacedAnswerHeaders = ProxyController.hopByHopHeaders.union([
        "content-length", "date", "server", "x-request-id", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "ratelimit-policy",
    ])
    private static let taggedReplacedHeaders = replacedAnswerHeaders.union(["etag"])
    private static let notModifiedReplacedHeaders = taggedReplacedHeaders.union(["content-type"])

    /// The call the proxy answers for `head`, or nil for the router's requests. Spends nothing.
    func call(_ head: RequestHead) -> Call? {
        guard let method = HTTPRequest.Method(head.method), let route = routes.route(for: head.target, method: method), !route.acceptsUpload,
            head.contentLength <= pipeline.maxBodyBytes
        else { return nil }
        var authorization: String?
        var idempotencyKey: String?
        for field in head.fields {
            switch field.name {
            case "connection":
                // `keep-alive` is what HTTP/1.1 does anyway; `close` and any other option are the router's.
                guard field.value.lowercased() == "keep-alive" else { return nil }
            case "origin", "expect", "upgrade", "if-match":
                return nil
            case "authorization":
                guard authorization == nil else { return nil }
                authorization = field.value
            case "idempotency-key" where route.idempotent:
                // A key the router would refuse (422) is the router's.
                guard RoutePipeline.isAcceptable(idempotencyKey: field.value), idempotencyKey == nil else { return nil }
                idempotencyKey = field.value
            default:
                break
            }
        }
        var caller: Authenticator.Caller?
        if route.access == .authenticated {
            guard let remembered = pipeline.authenticator.rememberedCaller(authorization: authorization) else { return nil }
            caller = remembered
        }
        return Call(route: route, method: method, caller: caller, idempotencyKey: idempotencyKey)
    }

    /// What the route pipeline and the proxy answer `call` (its head `head`, its body `body`) with: called on `loop`,
    /// `completion` runs there (a failure is only a problem document that could not be encoded).
    func answer(
        _ call: Call, head: RequestHead, body: ByteBuffer, peer: String, on loop: any EventLoop,
        _ completion: @escaping (Result<Answer, any Error>) -> Void
    ) {
        let requestID = TraceMiddleware.requestID(header: head[InternalHeaders.requestID.canonicalName])
        let ip = pipeline.clientAddress.of(forwardedFor: head["x-forwarded-for"], peer: peer)
        var decisions = pipeline.spendAddressBudgets(ip: ip, route: call.route)
        if let caller = call.caller, decisions.allSatisfy(\.allowed) { decisions.append(pipeline.spendCallerBudget(caller.id)) }
        let tightest = RoutePipeline.tightest(decisions)
        guard tightest.allowed else {
            return completion(Result { try problem(RoutePipeline.rateLimited(tightest), head: head, decisions, requestID) })
        }
        let spent = decisions
        let forwarded = ForwardedCall(
            caller: call.caller, clientAddress: ip, requestID: requestID, idempotencyKey: call.idempotencyKey,
            traceParent: TraceMiddleware.traceParent(header: head[InternalHeaders.traceparent.canonicalName]))
        let service = call.route.upstream
        let sent = DispatchTime.now().uptimeNanoseconds
        let request = proxy.upstreamRequest(
            method: head.method, target: head.target, fields: head.fields.lazy.map { ($0.name, $0.value) }, body: body, call: forwarded)
        proxy.upstreams.send(request, to: service, on: loop, timeout: proxy.timeout) { result in
            let response: UpstreamClient.Response
            switch result {
            case .success(let answer): response = answer
            case .failure(let error): return completion(failed(error, service: service, head: head, spent, requestID))
            }
            proxy.answered(by: service, sentAt: sent)
            let status = HTTPResponse.Status(code: Int(response.status.code))
            switch response.body {
            case .buffered(let body):
                completion(.success(whole(status, response.headers, body, head: head, spent, requestID)))
            case .streamed(let parts)
            where head.method == "GET" && ConditionalRequests.isTagged(status, contentType: response.headers.first(name: "content-type")):
                // JSON past the client's buffer still gets its tag, as the router gives it: read whole first.
                loop.makeFutureWithTask { try await UpstreamClient.Body.streamed(parts).collect(upTo: .max) }.assumeIsolated().whenComplete {
                    switch $0 {
                    case .success(let body): completion(.success(whole(status, response.headers, body, head: head, spent, requestID)))
                    case .failure(let error): completion(failed(error, service: service, head: head, spent, requestID))
                    }
                }
            case .streamed(let parts):
                var answer = AnswerHead(status)
                answer.relay(response.headers, except: Self.replacedAnswerHeaders)
                let length = response.headers.first(name: "content-length")
                answer.add("Content-Length", length)
                answer.add("Transfer-Encoding", length == nil ? "chunked" : nil)
                finish(&answer, spent, requestID)
                completion(.success(.streamed(status, head: answer.bytes, chunked: length == nil, parts)))
            }
        }
    }

    /// An answer in memory: a read's tagged if it is a 200 in JSON, and a 304 when its `If-None-Match` names the tag
    /// (without the representation's type and length, RFC 9110 §15.4.5).
    private func whole(
        _ status: HTTPResponse.Status, _ headers: UpstreamClient.Fields, _ body: ByteBuffer, head: RequestHead, _ decisions: [RateLimitDecision],
        _ requestID: String
    ) -> Answer {
        var tag: String?
        var notModified = false
        if head.method == "GET", ConditionalRequests.isTagged(status, contentType: headers.first(name: "content-type")) {
            let current = ConditionalRequests.tag(of: body)
            tag = current
            if let condition = head["if-none-match"], !condition.isEmpty { notModified = EntityTags.noneMatchFails(condition, current: current) }
        }
        let status = notModified ? .notModified : status
        // As NIO's encoder frames them: no length on an answer that cannot have a body.
        let bodyless = status == .notModified || status == .noContent || status.kind == .informational
        var answer = AnswerHead(status, capacity: 512 + (bodyless ? 0 : body.readableBytes))
        let replaced = notModified ? Self.notModifiedReplacedHeaders : tag == nil ? Self.replacedAnswerHeaders : Self.taggedReplacedHeaders
        answer.relay(headers, except: replaced)
        answer.add("ETag", tag)
        if !bodyless { answer.add("Content-Length", String(body.readableBytes)) }
        finish(&answer, decisions, requestID)
        if !bodyless { answer.bytes.writeImmutableBuffer(body) }
        return .whole(status, answer.bytes)
    }

    /// The answer when `service` could not be asked or did not answer: its problem, or a 503 counted and logged.
    private func failed(
        _ error: any Error, service: SurgeService, head: RequestHead, _ decisions: [RateLimitDecision], _ requestID: String
    ) -> Result<Answer, any Error> {
        let problem = error as? Problem ?? proxy.unreachable(service, error: error, logger: logger.with(requestID: requestID))
        return Result { try self.problem(problem, head: head, decisions, requestID) }
    }

    /// A problem document for the request `head`, its `instance` the path without the query.
    private func problem(_ problem: Problem, head request: RequestHead, _ decisions: [RateLimitDecision], _ requestID: String) throws -> Answer {
        let (head, body) = try problem.answer(instance: String(request.target.prefix { $0 != "?" }))
        var answer = AnswerHead(head.status, capacity: 512 + body.readableBytes)
        for field in head.headerFields { answer.add(field.name.rawName, field.value) }
        finish(&answer, decisions, requestID)
        answer.bytes.writeImmutableBuffer(body)
        return .whole(head.status, answer.bytes)
    }

    /// The headers every answer of the public door carries, as the router's middlewares and Hummingbird set them, and
    /// the empty line that ends the head.
    private func finish(_ answer: inout AnswerHead, _ decisions: [RateLimitDecision], _ requestID: String) {
        for (name, value) in RoutePipeline.rateLimitFields(decisions) { answer.add(name.rawName, value) }
        answer.add(InternalHeaders.requestID.rawName, requestID)
        answer.add("Date", HTTPDate.now())
        answer.add("Server", serverName)
        answer.bytes.writeStaticString("\r\n")
    }
}

/// An answer's head written as bytes: the status line, then each header line.
private struct AnswerHead {
    var bytes: ByteBuffer

    init(_ status: HTTPResponse.Status, capacity: Int = 512) {
        bytes = ByteBuffer()
        bytes.reserveCapacity(capacity)
        if status == .ok {
            bytes.writeStaticString("HTTP/1.1 200 OK\r\n")
        } else {
            bytes.writeString("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
        }
    }

    mutating func add(_ name: String, _ value: String?) {
        guard let value else { return }
        bytes.writeString(name)
        bytes.writeStaticString(": ")
        bytes.writeString(value)
        bytes.writeStaticString("\r\n")
    }

    /// The service's headers but those named in `excluded` (lower-case).
    mutating func relay(_ headers: UpstreamClient.Fields, except excluded: Set<String>) {
        for header in headers where !excluded.contains(header.name) { add(header.name, header.value) }
    }
}

extension Logger {
    fileprivate func with(requestID: String) -> Logger {
        var logger = self
        logger[metadataKey: "request.id"] = .string(requestID)
        return logger
    }
}

/// Which public route a request is, without the router: the one template its path's segments match, when exactly one
/// does, and that template's route for the request's method.
/// A path any other way (outside `/v1/`, percent-escapes, empty or dot segments, several templates) is left to the
/// router, which decides it as it always has.
struct ProxiedRoutes: Sendable {
    /// Per number of segments: each template's segments (nil for a parameter) and its routes the proxy answers, by method.
    private let shapes: [Int: [(segments: [String?], routes: [HTTPRequest.Method: PublicRoute])]]

    /// `routes`: every public route (all methods), so a path two templates could match is seen to be ambiguous.
    init(_ routes: [PublicRoute]) {
        var shapes: [Int: [(segments: [String?], routes: [HTTPRequest.Method: PublicRoute])]] = [:]
        for path in Set(routes.map(\.path)) {
            let segments = path.split(separator: "/").map { $0.hasPrefix("{") ? nil : String($0) }
            let proxied = routes.filter { $0.path == path && $0.access != .admin && $0.upstream != .gateway }
            shapes[segments.count, default: []].append((segments, Dictionary(proxied.map { ($0.method, $0) }) { first, _ in first }))
        }
        self.shapes = shapes
    }

    /// The proxied route `method` on `target` (a request target, query and all) is, or nil: the router's.
    func route(for target: String, method: HTTPRequest.Method) -> PublicRoute? {
        var segments: [Substring] = []
        segments.reserveCapacity(8)
        var start: String.Index?
        var index = target.startIndex
        while index < target.endIndex, target.utf8[index] != UInt8(ascii: "?") {
            let byte = target.utf8[index]
            if byte == UInt8(ascii: "/") {
                if let start { segments.append(target[start..<index]) } else if index != target.startIndex { return nil }
                start = target.utf8.index(after: index)
            } else if !Self.isPlain(byte) {
                return nil
            }
            index = target.utf8.index(after: index)
        }
        guard let start else { return nil }
        segments.append(target[start..<index])
        guard segments.count > 1, segments[0] == "v1", segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }),
            let candidates = shapes[segments.count]
        else { return nil }
        var found: (segments: [String?], routes: [HTTPRequest.Method: PublicRoute])?
        for candidate in candidates where zip(candidate.segments, segments).allSatisfy({ $0 == nil || $0! == $1 }) {
            guard found == nil else { return nil }
            found = candidate
        }
        return found?.routes[method]
    }

    /// Letters, digits and `-._~:`.
    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"): true
        default: false
        }
    }
}

/// The proxy on one client connection, in front of NIO's HTTP decoder: a call it answers never reaches the decoder or
/// Hummingbird; any other request's bytes pass on as they came. One request is answered at a time: what a client
/// pipelines meanwhile waits here (and reading stops) until the answer before it, the proxy's or the router's, has
/// ended, so a connection's answers keep its requests' order whoever writes them. A head outside `RequestHead`'s
/// subset hands the rest of the connection to the decoder, which alone can tell where such a request ends.
final class EventLoopProxyHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private enum State {
        case idle
        /// A request given to the decoder: `remaining` bytes of its body still to pass on, and whether its answer ended.
        case routed(remaining: Int, answerEnded: Bool)
        case answering
        /// Everything from here on is the decoder's.
        case passing
    }

    private let proxy: EventLoopProxy
    private var state = State.idle
    /// Bytes received and not handled yet: the start of the next request(s).
    private var received: ByteBuffer?
    private var readHeld = false
    /// Hummingbird's connection handler closes a connection it thinks idle when the server shuts down: held back
    /// until the proxy's answer in progress is written.
    private var quiesceHeld = false
    private var context: ChannelHandlerContext?
    /// The connection's peer address as text, formatted once per connection rather than per call.
    private var peerAddress: String?
    /// Whether the decoder was given bytes since the end of a read last went on.
    private var passedOn = false

    init(proxy: EventLoopProxy) {
        self.proxy = proxy
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        switch state {
        case .passing:
            passedOn = true
            context.fireChannelRead(data)
        case .routed(let remaining, let answerEnded) where remaining > 0:
            // The rest of a routed request's body.
            let part = bytes.readSlice(length: min(remaining, bytes.readableBytes))!
            state = .routed(remaining: remaining - part.readableBytes, answerEnded: answerEnded)
            passedOn = true
            context.fireChannelRead(wrapInboundOut(part))
            if bytes.readableBytes > 0 { keep(&bytes) }
            if case .routed(0, true) = state { finish(context: context) }
        default:
            keep(&bytes)
            if case .idle = state { take(context: context) }
        }
    }

    /// The end of a read goes on only when the decoder was given bytes since the last: Hummingbird's handlers behind it
    /// work on each one (its async channel delivers what it buffered), and a call answered here gave them nothing.
    func channelReadComplete(context: ChannelHandlerContext) {
        guard passedOn else { return }
        passedOn = false
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if holdsNextRequest { readHeld = true } else { context.read() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, case .answering = state {
            quiesceHeld = true
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// The router's answer to the request given to the decoder has been written (`RoutedAnswers` saw its end).
    func routedAnswerEnded() {
        guard case .routed(let remaining, answerEnded: false) = state, let context else { return }
        state = .routed(remaining: remaining, answerEnded: true)
        if remaining == 0 { finish(context: context) }
    }

    /// Whether bytes of a next request wait while the one before is answered.
    private var holdsNextRequest: Bool {
        switch state {
        case .answering, .routed(remaining: 0, _): received != nil
        default: false
        }
    }

    private func keep(_ bytes: inout ByteBuffer) {
        if received == nil { received = bytes } else { received!.writeBuffer(&bytes) }
    }

    /// Takes the requests received while nothing is in progress: answers a call, or gives a request to the decoder.
    private func take(context: ChannelHandlerContext) {
        while case .idle = state, var bytes = received {
            switch bytes.withUnsafeReadableBytes({ RequestHead.parse($0) }) {
            case .incomplete:
                return
            case .unsupported:
                pass(bytes, context: context)
                return
            case .head(let head) where head["upgrade"] != nil:
                // After an upgrade the bytes are another protocol's.
                pass(bytes, context: context)
                return
            case .head(let head):
                let length = head.length + head.contentLength
                if let call = proxy.call(head) {
                    // Its body is small (at most the pipeline's limit): gathered whole before answering.
                    guard bytes.readableBytes >= length else { return }
                    let body = bytes.getSlice(at: bytes.readerIndex + head.length, length: head.contentLength)!
                    bytes.moveReaderIndex(forwardBy: length)
                    received = bytes.readableBytes > 0 ? bytes : nil
                    state = .answering
                    answer(call, head: head, body: body, context: context)
                } else {
                    let part = bytes.readSlice(length: min(length, bytes.readableBytes))!
                    received = bytes.readableBytes > 0 ? bytes : nil
                    state = .routed(remaining: length - part.readableBytes, answerEnded: false)
                    passedOn = true
                    context.fireChannelRead(wrapInboundOut(part))
                }
            }
        }
    }

    /// Gives `bytes` and everything after them on this connection to the decoder.
    private func pass(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        state = .passing
        received = nil
        passedOn = true
        context.fireChannelRead(wrapInboundOut(bytes))
    }

    /// The request in progress was answered: the next one received is taken.
    private func finish(context: ChannelHandlerContext) {
        state = .idle
        // Hummingbird's side takes the bytes it was given once their read is complete.
        take(context: context)
        channelReadComplete(context: context)
        if readHeld, !holdsNextRequest {
            readHeld = false
            context.read()
        }
        if quiesceHeld, !isAnswering {
            quiesceHeld = false
            context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
    }

    private var isAnswering: Bool {
        if case .answering = state { true } else { false }
    }

    private func peer(of context: ChannelHandlerContext) -> String {
        if let peerAddress { return peerAddress }
        let peer = context.channel.remoteAddress?.ipAddress ?? "unknown"
        peerAddress = peer
        return peer
    }

    private func answer(_ call: EventLoopProxy.Call, head: RequestHead, body: ByteBuffer, context: ChannelHandlerContext) {
        let started = DispatchTime.now().uptimeNanoseconds
        let active = proxy.metrics.active(call.method)
        active.increment()
        proxy.answered.increment()
        proxy.answer(call, head: head, body: body, peer: peer(of: context), on: context.eventLoop) { result in
            let (route, method) = (call.route.path, call.method)
            switch result {
            case .success(.whole(let status, let bytes)):
                self.proxy.metrics.endpoint(.init(route: route, method: method, status: status)).record(since: started)
                active.decrement()
                context.writeAndFlush(self.wrapOutboundOut(.byteBuffer(bytes)), promise: nil)
                self.finish(context: context)
            case .success(.streamed(let status, let head, let chunked, let parts)):
                context.writeAndFlush(self.wrapOutboundOut(.byteBuffer(head)), promise: nil)
                self.stream(parts, chunked: chunked, context: context) {
                    self.proxy.metrics.endpoint(.init(route: route, method: method, status: status)).record(since: started)
                    active.decrement()
                }
            case .failure(let error):
                // Only a problem document that could not be encoded gets here.
                self.proxy.logger.error("Call could not be answered", metadata: ["error": "\(error)"])
                active.decrement()
                context.close(promise: nil)
            }
        }
    }

    /// Writes a streamed answer's parts as they come (as chunks when `chunked`), each after the one before has been
    /// written (the client's pace), then ends it; a failed stream closes the connection, as the router's answer would.
    private func stream(_ parts: AsyncThrowingStream<ByteBuffer, any Error>, chunked: Bool, context: ChannelHandlerContext, done: @escaping () -> Void) {
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context, done: done), eventLoop: loop)
        Task {
            do {
                for try await part in parts where part.readableBytes > 0 {
                    try await loop.flatSubmit {
                        let (handler, context) = (bound.value.handler, bound.value.context)
                        guard chunked else { return context.writeAndFlush(handler.wrapOutboundOut(.byteBuffer(part))) }
                        var size = ByteBuffer(string: String(part.readableBytes, radix: 16) + "\r\n")
                        context.write(handler.wrapOutboundOut(.byteBuffer(size)), promise: nil)
                        context.write(handler.wrapOutboundOut(.byteBuffer(part)), promise: nil)
                        size.clear()
                        size.writeStaticString("\r\n")
                        return context.writeAndFlush(handler.wrapOutboundOut(.byteBuffer(size)))
                    }.get()
                }
                loop.execute {
                    let (handler, context) = (bound.value.handler, bound.value.context)
                    if chunked { context.writeAndFlush(handler.wrapOutboundOut(.byteBuffer(ByteBuffer(string: "0\r\n\r\n"))), promise: nil) }
                    bound.value.done()
                    handler.finish(context: context)
                }
            } catch {
                loop.execute {
                    bound.value.done()
                    bound.value.context.close(promise: nil)
                }
            }
        }
    }
}

/// Behind the HTTP codec: tells the proxy in front of the decoder (`EventLoopProxyHandler`, which it puts first in the
/// connection's pipeline) when the router's answer to a request it passed on has ended.
final class RoutedAnswers: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let front: EventLoopProxyHandler

    init(proxy: EventLoopProxy) {
        front = EventLoopProxyHandler(proxy: proxy)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        do {
            try context.pipeline.syncOperations.addHandler(front, position: .first)
        } catch {
            context.fireErrorCaught(error)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        if case .end = unwrapOutboundIn(data) { front.routedAnswerEnded() }
    }
}

/// The `Date` header's value (RFC 9110 §5.6.7), formatted once a second. Hand-written: Hummingbird keeps its own
/// cache of it internal.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func now() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = Int(now.tv_sec)
        return cache.withLock { cache in
            if cache.second == second { return cache.text }
            var time = time_t(second)
            var parts = tm()
            gmtime_r(&time, &parts)
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            let text = "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
            cache = (second, text)
            return text
        }
    }
}
