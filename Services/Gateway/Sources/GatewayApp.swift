import AsyncHTTPClient
import Foundation
import GatewayDomain
import Hummingbird
import Logging
import NIOCore
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import ServiceLifecycle
import SurgeRuntime

public enum GatewayService {
    public static var api: [APIOperation] { GatewayAPI.all }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let gateway = try GatewaySettings.from(settings.reader)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [GatewayMigrations.set])
        let (database, logger) = (infrastructure.database, infrastructure.logger)
        // The real clock, even on a simulated stack: the development clock is no route of the public door, and what the
        // gateway times itself (stream tickets, purges) needs no simulated days.
        let now: @Sendable () -> Date = { Date() }
        // Identity's public keys come from a URL of any kind; the services are called through `Upstreams`.
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let upstreamClient = try UpstreamClient(tls: gateway.upstreams.values.contains { $0.urls.contains { $0.hasPrefix("https://") } })
        let hub = StreamHub(settings: gateway.stream) { StreamFeed.route($0, logger: logger) }
        let revocations = Revocations(client: database, logger: logger) { hub.endSessions($0) }
        var routes = ConsumerRoutes { RevocationRecorder(connection: $0, logger: $1) }
        routes.on(UserDeleted.self) { event, recorder in
            try await recorder.recordErasure(of: event.data.userID, at: event.data.deletedAt)
        }
        routes.on(SessionsRevoked.self) { event, recorder in
            try await recorder.recordRevocation(of: event.data.sessionIDs, userID: event.data.userID, at: event.data.revokedAt)
        }
        let consumer = try infrastructure.consumer(routes.handlers)
        let limiter = RateLimiter()
        let pipeline = RoutePipeline(
            settings: gateway, limiter: limiter,
            authenticator: Authenticator.make(client: client, jwksURL: gateway.identityJWKSURL, revocations: revocations, logger: logger),
            now: now)
        let feed = StreamFeed(hub: hub, logger: logger)
        let tail = try KafkaTail(configuration: settings.kafka, topics: StreamFeed.topics, logger: logger) { feed.handle($0) }
        let tickets = PostgresStreamTicketStore(client: database, logger: logger)

        let router = infrastructure.makeRouter(context: GatewayRequestContext.self, consumers: [consumer], developmentClock: false)
        let readProxy = addRoutes(
            to: router, settings: gateway, routes: PublicAPI.routes, pipeline: pipeline,
            upstreams: Upstreams(gateway.upstreams, client: upstreamClient), signer: settings.internalCalls, hub: hub, tickets: tickets,
            serverName: infrastructure.serverName, logger: logger)
        return infrastructure.makeApplication(
            router: router, consumers: [consumer],
            services: [
                PeriodicService("revocations", every: Revocations.refreshInterval, logger: logger) {
                    try await revocations.refresh()
                },
                PeriodicService("revocations-purge", every: .seconds(600), logger: logger) {
                    try await revocations.purge(now: now())
                },
                HTTPClientService(client: client, upstreams: upstreamClient),
                StreamFeedService(tail: tail, hub: hub),
                PeriodicService("stream-ticket-purge", every: .seconds(600), logger: logger) {
                    try await tickets.purge(now: now())
                },
                PeriodicService("rate-limit-eviction", every: .seconds(60), logger: logger) {
                    limiter.evictFull(now: Double(DispatchTime.now().uptimeNanoseconds) / 1e9, policies: gateway.rateLimits.all)
                },
            ],
            channelHandlers: { [RoutedAnswers(proxy: readProxy)] },
            beforeServerStarts: [{ try await revocations.refresh() }])
    }

    /// Everything the gateway answers besides the operational routes: its OpenAPI document, the dashboard's files and
    /// every public route in `routes`, through the pipeline to its service or to the gateway's own export and stream.
    /// Returns the proxy that answers the common calls of those routes before the router (`EventLoopProxyHandler`).
    @discardableResult
    static func addRoutes(
        to router: Router<GatewayRequestContext>, settings: GatewaySettings, routes: [PublicRoute], pipeline: RoutePipeline,
        upstreams: Upstreams, signer: InternalCallSigner, hub: StreamHub, tickets: any StreamTicketStore, serverName: String, logger: Logger
    ) -> EventLoopProxy {
        if let cors = settings.cors { router.add(middleware: cors) }
        router.add(middleware: TraceMiddleware())
        router.add(middleware: UnroutedRateLimitMiddleware(pipeline: pipeline))
        router.add(middleware: MethodNotAllowedMiddleware(allowed: AllowedMethods(MethodNotAllowedMiddleware.routes(routes))))
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: PublicAPI.openAPIDocument)))
        }
        DashboardController(chartJSPath: settings.chartJSPath).addRoutes(to: router)
        ProblemPagesController().addRoutes(to: router)
        let export = ExportController(upstreams: upstreams, signer: signer, now: pipeline.now)
        let stream = StreamController(
            hub: hub, tickets: tickets, authenticator: pipeline.authenticator, boards: BoardAccess(upstreams: upstreams, signer: signer),
            now: pipeline.now)
        let proxy = ProxyController(upstreams: upstreams, signer: signer, timeout: .seconds(Int64(settings.upstreamTimeoutSeconds)))
        PublicRouter(
            pipeline: pipeline,
            proxy: proxy,
            local: [
                PublicRouter.key(GatewayAPI.export.method, GatewayAPI.export.path): export.export,
                PublicRouter.key(GatewayAPI.streamTicket.method, GatewayAPI.streamTicket.path): stream.issueTicket,
                PublicRouter.key(GatewayAPI.stream.method, GatewayAPI.stream.path): stream.stream,
            ]
        ).addRoutes(routes, to: router)
        return EventLoopProxy(routes: ProxiedRoutes(routes), pipeline: pipeline, proxy: proxy, serverName: serverName, logger: logger)
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

/// Shuts the HTTP clients down after the server stopped.
struct HTTPClientService: Service {
    let client: HTTPClient
    let upstreams: UpstreamClient

    func run() async throws {
        try? await gracefulShutdown()
        await upstreams.shutdown()
        try await client.shutdown()
    }
}
