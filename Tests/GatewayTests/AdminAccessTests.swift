import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SurgeAuth
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

/// The gateway in front of a small upstream service: an `.admin` route answers whoever is not an admin exactly as an
/// unknown route does, before forwarding anything, and forwards an admin's call with the role signed, so the
/// service's `requireAdmin()` lets it through.
@Suite("Gateway: admin routes", .tags(.unit), .kind(.unit))
struct AdminAccessTests {
    static let adminRoute = PublicRoute(.get, "/v1/admin/probe", .identity, .admin, .standard, idempotent: false)
    static let userRoute = PublicRoute(.get, "/v1/me/probe", .identity, .authenticated, .standard, idempotent: false)
    static let routes = [adminRoute, userRoute]

    /// The service side: its own middleware and `requireAdmin()`, counting what reaches it.
    static func upstream(signer: InternalCallSigner, calls: LockedCounter) -> some ApplicationProtocol {
        let router = RouterTesting.router(signer: signer)
        router.get("/v1/admin/probe") { _, context in
            calls.increment()
            return "admin " + (try context.requireAdmin()).uuidString.lowercased()
        }
        router.get("/v1/me/probe") { _, context in
            calls.increment()
            return "user " + (try context.caller()).uuidString.lowercased() + " roles=" + context.callerRoles.sorted().joined(separator: ",")
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    struct Answer {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: String
        /// The problem document without `instance` (the path, which differs between two paths by definition).
        var problem: Problem.Body? {
            guard var problem = try? JSONDecoder().decode(Problem.Body.self, from: Data(body.utf8)) else { return nil }
            problem.instance = nil
            return problem
        }
    }

    @Test("anonymous, bad-token, guest and ordinary callers get the unknown route's 404 (nothing forwarded); an admin's call is forwarded with its role signed")
    func adminRoutes() async throws {
        let fixture = try await GatewayRouterFixture()
        let issuer = fixture.issuer
        let (adminID, userID, guestID) = (UUID(), UUID(), UUID())
        let admin = try await issuer.issue(userID: adminID, kind: "password", roles: [AccessTokenClaims.adminRole]).token
        let user = try await issuer.issue(userID: userID, kind: "password").token
        let guest = try await issuer.issue(userID: guestID, kind: "guest").token
        let expiredAdmin = try await issuer.issue(
            userID: adminID, kind: "password", roles: [AccessTokenClaims.adminRole], now: Date().addingTimeInterval(-3600)).token
        let calls = LockedCounter()
        try await withUpstreamClient { client in
            try await Self.upstream(signer: fixture.signer, calls: calls).test(.live) { upstreamClient in
                let port = try #require(upstreamClient.port)
                let router = try fixture.router(routes: Self.routes, environment: ["UPSTREAM_IDENTITY_URL": "http://127.0.0.1:\(port)"], client: client)
                try await Application(router: router).test(.router) { gateway in
                    func call(_ path: String, method: HTTPRequest.Method = .get, token: String? = nil) async throws -> Answer {
                        var headers: HTTPFields = [:]
                        if let token { headers[.authorization] = "Bearer \(token)" }
                        return try await gateway.execute(uri: path, method: method, headers: headers) { response in
                            Answer(status: response.status, headers: response.headers, body: String(buffer: response.body))
                        }
                    }
                    let unknown = try await call("/v1/admin/nothing-here")
                    #expect(unknown.status == .notFound)
                    #expect(unknown.headers[.contentType] == "application/problem+json")
                    let unknownProblem = try #require(unknown.problem)
                    #expect(unknownProblem.type == Problem.typeBase + "not-found")
                    #expect(unknown.headers[.rateLimitLimit] != nil && unknown.headers[.rateLimitRemaining] != nil, "the address's budget, spent")
                    let refusals: [(String, HTTPRequest.Method, String?)] = [
                        ("anonymous", .get, nil), ("garbage token", .get, "not.a.token"), ("guest", .get, guest), ("ordinary user", .get, user),
                        ("expired admin token", .get, expiredAdmin), ("admin, undeclared method", .delete, admin),
                        ("ordinary user, undeclared method", .post, user),
                    ]
                    for (who, method, token) in refusals {
                        let answer = try await call(Self.adminRoute.path, method: method, token: token)
                        #expect(answer.status == .notFound, "\(who)")
                        #expect(answer.headers[.contentType] == unknown.headers[.contentType], "\(who)")
                        #expect(answer.problem == unknownProblem, "\(who): \(answer.body)")
                        // The same header names as the unknown route's answer: RateLimit-* too, no Allow, no WWW-Authenticate.
                        #expect(Set(answer.headers.map(\.name)) == Set(unknown.headers.map(\.name)), "\(who): \(answer.headers)")
                    }
                    #expect(calls.value == 0, "nothing reached the service")

                    let allowed = try await call(Self.adminRoute.path, token: admin)
                    #expect(allowed.status == .ok)
                    #expect(allowed.body == "admin " + adminID.uuidString.lowercased())
                    #expect(allowed.headers[.rateLimitLimit] != nil)
                    // An ordinary route still serves ordinary users, and forwards no roles for them.
                    let ordinary = try await call(Self.userRoute.path, token: user)
                    #expect(ordinary.status == .ok)
                    #expect(ordinary.body == "user \(userID.uuidString.lowercased()) roles=")
                    let adminOnUserRoute = try await call(Self.userRoute.path, token: admin)
                    #expect(adminOnUserRoute.body == "user \(adminID.uuidString.lowercased()) roles=admin")
                    // A client's own roles header is dropped, not forwarded.
                    let smuggled = try await gateway.execute(
                        uri: Self.userRoute.path, method: .get, headers: [.authorization: "Bearer \(user)", InternalHeaders.roles: "admin"]
                    ) { String(buffer: $0.body) }
                    #expect(smuggled == "user \(userID.uuidString.lowercased()) roles=")
                    #expect(calls.value == 4)
                }
            }
        }
    }
}

final class LockedCounter: Sendable {
    private let count = LockedValue(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
