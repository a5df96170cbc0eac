import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

/// The least a proxy written on SwiftNIO can cost: each client connection glued to a connection of its own to the
/// service, bytes passed on as they arrive, nothing parsed. Not an HTTP proxy (it cannot route, sign or limit
/// anything); the gateway benchmark runs it beside nginx to show how much of a hop NIO's reads, writes and event loop
/// take before any HTTP work. Hand-written because no package provides a TCP relay; it is NIO's own `GlueHandler`
/// example, cut down.
struct ByteRelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay", abstract: "A TCP byte relay on SwiftNIO (bench only): each connection glued to one of its own to the upstream.")

    @Option(help: "Port to listen on (127.0.0.1).") var port: Int
    @Option(help: "Upstream as host:port.") var upstream: String

    func run() async throws {
        let parts = upstream.split(separator: ":")
        guard parts.count == 2, let upstreamPort = Int(parts[1]) else { throw BenchError("--upstream \(upstream): expected host:port") }
        let host = String(parts[0])
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { client in
                ClientBootstrap(group: client.eventLoop).connect(host: host, port: upstreamPort).flatMapThrowing { service in
                    let (toService, toClient) = GlueHandler.pair()
                    try client.pipeline.syncOperations.addHandler(toService)
                    try service.pipeline.syncOperations.addHandler(toClient)
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        try await server.closeFuture.get()
    }
}

/// One side of a glued pair: what its channel reads, the partner's channel writes; a read waits while the partner's
/// channel is not writable.
private final class GlueHandler: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private var readPending = false

    static func pair() -> (GlueHandler, GlueHandler) {
        let (first, second) = (GlueHandler(), GlueHandler())
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.context?.write(data, promise: nil) }
    func channelReadComplete(context: ChannelHandlerContext) { partner?.context?.flush() }
    func channelInactive(context: ChannelHandlerContext) { partner?.context?.close(promise: nil) }
    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        guard context.channel.isWritable, let partner, partner.readPending else { return }
        partner.readPending = false
        partner.context?.read()
    }

    func read(context: ChannelHandlerContext) {
        if partner?.context?.channel.isWritable ?? false { context.read() } else { readPending = true }
    }
}

/// The relay as a process of its own for one load run (so its CPU is its own), listening on `port`.
struct ByteRelay {
    var port: Int

    var url: String { "http://127.0.0.1:\(port)" }

    /// Runs `body` with the relay in front of `upstream` (`http://host:port`), passing the relay's process id.
    func running<T>(upstream: String, _ body: (Int32) async throws -> T) async throws -> T {
        guard let upstreamURL = URL(string: upstream), let host = upstreamURL.host, let upstreamPort = upstreamURL.port else {
            throw BenchError("relay: upstream \(upstream) is not http://host:port")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["relay", "--port", String(port), "--upstream", "\(host):\(upstreamPort)"]
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        try await Nginx.awaitHealthy(url, process: process, name: "the relay")
        return try await body(process.processIdentifier)
    }
}
