import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOSSL
import ServiceLifecycle
import Synchronization

/// A stand-in for Firebase Cloud Messaging's HTTP v1 API, served by the bench over TLS with HTTP/2 offered by ALPN (as
/// Google serves it): `POST /token` grants any service-account assertion an hour's access token, and
/// `POST /v1/projects/<project>/messages:send` accepts every message at once. It counts what it received, when, and
/// over how many connections (one, when the sender speaks HTTP/2).
final class FCMFake: Sendable {
    struct Receipts: Sendable {
        var messages = 0
        var first: ContinuousClock.Instant?
        var last: ContinuousClock.Instant?
        var connections = Set<String>()
    }

    private final class Tally: Sendable {
        let receipts = Mutex(Receipts())
    }

    private let tally = Tally()
    private let group: ServiceGroup
    private let running: AsyncStream<Void>

    var received: Receipts { tally.receipts.withLock { $0 } }

    private struct Context: RequestContext {
        var coreContext: CoreRequestContextStorage
        let peer: String

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            peer = source.channel.remoteAddress?.description ?? "unknown"
        }
    }

    /// Starts serving on 127.0.0.1:`port` with the certificate and key (PEM files) the stack's notifications trusts.
    init(port: Int, certificate: String, key: String) throws {
        let router = Router(context: Context.self)
        router.post("/token") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"access_token": "bench-access-token", "expires_in": 3600, "token_type": "Bearer"}"#)))
        }
        router.post("/v1/projects/:project/messages:send") { [tally] request, context in
            _ = try await request.body.collect(upTo: 64 * 1024)
            let now = ContinuousClock.now
            let count = tally.receipts.withLock { receipts in
                receipts.messages += 1
                receipts.first = receipts.first ?? now
                receipts.last = now
                receipts.connections.insert(context.peer)
                return receipts.messages
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"name": "projects/bench/messages/\#(count)"}"#)))
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        tls.applicationProtocols = ["h2", "http/1.1"]
        var logger = Logger(label: "fcm-fake")
        logger.logLevel = .warning
        let (running, announce) = AsyncStream<Void>.makeStream()
        self.running = running
        let application = Application(
            router: router, server: try .http2Upgrade(tlsConfiguration: tls), configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { _ in announce.finish() }, logger: logger)
        group = ServiceGroup(services: [application], gracefulShutdownSignals: [], logger: logger)
    }

    /// Serves until `body` returns; `body` starts once the fake listens (a fake that cannot start throws).
    func serving<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Bool.self) { tasks in
            tasks.addTask {
                try await self.group.run()
                return false
            }
            tasks.addTask {
                for await _ in self.running {}
                return true
            }
            guard try await tasks.next() == true else { throw BenchError("the FCM fake stopped before it listened") }
            do {
                let result = try await body()
                await group.triggerGracefulShutdown()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
        }
    }
}
