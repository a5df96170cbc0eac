import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@testable import GatewayService

/// The event-loop proxy (`EventLoopProxyHandler`) in front of the gateway's HTTP decoder and router: which calls it
/// answers from the bytes, that they get what the router gives, and that everything else still reaches the router, in
/// order, on one connection.
@Suite("Gateway: calls proxied on the event loop", .tags(.unit), .kind(.unit))
struct EventLoopProxyTests {
    /// A challenge read of any service (`/{service}/v1/challenges/{id}`): the caller, the trace and whether the gateway's
    /// signature covers what it sent, in JSON; `asked` counts its requests.
    static func upstream(signer: InternalCallSigner, asked: LockedValue<Int> = .init(0)) -> some ApplicationProtocol {
        let router = Router()
        router.get("/:service/v1/challenges/:id") { request, _ in
            asked.withLock { $0 += 1 }
            let headers = request.headers
            let signed = signer.isValid(
                headers[InternalCallSigner.header], method: "GET", target: String(request.head.path!.dropFirst("/challenges".count)),
                caller: headers[InternalHeaders.caller], clientAddress: headers[InternalHeaders.clientAddress], roles: headers[InternalHeaders.roles],
                session: headers[InternalHeaders.session], requestID: headers[InternalHeaders.requestID] ?? "")
            let trace = (headers[InternalHeaders.traceparent] ?? "").split(separator: "-")
            let traced = trace.count == 4 && trace[1] == "4bf92f3577b34da6a3ce929d0e0e4736" && trace[2] != "00f067aa0ba902b7"
            let body = #"{"caller":"\#(headers[InternalHeaders.caller] ?? "")","signed":\#(signed),"traced":\#(traced),"sawToken":\#(headers[.authorization] != nil)}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    /// The gateway, on a live port, in front of `service` (every upstream URL pointing at it), with `settings` added to
    /// its environment.
    static func withGateway(
        _ fixture: GatewayRouterFixture, service: some ApplicationProtocol, settings: [String: String] = [:],
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        try await withUpstreamClient { client in
            try await service.test(.live) { upstream in
                let environment = try GatewayRouterTests.environment(upstreamPort: upstream.port).merging(settings) { _, setting in setting }
                try await fixture.application(environment: environment, client: client).test(.live, body)
            }
        }
    }

    struct Echo: Decodable {
        var caller: String
        var signed: Bool
        /// The client's trace, in a span of the gateway's.
        var traced: Bool
        /// Whether the client's access token reached the service: it never should.
        var sawToken: Bool
    }

    @Test("a read by a token verified before is answered before the router, as the router answers it: signed caller (not its token), trace, tag, budgets, request id")
    func proxiedRead() async throws {
        let fixture = try await GatewayRouterFixture()
        let user = UUID()
        let asked = LockedValue(0)
        try await Self.withGateway(fixture, service: Self.upstream(signer: fixture.signer, asked: asked)) { gateway in
            var headers = try await fixture.bearer(user)
            headers[InternalHeaders.traceparent] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            let target = "/v1/challenges/\(UUID().key)?include=rules"
            var answers: [(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer)] = []
            for requestID in ["first-read", "second-read"] {
                headers[InternalHeaders.requestID] = requestID
                try await gateway.execute(uri: target, method: .get, headers: headers) { answers.append(($0.status, $0.headers, $0.body)) }
            }
            // The first verified the token in the router; the second was answered before it.
            #expect(fixture.routed.value == 1)
            #expect(asked.value == 2)
            for (index, answer) in answers.enumerated() {
                #expect(answer.status == .ok)
                let echo = try JSONDecoder().decode(Echo.self, from: Data(buffer: answer.body))
                #expect(echo.caller == user.key)
                #expect(echo.signed)
                #expect(echo.traced)
                #expect(!echo.sawToken)
                #expect(answer.headers[InternalHeaders.requestID] == ["first-read", "second-read"][index])
                #expect(answer.headers[.contentType] == "application/json")
                #expect(answer.headers[.contentLength] == String(answer.body.readableBytes))
                #expect(answer.headers[.eTag] == ConditionalRequests.tag(of: answer.body))
                #expect(answer.headers[.server] == "surge-gateway")
                #expect(answer.headers[.date] != nil)
                #expect(answer.headers[.rateLimitLimit] == "300")
                #expect(answer.headers[.rateLimitPolicy] == "300;w=60")
            }
            // Each spent the caller's budget (which refills 5 a second meanwhile; the 429 test counts exactly).
            for answer in answers { #expect((Int(answer.headers[.rateLimitRemaining] ?? "") ?? 300) < 300) }

            // The tag named again: a 304 from the proxy, with the tag and no representation.
            headers[.ifNoneMatch] = answers[1].headers[.eTag]
            try await gateway.execute(uri: target, method: .get, headers: headers) { response in
                #expect(response.status == .notModified)
                #expect(response.headers[.eTag] == answers[1].headers[.eTag])
                #expect(response.headers[.contentType] == nil)
                #expect(response.body.readableBytes == 0)
                #expect((Int(response.headers[.rateLimitRemaining] ?? "") ?? 300) < 300)
            }
            #expect(fixture.routed.value == 1)
        }
    }

    @Test("past the caller's budget the proxy answers 429 with Retry-After; a service that cannot be reached is a 503 problem")
    func refusals() async throws {
        let fixture = try await GatewayRouterFixture()
        let settings = ["RATE_LIMIT_PER_USER_PER_MINUTE": "2", "UPSTREAM_PROGRESS_URL": "http://127.0.0.1:1"]
        try await Self.withGateway(fixture, service: Self.upstream(signer: fixture.signer), settings: settings) { gateway in
            let headers = try await fixture.bearer(UUID())
            try await gateway.execute(uri: "/v1/challenges/\(UUID().key)", method: .get, headers: headers) { #expect($0.status == .ok) }
            let photos = "/v1/challenges/\(UUID().key)/photos"
            try await gateway.execute(uri: photos, method: .get, headers: headers) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] == "1")
                #expect(GatewayRouterTests.problem(response)?.instance == photos)
                #expect(response.headers[.rateLimitRemaining] == "0")
            }
            try await gateway.execute(uri: "/v1/challenges/\(UUID().key)", method: .get, headers: headers) { response in
                #expect(response.status == .tooManyRequests)
                #expect(GatewayRouterTests.problem(response)?.type.hasSuffix("/rate-limited") == true)
                #expect(response.headers[.retryAfter] != nil)
                #expect(response.headers[.rateLimitRemaining] == "0")
                #expect(response.headers[InternalHeaders.requestID] != nil)
            }
            #expect(fixture.routed.value == 1)
        }
    }

    @Test("a token not verified yet, a CORS origin, a chunked body, an escaped or unknown path and a gateway route go to the router")
    func routerRequests() async throws {
        let fixture = try await GatewayRouterFixture()
        let settings = ["CORS_ALLOWED_ORIGINS": "https://app.example"]
        try await Self.withGateway(fixture, service: Self.upstream(signer: fixture.signer), settings: settings) { gateway in
            let headers = try await fixture.bearer(UUID())
            let challenge = "/v1/challenges/\(UUID().key)"
            try await gateway.execute(uri: challenge, method: .get, headers: headers) { #expect($0.status == .ok) }
            #expect(fixture.routed.value == 1)
            var cors = headers
            cors[.origin] = "https://app.example"
            try await gateway.execute(uri: challenge, method: .get, headers: cors) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.accessControlAllowOrigin] == "https://app.example")
            }
            #expect(fixture.routed.value == 2)
            let chunked = try await Self.exchange(
                port: try #require(gateway.port),
                send: "GET \(challenge) HTTP/1.1\r\nHost: gateway\r\nAuthorization: \(try #require(headers[.authorization]))\r\n"
                    + "X-Request-ID: chunked-1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                until: "chunked-1")
            #expect(chunked.hasPrefix("HTTP/1.1 200 OK"))
            #expect(fixture.routed.value == 3)
            try await gateway.execute(uri: challenge.replacingOccurrences(of: "-", with: "%2D"), method: .get, headers: headers) { _ in }
            #expect(fixture.routed.value == 4)
            try await gateway.execute(uri: "/v1/no-such-route", method: .get, headers: headers) { #expect($0.status == .notFound) }
            #expect(fixture.routed.value == 5)
            try await gateway.execute(uri: "/v1/me/export", method: .get, headers: headers) { _ in }
            #expect(fixture.routed.value == 6)
            try await gateway.execute(uri: challenge, method: .get, headers: [.authorization: "Bearer not-a-token"]) { #expect($0.status == .unauthorized) }
            #expect(fixture.routed.value == 7)
            try await gateway.execute(uri: challenge, method: .get, headers: headers) { #expect($0.status == .ok) }
            #expect(fixture.routed.value == 7)
        }
    }

    @Test("requests pipelined on one connection, some proxied and some routed, are answered in their order")
    func pipelined() async throws {
        let fixture = try await GatewayRouterFixture()
        try await Self.withGateway(fixture, service: Self.upstream(signer: fixture.signer)) { gateway in
            let headers = try await fixture.bearer(UUID())
            let challenge = "/v1/challenges/\(UUID().key)"
            try await gateway.execute(uri: challenge, method: .get, headers: headers) { #expect($0.status == .ok) }
            let authorization = try #require(headers[.authorization])
            let ids = (1...6).map { "pipelined-\($0)" }
            var requests = ""
            for (index, id) in ids.enumerated() {
                // Odd ones are the router's (an unknown path), even ones the proxy's.
                let path = index % 2 == 0 ? challenge : "/v1/nowhere-\(index)"
                requests += "GET \(path) HTTP/1.1\r\nHost: gateway\r\nAuthorization: \(authorization)\r\nX-Request-ID: \(id)\r\n\r\n"
            }
            let answers = try await Self.exchange(port: try #require(gateway.port), send: requests, until: ids.last!)
            let order = ids.compactMap { id in answers.range(of: "x-request-id: \(id)\r\n", options: .caseInsensitive)?.lowerBound }
            #expect(order.count == ids.count)
            #expect(order == order.sorted())
            #expect(answers.components(separatedBy: "HTTP/1.1 200 OK").count - 1 == 3)
            #expect(answers.components(separatedBy: "HTTP/1.1 404 Not Found").count - 1 == 3)
            #expect(fixture.routed.value == 4)
        }
    }

    @Test("a call whose bytes arrive a few at a time is proxied; after a head outside the subset the connection is the decoder's")
    func bytesInPieces() async throws {
        let fixture = try await GatewayRouterFixture()
        try await Self.withGateway(fixture, service: Self.upstream(signer: fixture.signer)) { gateway in
            let headers = try await fixture.bearer(UUID())
            let challenge = "/v1/challenges/\(UUID().key)"
            try await gateway.execute(uri: challenge, method: .get, headers: headers) { #expect($0.status == .ok) }
            #expect(fixture.routed.value == 1)
            let authorization = try #require(headers[.authorization])
            let port = try #require(gateway.port)
            // Cut inside the request line, between CR and LF, inside a value and before the last LF.
            let split = try await Self.exchange(
                port: port,
                pieces: ["GET /v1/chal", "lenges/\(challenge.dropFirst(15)) HTTP/1.1\r\nHost: g\r", "\nAuthorization: \(authorization.prefix(20))",
                    "\(authorization.dropFirst(20))\r\nX-Request-ID: split-1\r\n\r", "\n"],
                until: "split-1")
            #expect(split.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(fixture.routed.value == 1)
            // A chunked body: its framing is the decoder's, and so is everything after it on that connection.
            let request = "GET \(challenge) HTTP/1.1\r\nHost: g\r\nAuthorization: \(authorization)\r\n"
            let passed = try await Self.exchange(
                port: port,
                pieces: [request + "X-Request-ID: chunked-2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", request + "X-Request-ID: after-3\r\n\r\n"],
                until: "after-3")
            let order = ["chunked-2", "after-3"].compactMap { passed.range(of: "x-request-id: \($0)\r\n", options: .caseInsensitive)?.lowerBound }
            #expect(order.count == 2 && order == order.sorted())
            #expect(passed.components(separatedBy: "HTTP/1.1 200 OK").count - 1 == 2)
            #expect(fixture.routed.value == 3)
        }
    }

    @Test("answers past the upstream client's buffer: a photo streamed through whole (chunked when no length was announced), JSON read whole and tagged")
    func largeAnswers() async throws {
        let fixture = try await GatewayRouterFixture()
        let photo = ByteBuffer(bytes: (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let json = ByteBuffer(string: "[" + Array(repeating: #""0123456789abcdef""#, count: 80_000).joined(separator: ",") + "]")
        let upstream = Router()
        upstream.get("/:service/v1/photos/:photoID") { _, context in
            // A photo written in parts, with no length announced: relayed chunked.
            guard context.parameters.get("photoID")?.hasPrefix("unannounced") == true else {
                return Response(status: .ok, headers: [.contentType: "image/jpeg"], body: .init(byteBuffer: photo))
            }
            return Response(status: .ok, headers: [.contentType: "image/jpeg"], body: ResponseBody { writer in
                for part in stride(from: 0, to: photo.readableBytes, by: 1 << 19) {
                    try await writer.write(photo.getSlice(at: part, length: min(1 << 19, photo.readableBytes - part))!)
                }
                try await writer.finish(nil)
            })
        }
        upstream.get("/:service/v1/me/history") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: json))
        }
        let service = Application(router: upstream, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await Self.withGateway(fixture, service: service) { gateway in
            let headers = try await fixture.bearer(UUID())
            for _ in 0..<2 {
                try await gateway.execute(uri: "/v1/photos/\(UUID().key)", method: .get, headers: headers) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "image/jpeg")
                    #expect(response.headers[.contentLength] == String(photo.readableBytes))
                    #expect(response.headers[.eTag] == nil)
                    #expect(response.body == photo)
                }
                try await gateway.execute(uri: "/v1/photos/unannounced-\(UUID().key)", method: .get, headers: headers) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentLength] == nil)
                    #expect(response.headers[.transferEncoding] == "chunked")
                    #expect(response.body == photo)
                }
                try await gateway.execute(uri: "/v1/me/history", method: .get, headers: headers) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.eTag] == ConditionalRequests.tag(of: json))
                    #expect(response.body == json)
                }
            }
            #expect(fixture.routed.value == 1)
        }
    }

    @Test("a request is the proxy's when exactly one template has its path's shape and that one's route for its method goes to a service")
    func proxiedRoutes() {
        let routes = ProxiedRoutes([
            PublicRoute(.get, "/v1/challenges/{challengeID}", .challenges, .authenticated, .standard, idempotent: false),
            PublicRoute(.patch, "/v1/challenges/{challengeID}", .challenges, .authenticated, .standard, idempotent: false),
            PublicRoute(.get, "/v1/groups/{groupID}/members", .identity, .authenticated, .standard, idempotent: false),
            PublicRoute(.get, "/v1/groups/{groupID}/chores", .challenges, .authenticated, .standard, idempotent: false),
            PublicRoute(.get, "/v1/me", .identity, .authenticated, .standard, idempotent: false),
            PublicRoute(.get, "/v1/me/export", .gateway, .authenticated, .standard, idempotent: false),
            PublicRoute(.get, "/v1/admin/kpis", .analytics, .admin, .standard, idempotent: false),
            PublicRoute(.post, "/v1/attempts", .progress, .authenticated, .standard, idempotent: true),
            PublicRoute(.get, "/v1/users/{userID}", .identity, .authenticated, .standard, idempotent: false),
            PublicRoute(.post, "/v1/users/search", .identity, .authenticated, .standard, idempotent: false),
        ])
        #expect(routes.route(for: "/v1/challenges/42", method: .get)?.path == "/v1/challenges/{challengeID}")
        #expect(routes.route(for: "/v1/challenges/42", method: .patch)?.method == .patch)
        #expect(routes.route(for: "/v1/challenges/42?include=rules&x=%20", method: .get)?.upstream == .challenges)
        #expect(routes.route(for: "/v1/groups/g-1/chores", method: .get)?.upstream == .challenges)
        #expect(routes.route(for: "/v1/groups/g-1/members", method: .get)?.upstream == .identity)
        #expect(routes.route(for: "/v1/me", method: .get)?.upstream == .identity)
        #expect(routes.route(for: "/v1/attempts", method: .post)?.upstream == .progress)
        // Not a service's route for the method: the gateway's own, an admin's, an undeclared method, an unknown path.
        for (target, method) in [
            ("/v1/me/export", HTTPRequest.Method.get), ("/v1/admin/kpis", .get), ("/v1/attempts", .get), ("/v1/me", .delete),
            ("/v1/groups/g-1", .get), ("/v1/nothing", .get), ("/v2/me", .get), ("/me", .get),
        ] {
            #expect(routes.route(for: target, method: method) == nil, "\(method) \(target)")
        }
        // Two templates have its shape: the router decides.
        #expect(routes.route(for: "/v1/users/search", method: .post) == nil)
        #expect(routes.route(for: "/v1/users/u-1", method: .get)?.upstream == .identity)
        // Anything but plain segments: the router decides.
        for target in ["/v1/challenges/4%32", "/v1/challenges/42/", "/v1//challenges/42", "/v1/challenges/..", "/v1/challenges/.", "/v1/challenges/a b", "/v1/challenges/é", "v1/challenges/42"] {
            #expect(routes.route(for: target, method: .get) == nil, "\(target)")
        }
    }

    @Test("a keyed command with a body is proxied signed, key and body digest and all; a body past the limit, a chunked one, If-Match and a bad key go to the router")
    func commands() async throws {
        let fixture = try await GatewayRouterFixture()
        let upstream = Router()
        upstream.post("/:service/v1/attempts") { request, _ in
            let headers = request.headers
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            let signed = fixture.signer.isValid(
                headers[InternalCallSigner.header], method: "POST", target: "/v1/attempts", caller: headers[InternalHeaders.caller],
                clientAddress: headers[InternalHeaders.clientAddress], roles: headers[InternalHeaders.roles], session: headers[InternalHeaders.session],
                requestID: headers[InternalHeaders.requestID] ?? "", idempotencyKey: headers[InternalHeaders.idempotencyKey],
                body: InternalCallSigner.BodyDigest(of: body))
            let echo = #"{"signed":\#(signed),"key":"\#(headers[InternalHeaders.idempotencyKey] ?? "")","body":\#(String(buffer: body))}"#
            return Response(status: .created, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: echo)))
        }
        let service = Application(router: upstream, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await Self.withGateway(fixture, service: service, settings: ["MAX_REQUEST_BYTES": "4096"]) { gateway in
            var headers = try await fixture.bearer(UUID())
            headers[.contentType] = "application/json"
            headers[.idempotencyKey] = "start-1"
            let body = ByteBuffer(string: #"{"challengeID":"x","note":"\#(String(repeating: "n", count: 2000))"}"#)
            for _ in 0..<2 {
                try await gateway.execute(uri: "/v1/attempts", method: .post, headers: headers, body: body) { response in
                    #expect(response.status == .created)
                    let echo = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                    #expect(echo?["signed"] as? Bool == true)
                    #expect(echo?["key"] as? String == "start-1")
                    #expect((echo?["body"] as? [String: Any])?["note"] as? String == String(repeating: "n", count: 2000))
                    #expect(response.headers[.eTag] == nil)
                    #expect(response.headers[.rateLimitLimit] == "300")
                }
            }
            #expect(fixture.routed.value == 1)
            // Past the body limit: the router's 413.
            try await gateway.execute(uri: "/v1/attempts", method: .post, headers: headers, body: ByteBuffer(repeating: 0x20, count: 5000)) {
                #expect($0.status == .contentTooLarge)
            }
            #expect(fixture.routed.value == 2)
            // A key the router refuses (422).
            var badKey = headers
            badKey[.idempotencyKey] = "has space"
            try await gateway.execute(uri: "/v1/attempts", method: .post, headers: badKey, body: body) {
                #expect($0.status == .unprocessableContent)
            }
            #expect(fixture.routed.value == 3)
            // If-Match: the router reads the current representation first.
            var conditional = headers
            conditional[.ifMatch] = "\"x\""
            try await gateway.execute(uri: "/v1/attempts", method: .post, headers: conditional, body: body) { _ in }
            #expect(fixture.routed.value == 4)
        }
    }

    /// Writes `send` on a new connection to 127.0.0.1:`port` and reads until `marker` and the body after it arrived
    /// (5 s at most), on a thread of its own: the reads block, and the router's tasks need Swift's few pool threads.
    static func exchange(port: Int, send: String, until marker: String) async throws -> String {
        try await exchange(port: port, pieces: [send], until: marker)
    }

    /// Sends `pieces` one by one (each its own segment, 20 ms apart, so the gateway reads them apart), then reads until
    /// the answer carrying `marker` has ended.
    static func exchange(port: Int, pieces: [String], until marker: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try blockingExchange(port: port, pieces: pieces, until: marker) })
            }
        }
    }

    private static func blockingExchange(port: Int, pieces: [String], until marker: String) throws -> String {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        try #require(connectLoopback(socket, port: port))
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var noDelay: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        for (index, piece) in pieces.enumerated() {
            if index > 0 { usleep(20_000) }
            _ = piece.withCString { Glibc.send(socket, $0, strlen($0), 0) }
        }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[..<count]
            let text = String(decoding: received, as: UTF8.self)
            if let range = text.range(of: marker, options: .caseInsensitive), text[range.upperBound...].contains("\r\n\r\n{") ,
                text[range.upperBound...].hasSuffix("}")
            {
                return text
            }
        }
        return String(decoding: received, as: UTF8.self)
    }
}
