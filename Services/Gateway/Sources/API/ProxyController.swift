import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import SurgeContracts
import SurgeRuntime

/// Forwards each public route to its service, streaming bodies both ways. The caller's identity, request id and trace
/// travel as headers; anything a client sent in the internal caller header is dropped.
struct ProxyController {
    let client: HTTPClient
    let upstreams: Upstreams
    let timeout: TimeAmount

    static let hopByHopHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding",
        "upgrade", "host", "x-surge-caller",
    ]


    func forward(_ request: Request, context: GatewayRequestContext, to service: SurgeService) async throws -> Response {
        var outgoing = HTTPClientRequest(url: upstreams.url(for: service) + request.uri.description)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers where !Self.hopByHopHeaders.contains(field.name.canonicalName) {
            outgoing.headers.add(name: field.name.rawName, value: field.value)
        }
        if let callerID = context.callerID { outgoing.headers.replaceOrAdd(name: InternalHeaders.caller.rawName, value: callerID.key) }
        outgoing.headers.replaceOrAdd(name: InternalHeaders.requestID.rawName, value: context.requestID)
        outgoing.headers.replaceOrAdd(name: InternalHeaders.traceparent.rawName, value: context.traceParent.header)
        if let length = request.headers[.contentLength].flatMap(Int.init) {
            outgoing.body = .stream(request.body, length: .known(Int64(length)))
        } else if request.method != .get, request.method != .head {
            outgoing.body = .stream(request.body, length: .unknown)
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: timeout)
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
        return Response(
            status: HTTPResponse.Status(code: Int(response.status.code)), headers: headers,
            body: ResponseBody(asyncSequence: response.body))
    }
}

/// Where each service's internal HTTP API listens.
struct Upstreams: Sendable {
    let urls: [SurgeService: String]

    init(_ reader: EnvironmentReader) {
        let defaults: [SurgeService: Int] = [.identity: 8081, .challenges: 8082, .progress: 8083, .leaderboard: 8084, .badges: 8085, .notifications: 8086]
        var urls: [SurgeService: String] = [:]
        for (service, port) in defaults {
            let url = reader.string("UPSTREAM_\(service.rawValue.uppercased())_URL", default: "http://127.0.0.1:\(port)")
            urls[service] = url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        self.urls = urls
    }

    func url(for service: SurgeService) -> String { urls[service] ?? "" }
}
