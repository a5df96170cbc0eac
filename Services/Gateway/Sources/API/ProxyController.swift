import Dispatch
import Foundation
import GatewayDomain
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import SurgeContracts
import SurgeRuntime

/// Forwards each public route to its service: the request body as the pipeline collected it, the answer with its
/// head as the service sent it. The caller's identity, request id and trace travel as signed headers; anything a
/// client sent in an internal header is dropped.
struct ProxyController {
    let upstreams: Upstreams
    let signer: InternalCallSigner
    let timeout: TimeAmount
    /// Per service: `surge_upstream_response_seconds{upstream}`, from sending a request until the service's answer
    /// (its head, and its body when it came with it) arrived, and `surge_upstream_unreachable_total{upstream}`, requests
    /// answered 503 because the service could not be reached; made with the controller, so every series exists from then on.
    let metrics = Dictionary(uniqueKeysWithValues: SurgeService.deployed.filter { $0 != .gateway }.map { service in
        (service, (
            answered: Metrics.Timer(label: "surge_upstream_response_seconds", dimensions: [("upstream", service.rawValue)], preferredDisplayUnit: .seconds),
            unreachable: Counter(label: "surge_upstream_unreachable_total", dimensions: [("upstream", service.rawValue)])))
    })

    /// Connection-level headers (RFC 9110 §7.6.1), and the internal ones only the gateway may set.
    static let hopByHopHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding",
        "upgrade", "host", "x-surge-caller", "x-surge-client-address", "x-surge-roles", "x-surge-session", "x-surge-signature",
        "x-surge-idempotency-key",
    ]
    /// What a request does not take to the service: the hop-by-hop and internal headers, the body's length (set anew
    /// from the body, read already), `Expect` (nothing waits for a 100 Continue) and the access token (services trust
    /// the signed caller, and never see a credential they could leak).
    /// The request id and trace are the gateway's own (`ForwardedCall`) and replace the client's.
    static let unforwardedRequestHeaders = hopByHopHeaders.union(["content-length", "expect", "authorization", "x-request-id", "traceparent"])

    func forward(_ request: Request, context: GatewayRequestContext, to service: SurgeService) async throws -> Response {
        // The pipeline has already read the body into memory: this takes the buffer, it does not read the socket.
        let body = try await request.body.collect(upTo: .max)
        let outgoing = upstreamRequest(
            method: request.method.rawValue, target: request.head.path ?? "/",
            fields: request.headers.lazy.map { ($0.name.canonicalName, $0.value) }, body: body, call: ForwardedCall(context))
        let response: UpstreamClient.Response
        let sent = DispatchTime.now().uptimeNanoseconds
        do {
            response = try await upstreams.execute(outgoing, to: service, on: context.channel.eventLoop, timeout: timeout)
            answered(by: service, sentAt: sent)
        } catch let problem as Problem {
            throw problem
        } catch {
            throw unreachable(service, error: error, logger: context.logger)
        }
        let status = HTTPResponse.Status(code: Int(response.status.code))
        switch response.body {
        case .buffered(let buffer):
            return Response(status: status, headers: Self.relayedHeaders(response.headers), body: ResponseBody(byteBuffer: buffer))
        case .streamed(let parts):
            return Response(status: status, headers: Self.relayedHeaders(response.headers), body: ResponseBody(asyncSequence: parts))
        }
    }

    /// The request the service gets: the client's headers (`fields`: lower-case names and values) without the
    /// hop-by-hop and internal ones, `call` signed with the body's digest, the trace's next span.
    func upstreamRequest(
        method: String, target: String, fields: some Sequence<(name: String, value: String)>, body: ByteBuffer, call: ForwardedCall
    ) -> UpstreamClient.Request {
        var headers = UpstreamClient.HeaderLines()
        for (name, value) in fields where !Self.unforwardedRequestHeaders.contains(name) { headers.add(name, value) }
        signer.sign(
            &headers, method: method, target: target, caller: call.caller, clientAddress: call.clientAddress,
            roles: call.roles, session: call.session, requestID: call.requestID, idempotencyKey: call.idempotencyKey,
            body: InternalCallSigner.BodyDigest(of: body))
        headers.add(InternalHeaders.traceparent.rawName, call.traceParent.header)
        let hasBody = body.readableBytes > 0 || (method != "GET" && method != "HEAD")
        return UpstreamClient.Request(method: HTTPMethod(rawValue: method), target: target, headers: headers, body: hasBody ? body : nil)
    }

    /// The service's answer headers a client gets: all but the hop-by-hop and internal ones.
    static func relayedHeaders(_ headers: UpstreamClient.Fields) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.list.count)
        for header in headers {
            if let name = HTTPField.Name(header.name), !hopByHopHeaders.contains(name.canonicalName) {
                fields.append(HTTPField(name: name, value: header.value))
            }
        }
        return fields
    }

    /// Records how long `service` took to answer a request sent at `sent` (`DispatchTime` nanoseconds).
    func answered(by service: SurgeService, sentAt sent: UInt64) {
        metrics[service]?.answered.recordNanoseconds(DispatchTime.now().uptimeNanoseconds - sent)
    }

    /// The 503 for a request `service` could not be sent or answer (`error`), counted and logged.
    func unreachable(_ service: SurgeService, error: any Error, logger: Logger) -> Problem {
        metrics[service]?.unreachable.increment()
        logger.warning("Upstream unreachable", metadata: ["upstream": "\(service.rawValue)", "error": "\(error)"])
        return Problem.unavailable("The \(service.rawValue) service is not reachable right now.")
    }
}

/// What the gateway vouches for when it forwards a request: the caller the pipeline proved (its roles and session),
/// the client's address, the request id, the idempotency key and the trace.
struct ForwardedCall {
    var caller: UUID?
    var roles: [String] = []
    var session: UUID?
    var clientAddress: String?
    var requestID: String
    var idempotencyKey: String?
    var traceParent: TraceParent

    init(_ context: GatewayRequestContext) {
        caller = context.callerID
        roles = context.callerRoles
        session = context.callerSessionID
        clientAddress = context.clientAddress
        requestID = context.requestID
        idempotencyKey = context.idempotencyKey
        traceParent = context.traceParent
    }

    init(caller: Authenticator.Caller?, clientAddress: String, requestID: String, idempotencyKey: String?, traceParent: TraceParent) {
        self.caller = caller?.id
        roles = caller?.roles ?? []
        session = caller?.sessionID
        self.clientAddress = clientAddress
        self.requestID = requestID
        self.idempotencyKey = idempotencyKey
        self.traceParent = traceParent
    }
}

extension InternalCallSigner {
    /// Adds the caller, its roles and session, the request id, the idempotency key and the signature that lets the
    /// service trust them and the body (`body`: the digest of the body the request carries). `headers` has none of
    /// them yet.
    func sign(
        _ headers: inout UpstreamClient.HeaderLines, method: String = "GET", target: String, caller: UUID?, clientAddress: String? = nil, roles: [String] = [],
        session: UUID? = nil, requestID: String, idempotencyKey: String? = nil, body: BodyDigest = .empty
    ) {
        let roles = caller == nil ? nil : InternalCallSigner.rolesHeader(roles)
        let session = caller == nil ? nil : session?.key
        if let caller { headers.add(InternalHeaders.caller.rawName, caller.key) }
        if let clientAddress { headers.add(InternalHeaders.clientAddress.rawName, clientAddress) }
        if let roles { headers.add(InternalHeaders.roles.rawName, roles) }
        if let session { headers.add(InternalHeaders.session.rawName, session) }
        if let idempotencyKey { headers.add(InternalHeaders.idempotencyKey.rawName, idempotencyKey) }
        headers.add(InternalHeaders.requestID.rawName, requestID)
        headers.add(
            InternalCallSigner.header.rawName,
            signature(
                method: method, target: target, caller: caller?.key, clientAddress: clientAddress, roles: roles,
                session: session, requestID: requestID, idempotencyKey: idempotencyKey, body: body))
    }
}
