import Foundation
import Hummingbird
import HummingbirdTesting
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

@Suite("Gateway: undeclared methods answer 405 with Allow", .tags(.unit), .kind(.unit))
struct MethodNotAllowedTests {
    let allowed = AllowedMethods(MethodNotAllowedMiddleware.routes(PublicAPI.routes))

    @Test("a routed path lists every method its templates declare; a path no route has lists none")
    func allowedMethods() {
        #expect(allowed.allowHeader(for: "/v1/me") == "GET, PATCH, DELETE")
        #expect(allowed.allowHeader(for: "/v1/me/") == "GET, PATCH, DELETE")
        #expect(allowed.allowHeader(for: "/v1/auth/guest") == "POST")
        #expect(allowed.allowHeader(for: "/v1/challenges/\(UUID().uuidString.lowercased())") == "GET, PATCH, DELETE")
        #expect(allowed.allowHeader(for: "/v1/attempts/anything/tasks/push-ups") == "PUT")
        #expect(allowed.allowHeader(for: "/openapi.json") == "GET")
        #expect(allowed.allowHeader(for: "/healthz") == "GET")
        // The router takes the literal `join` over `{groupID}`: PATCH is not allowed there, though it is on a group.
        #expect(allowed.allowHeader(for: "/v1/groups/join") == "POST")
        #expect(allowed.allowHeader(for: "/v1/groups/\(UUID().uuidString.lowercased())")?.contains("PATCH") == true)
        #expect(allowed.allowHeader(for: "/v1/nowhere") == nil)
        #expect(allowed.allowHeader(for: "/v1/me/extra/segments") == nil)
        #expect(allowed.allowHeader(for: "/internal/clock") == nil)
    }

    @Test("TRACE, or DELETE where only POST is routed, is a 405 problem with Allow; an unknown path stays 404")
    func router() async throws {
        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: TraceMiddleware())
        router.add(middleware: MethodNotAllowedMiddleware(allowed: allowed))
        router.get("/v1/me") { _, _ in "me" }
        router.post("/v1/auth/guest") { _, _ in "guest" }
        router.post("/v1/groups/join") { _, _ in "joined" }
        router.patch("/v1/groups/:groupID") { _, _ in "renamed" }
        let app = Application(router: router)
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/me", method: .init("TRACE")!) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, PATCH, DELETE")
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.headers[InternalHeaders.requestID] != nil)
                let problem = try JSONDecoder().decode(Problem.Body.self, from: Data(String(buffer: response.body).utf8))
                #expect(problem.type == Problem.typeBase + "method-not-allowed")
                #expect(problem.status == 405)
            }
            try await client.execute(uri: "/v1/auth/guest", method: .delete) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "POST")
            }
            try await client.execute(uri: "/v1/groups/join", method: .patch) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "POST")
            }
            try await client.execute(uri: "/v1/me", method: .head) { response in
                #expect(response.status == .methodNotAllowed)
            }
            try await client.execute(uri: "/v1/nowhere", method: .init("TRACE")!) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.allow] == nil)
            }
            try await client.execute(uri: "/v1/me", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "me")
            }
        }
    }
}
