import AsyncHTTPClient
import Hummingbird
import NIOCore
import ServiceLifecycle
import SurgeRuntime

public enum GatewayService {
    public static let name = "gateway"
    public static let defaultPort = 8080

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let infrastructure = try await ServiceInfrastructure.start(settings, migrations: [])
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let router = infrastructure.makeRouter(context: GatewayRequestContext.self)
        router.add(middleware: TraceMiddleware())
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: PublicAPI.openAPIDocument)))
        }
        let upstreams = Upstreams(settings.reader)
        let authenticator = Authenticator.make(
            client: client,
            jwksURL: settings.reader.string("IDENTITY_JWKS_URL", default: upstreams.url(for: .identity) + "/internal/jwks.json"),
            logger: infrastructure.logger)
        ProxyController(
            client: client, upstreams: upstreams, authenticator: authenticator,
            timeout: .seconds(Int64(try settings.reader.int("UPSTREAM_TIMEOUT_SECONDS", default: 30, range: 1...600)))
        ).addRoutes(PublicAPI.routes, to: router)
        return infrastructure.makeApplication(router: router, services: [HTTPClientService(client: client)])
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
