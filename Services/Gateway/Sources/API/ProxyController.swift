import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import SurgeContracts
import SurgeRuntime

/// Forwards each public route to its service: the request body as the pipeline collected it, the response streamed. The caller's identity, request id and trace
/// travel as headers; anything a client sent in the internal caller header is dropped.
struct ProxyController {
    let upstreams: Upstreams
    let signer: InternalCallSigner
    let timeout: TimeAmount

    static let hopByHopHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding",
        "upgrade", "host", "x-surge-caller", "x-surge-client-address", "x-surge-roles", "x-surge-session", "x-surge-signature",
        "x-surge-idempotency-key",
    ]


    func forward(_ request: Request, context: GatewayRequestContext, to service: SurgeService) async throws -> Response {
        let target = request.head.path ?? request.uri.description
        var outgoing = HTTPClientRequest(url: target)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers where !Self.hopByHopHeaders.contains(field.name.canonicalName) {
            outgoing.headers.add(name: field.name.rawName, value: field.value)
        }
        // The pipeline has already read the body into memory: this takes the buffer, it does not read the socket.
        let body = try await request.body.collect(upTo: .max)
        signer.sign(
            &outgoing, target: target, caller: context.callerID, clientAddress: context.clientAddress, roles: context.callerRoles,
            session: context.callerSessionID, requestID: context.requestID, idempotencyKey: context.idempotencyKey,
            body: InternalCallSigner.BodyDigest(of: body))
        outgoing.headers.replaceOrAdd(name: InternalHeaders.traceparent.rawName, value: context.traceParent.header)
        if body.readableBytes > 0 || (request.method != .get && request.method != .head) {
            outgoing.body = .bytes(body)
        }
        let response: HTTPClientResponse
        do {
            response = try await upstreams.execute(outgoing, to: service, target: target, timeout: timeout)
        } catch let problem as Problem {
            throw problem
        } catch {
            context.logger.warning("Upstream unreachable", metadata: ["upstream": "\(service.rawValue)", "error": "\(error)"])
            throw Problem.unavailable("The \(service.rawValue) service is not reachable right now.")
        }
        var headers = HTTPFields()
        for header in response.headers where !Self.hopByHopHeaders.contains(header.name.lowercased()) {
            if let name = HTTPField.Name(header.name) { headers.append(HTTPField(name: name, value: header.value)) }
        }
        let status = HTTPResponse.Status(code: Int(response.status.code))
        // A body of known, modest length (every JSON answer) is sent with its head in one write; others are streamed.
        if let length = response.headers.first(name: "content-length").flatMap(Int.init), length <= Self.bufferedBodyLimit {
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: try await response.body.collect(upTo: length)))
        }
        return Response(status: status, headers: headers, body: ResponseBody(asyncSequence: response.body))
    }

    static let bufferedBodyLimit = 1 << 20
}

extension InternalCallSigner {
    /// Sets the caller, its roles and session, the request id, the idempotency key and the signature that lets the
    /// service trust them and the body (`body`: the digest of the body the request carries).
    func sign(
        _ request: inout HTTPClientRequest, target: String, caller: UUID?, clientAddress: String? = nil, roles: [String] = [],
        session: UUID? = nil, requestID: String, idempotencyKey: String? = nil, body: BodyDigest = .empty
    ) {
        let roles = caller == nil ? nil : InternalCallSigner.rolesHeader(roles)
        let session = caller == nil ? nil : session?.key
        if let caller { request.headers.replaceOrAdd(name: InternalHeaders.caller.rawName, value: caller.key) }
        if let clientAddress { request.headers.replaceOrAdd(name: InternalHeaders.clientAddress.rawName, value: clientAddress) }
        if let roles { request.headers.replaceOrAdd(name: InternalHeaders.roles.rawName, value: roles) }
        if let session { request.headers.replaceOrAdd(name: InternalHeaders.session.rawName, value: session) }
        if let idempotencyKey { request.headers.replaceOrAdd(name: InternalHeaders.idempotencyKey.rawName, value: idempotencyKey) }
        request.headers.replaceOrAdd(name: InternalHeaders.requestID.rawName, value: requestID)
        request.headers.replaceOrAdd(
            name: InternalCallSigner.header.rawName,
            value: signature(
                method: request.method.rawValue, target: target, caller: caller?.key, clientAddress: clientAddress, roles: roles,
                session: session, requestID: requestID, idempotencyKey: idempotencyKey, body: body))
    }
}
