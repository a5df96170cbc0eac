import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import SurgeTestSupport
import Testing

@testable import GatewayService

@Suite("Gateway: the upstream client", .tags(.unit), .kind(.unit))
struct UpstreamClientTests {
    @Test("an upstream is http(s)://host[:port][/path]: default ports, IPv6 in brackets, a path prefix; another scheme or a bad port is refused")
    func endpoints() throws {
        func parsed(_ url: String) -> String? { UpstreamClient.Endpoint(url: url).map { "\($0.host) \($0.port) \($0.tls) \($0.pathPrefix)" } }
        #expect(parsed("http://progress:8083") == "progress 8083 false ")
        #expect(parsed("http://progress") == "progress 80 false ")
        #expect(parsed("https://progress") == "progress 443 true ")
        #expect(parsed("http://[::1]:8083") == "::1 8083 false ")
        #expect(parsed("http://[::1]") == "::1 80 false ")
        #expect(parsed("http://gateway-ingress:80/surge/progress/") == "gateway-ingress 80 false /surge/progress")
        #expect(try #require(UpstreamClient.Endpoint(url: "http://progress:8083")).hostHeader == "progress:8083")
        #expect(try #require(UpstreamClient.Endpoint(url: "https://progress:443")).hostHeader == "progress")
        for refused in ["http://progress:8083/v1?x", "ftp://progress", "progress:8083", "http://", "http://progress:0", "http://progress:http", "http://:80"] {
            #expect(UpstreamClient.Endpoint(url: refused) == nil, "\(refused)")
        }
    }

    /// A service that says which connection (client port) each request came on, echoes bodies, sends large
    /// answers, sleeps, and closes the connection when asked.
    struct PeerContext: RequestContext {
        var coreContext: CoreRequestContextStorage
        let peerPort: Int

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            peerPort = source.channel.remoteAddress?.port ?? 0
        }
    }

    static func service() -> some ApplicationProtocol {
        let router = Router(context: PeerContext.self)
        router.get("/peer") { _, context in "\(context.peerPort)" }
        router.post("/echo") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 20)
            return Response(
                status: .created,
                headers: [.contentType: request.headers[.contentType] ?? "", HTTPField.Name("X-Length")!: request.headers[.contentLength] ?? "none"],
                body: .init(byteBuffer: body))
        }
        router.get("/large") { _, _ in
            Response(status: .ok, body: .init(byteBuffer: ByteBuffer(repeating: UInt8(ascii: "x"), count: 100_000)))
        }
        router.get("/slow") { _, _ in
            try await Task.sleep(for: .seconds(3))
            return "late"
        }
        // Parts of unannounced length: Hummingbird sends them chunked.
        router.get("/chunked/{parts}") { _, context in
            let parts = try context.parameters.require("parts", as: Int.self)
            let stream = AsyncStream<ByteBuffer> { continuation in
                for index in 0..<parts { continuation.yield(ByteBuffer(string: "part \(index);")) }
                continuation.finish()
            }
            return Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(asyncSequence: stream))
        }
        router.get("/nothing") { _, _ in Response(status: .noContent) }
        router.head("/announced") { _, _ in Response(status: .ok, headers: [.contentLength: "42"]) }
        router.get("/closing") { _, _ in Response(status: .ok, headers: [.connection: "close"], body: .init(byteBuffer: ByteBuffer(string: "bye"))) }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    func withService(
        bufferLimit: Int = 1 << 20, _ body: @Sendable @escaping (UpstreamClient, UpstreamClient.Endpoint) async throws -> Void
    ) async throws {
        let client = try UpstreamClient(bufferLimit: bufferLimit)
        do {
            try await Self.service().test(.live) { service in
                let port = try #require(service.port)
                try await body(client, try #require(UpstreamClient.Endpoint(url: "http://127.0.0.1:\(port)")))
            }
        } catch {
            await client.shutdown()
            throw error
        }
        await client.shutdown()
    }

    func text(_ response: UpstreamClient.Response) async throws -> String {
        String(buffer: try await response.body.collect(upTo: 1 << 20))
    }

    @Test("requests one after another on one event loop share one kept-alive connection")
    func keepAlive() async throws {
        try await withService { client, endpoint in
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            var peers: Set<String> = []
            for _ in 0..<5 {
                let response = try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(5))
                #expect(response.status == .ok)
                peers.insert(try await text(response))
            }
            #expect(peers.count == 1, "\(peers)")
        }
    }

    @Test("concurrent requests each get their own connection and their own answer")
    func concurrent() async throws {
        try await withService { client, endpoint in
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        var body = ByteBuffer()
                        body.writeString("request \(index)")
                        let response = try await client.execute(.init(method: .POST, target: "/echo", body: body), to: endpoint, timeout: .seconds(5))
                        return try await text(response)
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(answers == Set((0..<20).map { "request \($0)" }))
        }
    }

    @Test("a body goes with its length and headers; the answer's status and headers come back as sent")
    func bodyAndHeaders() async throws {
        try await withService { client, endpoint in
            let response = try await client.execute(
                .init(method: .POST, target: "/echo", headers: ["Content-Type": "application/json"], body: ByteBuffer(string: #"{"a":1}"#)),
                to: endpoint, timeout: .seconds(5))
            #expect(response.status == .created)
            #expect(response.headers.first(name: "content-type") == "application/json")
            #expect(response.headers.first(name: "x-length") == "7")
            #expect(try await text(response) == #"{"a":1}"#)
            let empty = try await client.execute(.init(method: .POST, target: "/echo", body: ByteBuffer()), to: endpoint, timeout: .seconds(5))
            #expect(empty.headers.first(name: "x-length") == "0")
        }
    }

    @Test("an answer larger than the buffer limit is streamed, whole, and the connection is used again afterwards")
    func streamed() async throws {
        try await withService(bufferLimit: 1024) { client, endpoint in
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let before = try await text(try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(5)))
            let large = try await client.execute(.init(target: "/large"), to: endpoint, on: loop, timeout: .seconds(5))
            guard case .streamed = large.body else {
                Issue.record("a 100,000-byte answer was buffered past a 1,024-byte limit")
                return
            }
            let body = try await large.body.collect(upTo: 1 << 20)
            #expect(body.readableBytes == 100_000)
            #expect(body.readableBytesView.allSatisfy { $0 == UInt8(ascii: "x") })
            let after = try await text(try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(5)))
            #expect(before == after)
            await #expect(throws: UpstreamClient.Failure.tooLarge) {
                try await client.execute(.init(target: "/large"), to: endpoint, timeout: .seconds(5)).body.collect(upTo: 50_000)
            }
        }
    }

    @Test("a chunked answer is read whole, buffered or streamed; answers to HEAD and 204s have no body; the connection is used again after each")
    func framings() async throws {
        try await withService(bufferLimit: 1024) { client, endpoint in
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let peer = try await text(try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(5)))
            func expectSameConnection(after what: String) async throws {
                let now = try await text(try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(5)))
                #expect(now == peer, "a new connection after \(what)")
            }
            let few = try await client.execute(.init(target: "/chunked/3"), to: endpoint, on: loop, timeout: .seconds(5))
            #expect(try await text(few) == "part 0;part 1;part 2;")
            #expect(few.headers.first(name: "content-type") == "text/plain")
            try await expectSameConnection(after: "a chunked answer, buffered")
            let many = try await client.execute(.init(target: "/chunked/500"), to: endpoint, on: loop, timeout: .seconds(5))
            guard case .streamed = many.body else {
                Issue.record("a chunked answer of several KiB was buffered past a 1,024-byte limit")
                return
            }
            #expect(try await text(many) == (0..<500).map { "part \($0);" }.joined())
            try await expectSameConnection(after: "a chunked answer, streamed")
            let nothing = try await client.execute(.init(target: "/nothing"), to: endpoint, on: loop, timeout: .seconds(5))
            #expect(nothing.status == .noContent)
            #expect(try await text(nothing) == "")
            try await expectSameConnection(after: "a 204")
            let announced = try await client.execute(.init(method: .HEAD, target: "/announced"), to: endpoint, on: loop, timeout: .seconds(5))
            #expect(announced.status == .ok && announced.headers.first(name: "content-length") == "42")
            #expect(try await text(announced) == "")
            try await expectSameConnection(after: "an answer to HEAD")
        }
    }

    @Test("an upstream that does not answer in time fails the request; the next request is answered on a new connection")
    func timeout() async throws {
        try await withService { client, endpoint in
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let started = ContinuousClock.now
            await #expect(throws: UpstreamClient.Failure.timedOut) {
                try await client.execute(.init(target: "/slow"), to: endpoint, on: loop, timeout: .milliseconds(200))
            }
            #expect(ContinuousClock.now - started < .seconds(2))
            let response = try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(5))
            #expect(response.status == .ok)
        }
    }

    @Test(
        "a connection's one timer keeps every exchange's deadline: a shorter one after a longer one, and one after the timer fired while the connection was idle"
    )
    func deadlinesOnOneConnection() async throws {
        try await withService { client, endpoint in
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            // The timer is set for 30 s here; the next exchange on the same connection has 200 ms.
            let peer = try await text(try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(30)))
            var started = ContinuousClock.now
            await #expect(throws: UpstreamClient.Failure.timedOut) {
                try await client.execute(.init(target: "/slow"), to: endpoint, on: loop, timeout: .milliseconds(200))
            }
            #expect(ContinuousClock.now - started < .seconds(2))
            // A new connection: its timer (2 s) fires while it is idle, and the exchange after it still has its own. The
            // deadlines of exchanges that must succeed leave room for a loaded machine.
            let fresh = try await text(try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(2)))
            #expect(fresh != peer)
            try await Task.sleep(for: .milliseconds(2_500))
            started = ContinuousClock.now
            await #expect(throws: UpstreamClient.Failure.timedOut) {
                try await client.execute(.init(target: "/slow"), to: endpoint, on: loop, timeout: .milliseconds(200))
            }
            #expect(ContinuousClock.now - started < .seconds(2))
            // A longer deadline after a shorter one: the timer set for the first (2 s) fires while `/slow` (3 s) is
            // answered, and re-arms for its deadline rather than failing it.
            let before = try await text(try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(2)))
            let slow = try await client.execute(.init(target: "/slow"), to: endpoint, on: loop, timeout: .seconds(10))
            #expect(try await text(slow) == "late")
            #expect(try await text(try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(5))) == before)
        }
    }

    @Test("an answer that closes its connection is delivered, and the connection is not used again")
    func closing() async throws {
        try await withService { client, endpoint in
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let first = try await text(try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(5)))
            #expect(try await text(try await client.execute(.init(target: "/closing"), to: endpoint, on: loop, timeout: .seconds(5))) == "bye")
            let second = try await text(try await client.execute(.init(target: "/peer"), to: endpoint, on: loop, timeout: .seconds(5)))
            #expect(first != second)
        }
    }

    @Test("a port nobody listens on fails as a refused connection, which the replicas' failover recognises")
    func refused() async throws {
        try await withUpstreamClient { client in
            let endpoint = try #require(UpstreamClient.Endpoint(url: "http://127.0.0.1:1"))
            do {
                _ = try await client.execute(.init(target: "/peer"), to: endpoint, timeout: .seconds(5))
                Issue.record("a request to port 1 was answered")
            } catch {
                #expect(Upstreams.isRefusedConnection(error), "\(error)")
            }
        }
    }

    /// A service that answers every request it reads with `answer`'s bytes (then closes, with `closing`): what
    /// Hummingbird never sends.
    func withRawService(
        answer: String, closing: Bool = false, _ body: @Sendable (UpstreamClient, UpstreamClient.Endpoint) async throws -> Void
    ) async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(RawAnswer(answer: answer, closing: closing)) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { server.close(promise: nil) }
        let port = try #require(server.localAddress?.port)
        try await withUpstreamClient { client in
            try await body(client, try #require(UpstreamClient.Endpoint(url: "http://127.0.0.1:\(port)")))
        }
    }

    final class RawAnswer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let answer: String
        let closing: Bool

        init(answer: String, closing: Bool) { (self.answer, self.closing) = (answer, closing) }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let closing = closing
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer))).whenComplete { _ in
                if closing { context.close(promise: nil) }
            }
        }
    }

    @Test("an interim 100 is passed over; a body delimited by the connection's end is read to its end")
    func interimAndUntilClose() async throws {
        try await withRawService(answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nX-Kind: raw\r\n\r\nto the end", closing: true) { client, endpoint in
            let response = try await client.execute(.init(target: "/"), to: endpoint, timeout: .seconds(5))
            #expect(response.status == .ok && response.headers.first(name: "x-kind") == "raw")
            #expect(try await text(response) == "to the end")
        }
    }

    @Test(
        "an answer the client cannot read fails the request at once, without waiting for the timeout",
        arguments: [
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/2 200 OK\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "HTTP/1.1 101 Switching Protocols\r\n\r\n",
        ])
    func unreadable(_ answer: String) async throws {
        try await withRawService(answer: answer) { client, endpoint in
            let started = ContinuousClock.now
            await #expect(throws: UpstreamClient.Failure.malformedAnswer) {
                try await client.execute(.init(target: "/"), to: endpoint, timeout: .seconds(5))
            }
            #expect(ContinuousClock.now - started < .seconds(2))
        }
    }

    @Test("an answer cut short by the connection's end fails the request")
    func cutShort() async throws {
        try await withRawService(answer: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", closing: true) { client, endpoint in
            await #expect(throws: UpstreamClient.Failure.connectionClosed) {
                try await client.execute(.init(target: "/"), to: endpoint, timeout: .seconds(5))
            }
        }
    }
}
