import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
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
    /// What a request does not take to the service: the hop-by-hop and internal headers, and the body's length (set anew
    /// from the body, read already) and `Expect` (nothing waits for a 100 Continue).
    static let unforwardedRequestHeaders = hopByHopHeaders.union(["content-length", "expect"])

    func forward(_ request: Request, context: GatewayRequestContext, to service: SurgeService) async throws -> Response {
        let target = request.head.path ?? request.uri.description
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count + 8)
        for field in request.headers where !Self.unforwardedRequestHeaders.contains(field.name.canonicalName) {
            headers.add(name: field.name.rawName, value: field.value)
        }
        // The pipeline has already read the body into memory: this takes the buffer, it does not read the socket.
        let body = try await request.body.collect(upTo: .max)
        signer.sign(
            &headers, method: request.method.rawValue, target: target, caller: context.callerID, clientAddress: context.clientAddress,
            roles: context.callerRoles, session: context.callerSessionID, requestID: context.requestID, idempotencyKey: context.idempotencyKey,
            body: InternalCallSigner.BodyDigest(of: body))
        headers.replaceOrAdd(name: InternalHeaders.traceparent.rawName, value: context.traceParent.header)
        let hasBody = body.readableBytes > 0 || (request.method != .get && request.method != .head)
        let outgoing = UpstreamClient.Request(
            method: HTTPMethod(rawValue: request.method.rawValue), target: target, headers: headers, body: hasBody ? body : nil)
        let response: UpstreamClient.Response
        let metrics = self.metrics[service]
        let sent = DispatchTime.now().uptimeNanoseconds
        do {
            response = try await upstreams.execute(outgoing, to: service, on: context.channel.eventLoop, timeout: timeout)
            metrics?.answered.recordNanoseconds(DispatchTime.now().uptimeNanoseconds - sent)
        } catch let problem as Problem {
            throw problem
        } catch {
            metrics?.unreachable.increment()
            context.logger.warning("Upstream unreachable", metadata: ["upstream": "\(service.rawValue)", "error": "\(error)"])
            throw Problem.unavailable("The \(service.rawValue) service is not reachable right now.")
        }
        var fields = HTTPFields()
        fields.reserveCapacity(response.headers.count)
        for header in response.headers where !Self.hopByHopHeaders.contains(header.name.lowercased()) {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        let status = HTTPResponse.Status(code: Int(response.status.code))
        switch response.body {
        case .buffered(let buffer):
            return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: buffer))
        case .streamed(let parts):
            return Response(status: status, headers: fields, body: ResponseBody(asyncSequence: parts))
        }
    }
}

extension InternalCallSigner {
    /// Sets the caller, its roles and session, the request id, the idempotency key and the signature that lets the
    /// service trust them and the body (`body`: the digest of the body the request carries).
    func sign(
        _ headers: inout HTTPHeaders, method: String = "GET", target: String, caller: UUID?, clientAddress: String? = nil, roles: [String] = [],
        session: UUID? = nil, requestID: String, idempotencyKey: String? = nil, body: BodyDigest = .empty
    ) {
        let roles = caller == nil ? nil : InternalCallSigner.rolesHeader(roles)
        let session = caller == nil ? nil : session?.key
        if let caller { headers.replaceOrAdd(name: InternalHeaders.caller.rawName, value: caller.key) }
        if let clientAddress { headers.replaceOrAdd(name: InternalHeaders.clientAddress.rawName, value: clientAddress) }
        if let roles { headers.replaceOrAdd(name: InternalHeaders.roles.rawName, value: roles) }
        if let session { headers.replaceOrAdd(name: InternalHeaders.session.rawName, value: session) }
        if let idempotencyKey { headers.replaceOrAdd(name: InternalHeaders.idempotencyKey.rawName, value: idempotencyKey) }
        headers.replaceOrAdd(name: InternalHeaders.requestID.rawName, value: requestID)
        headers.replaceOrAdd(
            name: InternalCallSigner.header.rawName,
            value: signature(
                method: method, target: target, caller: caller?.key, clientAddress: clientAddress, roles: roles,
                session: session, requestID: requestID, idempotencyKey: idempotencyKey, body: body))
    }
}
