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
/// the test. No route a test calls here is idempotent with a key, so the idempotency store is never reached.
struct GatewayRouterFixture: Sendable {
    let signer: InternalCallSigner
    let issuer: AccessTokenIssuer
    let revocations: Revocations
    let hub = StreamHub(settings: .init()) { _ in nil }
    let tickets = InMemoryStreamTicketStore()

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
        let settings = try GatewaySettings.from(EnvironmentReader(environment))
        let issuer = self.issuer
        let verifier = AccessTokenVerifier(logger: .test("verifier")) { String(decoding: try JSONEncoder().encode(issuer.jwks), as: UTF8.self) }
        let pipeline = RoutePipeline(
            settings: settings, limiter: RateLimiter(), authenticator: Authenticator(revocations: revocations, verifier: verifier),
            idempotency: IdempotencyStore(client: unstartedDatabase(), logger: .test("idempotency"), abandonAfter: .seconds(60)), now: { Date() })
        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        GatewayService.addRoutes(
            to: router, settings: settings, routes: routes, pipeline: pipeline,
            upstreams: Upstreams(settings.upstreams, client: client), signer: signer, hub: hub, tickets: tickets)
        return router
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
