import AsyncHTTPClient
import Foundation
import GatewayDomain
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import SurgeAuth
import SurgeRuntime
import SurgeTestSupport

@testable import GatewayService

/// The gateway's router as `GatewayService.buildApplication` assembles it (`GatewayService.addRoutes` behind the
/// problem middleware), without a database: access tokens from `issuer`, stream tickets in memory, revocations set by
/// the test.
struct GatewayRouterFixture: Sendable {
    let signer: InternalCallSigner
    let issuer: AccessTokenIssuer
    let revocations: Revocations
    let hub = StreamHub(settings: .init()) { _ in nil }
    let tickets = InMemoryStreamTicketStore()
    /// Requests that reached the router (not answered by the event-loop proxy).
    let routed = LockedValue(0)

    init() async throws {
        signer = try InternalCallSigner(secret: String(repeating: "k", count: 40))
        issuer = await AccessTokenIssuer(signingKey: try .generate())
        revocations = Revocations(client: unstartedDatabase(), logger: .test("revocations"))
    }

    /// A bearer header for `userID`'s access token.
    func bearer(_ userID: UUID, roles: [String] = [], session: UUID? = nil) async throws -> HTTPFields {
        [.authorization: "Bearer " + (try await issuer.issue(userID: userID, kind: "password", roles: roles, sessionID: session).token)]
    }

    /// The router over `routes`, its settings (upstream URLs among them) from `environment`.
    func router(routes: [PublicRoute] = PublicAPI.routes, environment: [String: String], client: UpstreamClient) throws -> Router<GatewayRequestContext> {
        try gateway(routes: routes, environment: environment, client: client).router
    }

    /// The gateway as it listens: the router behind the event-loop proxy, on a free port of 127.0.0.1.
    func application(
        routes: [PublicRoute] = PublicAPI.routes, environment: [String: String], client: UpstreamClient
    ) throws -> some ApplicationProtocol {
        let (router, proxy) = try gateway(routes: routes, environment: environment, client: client)
        return Application(
            router: router, server: .http1(configuration: .init(additionalChannelHandlers: [RoutedAnswers(proxy: proxy)])),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "surge-gateway"))
    }

    private func gateway(
        routes: [PublicRoute], environment: [String: String], client: UpstreamClient
    ) throws -> (router: Router<GatewayRequestContext>, proxy: EventLoopProxy) {
        let settings = try GatewaySettings.from(EnvironmentReader(environment))
        let issuer = self.issuer
        let verifier = AccessTokenVerifier(logger: .test("verifier")) { String(decoding: try JSONEncoder().encode(issuer.jwks), as: UTF8.self) }
        let pipeline = RoutePipeline(
            settings: settings, limiter: RateLimiter(), authenticator: Authenticator(revocations: revocations, verifier: verifier), now: { Date() })
        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: CountingMiddleware(count: routed))
        let proxy = GatewayService.addRoutes(
            to: router, settings: settings, routes: routes, pipeline: pipeline,
            upstreams: Upstreams(settings.upstreams, client: client), signer: signer, hub: hub, tickets: tickets,
            serverName: "surge-gateway", logger: .test("gateway"))
        return (router, proxy)
    }
}

/// Runs `body` with a client for the gateway's upstream calls, its connections closed afterwards, pass or fail.
func withUpstreamClient(_ body: (UpstreamClient) async throws -> Void) async throws {
    let client = try UpstreamClient()
    do {
        try await body(client)
    } catch {
        await client.shutdown()
        throw error
    }
    await client.shutdown()
}

/// A database client that is never started: what a test gives to stores it never reaches.
func unstartedDatabase() -> PostgresClient {
    PostgresClient(
        configuration: .init(host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil, tls: .disable),
        backgroundLogger: .test("unstarted-database"))
}

/// Counts the requests that reach the router.
struct CountingMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let count: LockedValue<Int>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        count.withLock { $0 += 1 }
        return try await next(request, context)
    }
}
