import AsyncHTTPClient
import Foundation
import GatewayDomain
import Hummingbird
import NIOCore
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import ServiceLifecycle
import SurgeRuntime

public enum GatewayService {
    public static var api: [APIOperation] { GatewayAPI.all }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        // Every setting is read before anything connects, so a bad one is reported alone.
        let reader = settings.reader
        let upstreamTimeout = try reader.int("UPSTREAM_TIMEOUT_SECONDS", default: 30, range: 1...600)
        let limits = try RateLimits.from(reader)
        let clientAddress = ClientAddress(trustedHops: try reader.int("TRUSTED_PROXY_HOPS", default: 0, range: 0...10))
        let maxBodyBytes = try reader.int("MAX_REQUEST_BYTES", default: 1 << 20, range: 1024...(64 << 20))
        let maxUploadBytes = try reader.int("MAX_UPLOAD_BYTES", default: 10 << 20, range: 1024...(256 << 20))
        let cors = try CORSPolicy.from(reader)
        let dashboard = DashboardController.from(reader)
        let streamSettings = StreamHub.Settings(
            queueLimit: try reader.int("STREAM_QUEUE_LIMIT", default: 256, range: 8...100_000),
            connectionsPerUser: try reader.int("STREAM_CONNECTIONS_PER_USER", default: 5, range: 1...10_000),
            replayEvents: try reader.int("STREAM_REPLAY_EVENTS", default: 20_000, range: 0...10_000_000),
            replaySeconds: Double(try reader.int("STREAM_REPLAY_SECONDS", default: 300, range: 0...86_400)),
            heartbeatSeconds: Double(try reader.int("STREAM_HEARTBEAT_SECONDS", default: 15, range: 1...300)))
        let infrastructure = try ServiceInfrastructure(settings, migrations: [GatewayMigrations.set])
        let client = Upstreams.makeClient()
        let upstreams = try Upstreams(reader, client: client)
        let clock = infrastructure.clock
        let now: @Sendable () -> Date = { clock.now() }
        // A claim is only taken over once the request that made it must have ended.
        let idempotency = IdempotencyStore(
            client: infrastructure.database, logger: infrastructure.logger, abandonAfter: .seconds(upstreamTimeout + 30))
        let streamLogger = infrastructure.logger
        let hub = StreamHub(settings: streamSettings) { StreamFeed.route($0, logger: streamLogger) }
        let revocations = Revocations(client: infrastructure.database, logger: infrastructure.logger) { hub.endSessions($0) }
        var handlers = EventHandlers()
        handlers.on(UserDeleted.self) { event, connection, logger in
            try await Revocations.recordErasure(of: event.data.userID, at: event.data.deletedAt, on: connection, logger: logger)
        }
        handlers.on(SessionsRevoked.self) { event, connection, logger in
            try await Revocations.recordRevocation(
                of: event.data.sessionIDs, userID: event.data.userID, at: event.data.revokedAt, on: connection, logger: logger)
        }
        let consumer = try infrastructure.consumer(handlers)
        let limiter = RateLimiter()
        let pipeline = RoutePipeline(
            limits: limits,
            limiter: limiter,
            authenticator: Authenticator.make(
                client: client,
                jwksURL: reader.string("IDENTITY_JWKS_URL", default: upstreams.url(for: .identity) + "/internal/jwks.json"),
                revocations: revocations, logger: infrastructure.logger),
            idempotency: idempotency,
            clientAddress: clientAddress,
            maxBodyBytes: maxBodyBytes,
            maxUploadBytes: maxUploadBytes,
            now: now)
        let export = ExportController(upstreams: upstreams, signer: settings.internalCalls, now: now)
        let feed = StreamFeed(hub: hub, logger: infrastructure.logger)
        let tail = try KafkaTail(configuration: settings.kafka, topics: StreamFeed.topics, logger: infrastructure.logger) { feed.handle($0) }
        let tickets = StreamTickets(client: infrastructure.database, logger: infrastructure.logger)
        let stream = StreamController(
            hub: hub, tickets: tickets, authenticator: pipeline.authenticator,
            boards: BoardAccess(upstreams: upstreams, signer: settings.internalCalls), now: now)

        let router = infrastructure.makeRouter(context: GatewayRequestContext.self, consumers: [consumer])
        if let cors { router.add(middleware: cors) }
        router.add(middleware: TraceMiddleware())
        router.add(
            middleware: MethodNotAllowedMiddleware(
                allowed: AllowedMethods(MethodNotAllowedMiddleware.routes(PublicAPI.routes, simulatedClock: infrastructure.clock.isSimulated))))
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: PublicAPI.openAPIDocument)))
        }
        dashboard.addRoutes(to: router)
        PublicRouter(
            pipeline: pipeline,
            proxy: ProxyController(
                upstreams: upstreams, signer: settings.internalCalls,
                timeout: .seconds(Int64(upstreamTimeout))),
            local: [
                PublicRouter.key(GatewayAPI.export.method, GatewayAPI.export.path): export.export,
                PublicRouter.key(GatewayAPI.streamTicket.method, GatewayAPI.streamTicket.path): stream.issueTicket,
                PublicRouter.key(GatewayAPI.stream.method, GatewayAPI.stream.path): stream.stream,
            ]
        ).addRoutes(PublicAPI.routes, to: router)
        return infrastructure.makeApplication(
            router: router, consumers: [consumer],
            services: [
                PeriodicService("revocations", every: Revocations.refreshInterval, logger: infrastructure.logger) {
                    try await revocations.refresh()
                },
                PeriodicService("revocations-purge", every: .seconds(600), logger: infrastructure.logger) {
                    try await revocations.purge(now: now())
                },
                HTTPClientService(client: client),
                StreamFeedService(tail: tail, hub: hub),
                PeriodicService("stream-ticket-purge", every: .seconds(600), logger: infrastructure.logger) {
                    try await tickets.purge(now: now())
                },
                PeriodicService("idempotency-purge", every: .seconds(600), logger: infrastructure.logger) {
                    try await idempotency.purge(olderThan: now().addingTimeInterval(-24 * 3600))
                },
                PeriodicService("rate-limit-eviction", every: .seconds(60), logger: infrastructure.logger) {
                    limiter.evictFull(now: Double(DispatchTime.now().uptimeNanoseconds) / 1e9, policies: limits.all)
                },
            ],
            beforeServerStarts: [{ try await revocations.refresh() }])
    }
}

/// Follows the public topics for the stream's clients; on shutdown, tells each to reconnect elsewhere.
struct StreamFeedService: Service {
    let tail: KafkaTail
    let hub: StreamHub

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await tail.run()
        } onGracefulShutdown: {
            hub.shutDown()
        }
        hub.shutDown()
    }
}

/// Shuts the upstream HTTP client down after the server stopped.
struct HTTPClientService: Service {
    let client: HTTPClient

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}
