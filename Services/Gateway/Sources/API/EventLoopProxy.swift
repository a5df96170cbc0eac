import Dispatch
import Foundation
import GatewayDomain
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore
import NIOHTTPTypes
import SurgeRuntime
import Synchronization

/// The calls most public traffic is, proxied on the client connection's event loop: a read or a command of a route a
/// service answers, with at most a small body of announced length, no `Origin`, `If-Match` or connection options, by a
/// caller whose token was verified before (or on an anonymous route). It gets exactly what the router would give it
/// (rate limits and their headers, the signed caller, idempotency key, request id and trace, a read's entity tag and
/// its 304 for `If-None-Match`, the service's answer, its metrics), made with the same pieces (`RoutePipeline`,
/// `ProxyController`, `ConditionalRequests`, `TraceMiddleware`); every other request goes on to the router unchanged.
///
/// Why a channel handler: Hummingbird answers a request from a Swift task, so a proxied read crossed between the event
/// loop and the executor four times and paid for a task, a `Request` and a `Response` besides: about a third of the
/// gateway's CPU a read, where nginx's whole hop is a sixth of it (docs/gateway.md, "The hop's cost").
struct EventLoopProxy: Sendable {
    /// A request the proxy answers: its route, the caller its token proves (nil on an anonymous route), the length of
    /// its body and its `Idempotency-Key` on a keyed route.
    struct Call {
        let route: PublicRoute
        let caller: Authenticator.Caller?
        let bodyLength: Int
        let idempotencyKey: String?
    }

    /// What the proxy writes back: an answer in memory, or one streamed from the service (photos).
    enum Answer {
        case whole(HTTPResponse, ByteBuffer)
        case streamed(HTTPResponse, AsyncThrowingStream<ByteBuffer, any Error>)
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

    /// The call the proxy answers for `head`, or nil for the router's requests. Spends nothing.
    func call(_ head: HTTPRequest) -> Call? {
        guard let target = head.path, let route = routes.route(for: target, method: head.method), !route.acceptsUpload else { return nil }
        var bodyLength = 0
        var authorization: String?
        var idempotencyKey: String?
        for field in head.headerFields {
            switch field.name {
            case .contentLength:
                // A body past the limit is the router's 413; a chunked one (below) the router's to read and cap.
                guard let length = Int(field.value), length <= pipeline.maxBodyBytes else { return nil }
                bodyLength = length
            case .connection:
                // `keep-alive` is what HTTP/1.1 does anyway; `close` and any other option are the router's.
                guard field.value.lowercased() == "keep-alive" else { return nil }
            case .transferEncoding, .origin, .expect, .upgrade, .ifMatch:
                return nil
            case .authorization:
                authorization = field.value
            case .idempotencyKey where route.idempotent:
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
        return Call(route: route, caller: caller, bodyLength: bodyLength, idempotencyKey: idempotencyKey)
    }

    /// What the route pipeline and the proxy answer `call` (its body `body`) with, completed on `loop`.
    func answer(_ call: Call, head: HTTPRequest, body: ByteBuffer, peer: String, on loop: any EventLoop) -> EventLoopFuture<Answer> {
        let requestID = TraceMiddleware.requestID(of: head.headerFields)
        let ip = pipeline.clientAddress.of(head.headerFields, peer: peer)
        var decisions = pipeline.spendAddressBudgets(ip: ip, route: call.route)
        if let caller = call.caller, decisions.allSatisfy(\.allowed) { decisions.append(pipeline.spendCallerBudget(caller.id)) }
        let tightest = RoutePipeline.tightest(decisions)
        guard tightest.allowed else {
            return loop.makeCompletedFuture(withResultOf: { try problem(RoutePipeline.rateLimited(tightest), head: head, decisions, requestID) })
        }
        let spent = decisions
        let forwarded = ForwardedCall(
            caller: call.caller, clientAddress: ip, requestID: requestID, idempotencyKey: call.idempotencyKey,
            traceParent: TraceMiddleware.traceParent(of: head.headerFields))
        let service = call.route.upstream
        let sent = DispatchTime.now().uptimeNanoseconds
        return proxy.upstreams.send(proxy.upstreamRequest(head, body: body, call: forwarded), to: service, on: loop, timeout: proxy.timeout)
            .flatMap { response in
                proxy.answered(by: service, sentAt: sent)
                let status = HTTPResponse.Status(code: Int(response.status.code))
                let fields = ProxyController.relayedHeaders(response.headers)
                switch response.body {
                case .buffered(let body):
                    return loop.makeSucceededFuture(whole(status, fields, body, head: head, spent, requestID))
                case .streamed(let parts) where head.method == .get && ConditionalRequests.isTagged(status, fields):
                    // JSON past the client's buffer still gets its tag, as the router gives it: read whole first.
                    return loop.makeFutureWithTask { try await UpstreamClient.Body.streamed(parts).collect(upTo: .max) }
                        .map { whole(status, fields, $0, head: head, spent, requestID) }
                case .streamed(let parts):
                    return loop.makeSucceededFuture(.streamed(finished(HTTPResponse(status: status, headerFields: fields), spent, requestID), parts))
                }
            }
            .flatMapErrorThrowing { error in
                let problem = error as? Problem ?? proxy.unreachable(service, error: error, logger: logger.with(requestID: requestID))
                return try self.problem(problem, head: head, spent, requestID)
            }
            .hop(to: loop)
    }

    /// An answer in memory: a read's tagged if it is a 200 in JSON, and a 304 when its `If-None-Match` names the tag.
    private func whole(
        _ status: HTTPResponse.Status, _ fields: HTTPFields, _ body: ByteBuffer, head: HTTPRequest, _ decisions: [RateLimitDecision],
        _ requestID: String
    ) -> Answer {
        var (status, fields, body) = (status, fields, body)
        if head.method == .get, ConditionalRequests.isTagged(status, fields),
            ConditionalRequests.tagRead(&fields, tag: ConditionalRequests.tag(of: body), request: head.headerFields)
        {
            (status, body) = (.notModified, ByteBuffer())
        } else {
            fields[.contentLength] = String(body.readableBytes)
        }
        return .whole(finished(HTTPResponse(status: status, headerFields: fields), decisions, requestID), body)
    }

    /// A problem document for the request `head`, its `instance` the path without the query.
    private func problem(_ problem: Problem, head request: HTTPRequest, _ decisions: [RateLimitDecision], _ requestID: String) throws -> Answer {
        let (head, body) = try problem.answer(instance: String((request.path ?? "/").prefix { $0 != "?" }))
        return .whole(finished(head, decisions, requestID), body)
    }

    /// The headers every answer of the public door carries, as the router's middlewares and Hummingbird set them.
    private func finished(_ head: HTTPResponse, _ decisions: [RateLimitDecision], _ requestID: String) -> HTTPResponse {
        var head = head
        RoutePipeline.setRateLimitHeaders(&head.headerFields, decisions)
        head.headerFields[InternalHeaders.requestID] = requestID
        head.headerFields[.date] = HTTPDate.now()
        head.headerFields[.server] = serverName
        return head
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

/// The proxy on one client connection, between the HTTP codec and Hummingbird's: a read it answers never reaches
/// Hummingbird; any other request passes as it came. One request is answered at a time: what a client pipelines
/// meanwhile waits here (and reading stops) until the answer before it, the proxy's or the router's, has ended, so a
/// connection's answers keep its requests' order whoever writes them.
final class EventLoopProxyHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        case idle
        /// The router's request: its parts go on until its end; the next waits for its answer's end too.
        case routed(requestEnded: Bool, answerEnded: Bool)
        /// The proxy's call, its body gathered until its end.
        case reading(HTTPRequest, EventLoopProxy.Call, ByteBuffer)
        case answering
    }

    private let proxy: EventLoopProxy
    private var state = State.idle
    /// Parts of requests that arrived while an answer was in progress, in order.
    private var waiting = CircularBuffer<HTTPRequestPart>()
    private var readHeld = false
    private var draining = false
    /// Hummingbird's connection handler closes a connection it thinks idle when the server shuts down: held back
    /// until nothing is in progress here.
    private var quiesceHeld = false

    init(proxy: EventLoopProxy) {
        self.proxy = proxy
    }

    /// The connection's peer address as text, formatted once per connection rather than per call.
    private var peerAddress: String?

    private func peer(of context: ChannelHandlerContext) -> String {
        if let peerAddress { return peerAddress }
        let peer = context.channel.remoteAddress?.ipAddress ?? "unknown"
        peerAddress = peer
        return peer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        receive(unwrapInboundIn(data), context: context)
    }

    private func receive(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        if isAnswering {
            waiting.append(part)
            return
        }
        switch (state, part) {
        case (.answering, _), (.routed(requestEnded: true, _), _):
            waiting.append(part)
        case (.routed(requestEnded: false, let answerEnded), _):
            context.fireChannelRead(wrapInboundOut(part))
            if case .end = part {
                state = .routed(requestEnded: true, answerEnded: answerEnded)
                if answerEnded { finish(context: context) }
            }
        case (.reading(let head, let call, let body), .end):
            state = .answering
            answer(call, head: head, body: body, context: context)
        case (.reading(let head, let call, var body), .body(var chunk)) where call.bodyLength > 0:
            // The decoder delivers exactly the announced length.
            body.writeBuffer(&chunk)
            state = .reading(head, call, body)
        case (.reading(let head, _, _), _):
            // A body no header announced: the router's request. Nothing was spent yet.
            state = .routed(requestEnded: false, answerEnded: false)
            context.fireChannelRead(wrapInboundOut(.head(head)))
            receive(part, context: context)
        case (.idle, .head(let head)):
            if let call = proxy.call(head) {
                state = .reading(head, call, ByteBuffer())
            } else {
                state = .routed(requestEnded: false, answerEnded: false)
                context.fireChannelRead(wrapInboundOut(part))
            }
        case (.idle, _):
            // A part of no request: Hummingbird's to refuse.
            context.fireChannelRead(wrapInboundOut(part))
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        if case .end = unwrapOutboundIn(data), case .routed(let requestEnded, answerEnded: false) = state {
            state = .routed(requestEnded: requestEnded, answerEnded: true)
            if requestEnded { finish(context: context) }
        }
    }

    func read(context: ChannelHandlerContext) {
        if waiting.isEmpty { context.read() } else { readHeld = true }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !isIdle {
            quiesceHeld = true
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Whether an answer is in progress that the next request must wait for.
    private var isAnswering: Bool {
        switch state {
        case .answering, .routed(requestEnded: true, _): true
        default: false
        }
    }

    private var isIdle: Bool {
        if case .idle = state { waiting.isEmpty } else { false }
    }

    /// The request in progress was answered: the next one that waits is taken.
    private func finish(context: ChannelHandlerContext) {
        state = .idle
        guard !draining else { return }
        draining = true
        let replaying = !waiting.isEmpty
        while !waiting.isEmpty, !isAnswering {
            receive(waiting.removeFirst(), context: context)
        }
        // Hummingbird's side takes the parts it was given once their read is complete.
        if replaying { context.fireChannelReadComplete() }
        draining = false
        if waiting.isEmpty, readHeld {
            readHeld = false
            context.read()
        }
        if isIdle, quiesceHeld {
            quiesceHeld = false
            context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
    }

    private func answer(_ call: EventLoopProxy.Call, head: HTTPRequest, body: ByteBuffer, context: ChannelHandlerContext) {
        let started = DispatchTime.now().uptimeNanoseconds
        let active = proxy.metrics.active(head.method)
        active.increment()
        proxy.answered.increment()
        proxy.answer(call, head: head, body: body, peer: peer(of: context), on: context.eventLoop).assumeIsolated().whenComplete { result in
            let (route, method) = (call.route.path, head.method)
            switch result {
            case .success(.whole(let head, let body)):
                self.proxy.metrics.endpoint(.init(route: route, method: method, status: head.status)).record(since: started)
                active.decrement()
                context.write(self.wrapOutboundOut(.head(head)), promise: nil)
                if body.readableBytes > 0 { context.write(self.wrapOutboundOut(.body(body)), promise: nil) }
                self.end(context: context)
            case .success(.streamed(let head, let parts)):
                context.writeAndFlush(self.wrapOutboundOut(.head(head)), promise: nil)
                self.stream(parts, context: context) {
                    self.proxy.metrics.endpoint(.init(route: route, method: method, status: head.status)).record(since: started)
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

    /// Writes a streamed answer's parts as they come, each after the one before has been written (the client's pace),
    /// then ends it; a failed stream closes the connection, as the router's answer would.
    private func stream(_ parts: AsyncThrowingStream<ByteBuffer, any Error>, context: ChannelHandlerContext, done: @escaping () -> Void) {
        let loop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context, done: done), eventLoop: loop)
        Task {
            do {
                for try await part in parts {
                    try await loop.flatSubmit {
                        bound.value.context.writeAndFlush(bound.value.handler.wrapOutboundOut(.body(part)))
                    }.get()
                }
                loop.execute {
                    bound.value.done()
                    bound.value.handler.end(context: bound.value.context)
                }
            } catch {
                loop.execute {
                    bound.value.done()
                    bound.value.context.close(promise: nil)
                }
            }
        }
    }

    private func end(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        finish(context: context)
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
