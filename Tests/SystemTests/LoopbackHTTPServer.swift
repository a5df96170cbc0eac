import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 server on 127.0.0.1 for stand-ins of outside parties (a sign-in provider's keys, a webhook
/// receiver). It answers on NIO's event loop, never on Swift's cooperative pool: the test process runs CPU-heavy unit
/// tests on that pool's two threads, and a stand-in served there can wait seconds for a thread, long enough for the
/// service calling it to give up (a JWKS fetch has 5 seconds).
final class LoopbackHTTPServer: Sendable {
    struct Request: Sendable {
        var method: HTTPMethod
        var path: String
        var headers: HTTPHeaders
        var body: String
    }

    struct Response: Sendable {
        var status: Int
        var contentType = "text/plain"
        var body: String
    }

    typealias Respond = @Sendable (Request) -> Response

    private let channel: any Channel

    init(respond: @escaping Respond) async throws {
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(Handler(respond: respond))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    var port: Int { channel.localAddress?.port ?? 0 }

    func stop() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let respond: Respond
        var head: HTTPRequestHead?
        var body = ByteBuffer()

        init(respond: @escaping Respond) { self.respond = respond }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body.clear()
            case .body(var chunk):
                body.writeBuffer(&chunk)
            case .end:
                guard let head else { return }
                self.head = nil
                let path = String(head.uri.prefix { $0 != "?" })
                let response = respond(Request(method: head.method, path: path, headers: head.headers, body: String(buffer: body)))
                let payload = ByteBuffer(string: response.body)
                var headers = HTTPHeaders([("content-type", response.contentType), ("content-length", "\(payload.readableBytes)")])
                if !head.isKeepAlive { headers.add(name: "connection", value: "close") }
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .init(statusCode: response.status), headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(payload))), promise: nil)
                let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
                if !head.isKeepAlive {
                    let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                    written.whenComplete { _ in bound.value.close(promise: nil) }
                }
            }
        }
    }
}
