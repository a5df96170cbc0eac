import Foundation
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

/// No service declares an `.admin` operation yet (the analytics service will): how one is documented and routed,
/// checked on a declaration made here.
@Suite("Admin operations in the OpenAPI document and the route table", .tags(.unit), .kind(.unit))
struct AdminOperationTests {
    struct Report: Codable, Sendable { var from: String }

    static let kpis = APIOperation(
        .get, "/v1/admin/kpis", id: "adminKPIs", service: .identity, summary: "The KPIs per day for a date range.", access: .admin,
        query: [.init("from", "First day."), .init("to", "Last day.")], response: Report.self)

    @Test("an admin operation needs the bearer token, documents the 404 everyone else gets, and no 401")
    func documented() throws {
        let data = try OpenAPIGenerator.document([Self.kpis])
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let operation = try #require(((document["paths"] as? [String: Any])?["/v1/admin/kpis"] as? [String: Any])?["get"] as? [String: Any])
        #expect((operation["security"] as? [[String: [String]]]) == [["bearer": []]])
        let responses = try #require(operation["responses"] as? [String: Any])
        #expect(responses["404"] != nil)
        #expect(responses["401"] == nil, "a refused caller gets 404, never 401")
        #expect((operation["x-problem-types"] as? [String])?.contains("not-found") == true)
        #expect((operation["description"] as? String)?.contains("Admins only") == true)
    }

    @Test("the gateway refuses its wrong methods with the unknown route's 404, not a 405 that would show it exists")
    func noAllowHeader() {
        let route = PublicRoute(.get, Self.kpis.path, .identity, .admin, .standard, idempotent: false)
        #expect(route.access.needsToken)
        let allowed = AllowedMethods(MethodNotAllowedMiddleware.routes([route]))
        #expect(allowed.allowHeader(for: "/v1/admin/kpis") == nil)
        #expect(allowed.allowHeader(for: "/admin/") == "GET")
    }
}
