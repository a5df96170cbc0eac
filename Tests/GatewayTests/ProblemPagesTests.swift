import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

@Suite("Gateway: a page per problem type", .tags(.integration), .kind(.integration))
struct ProblemPagesTests {
    @Test("every problem type the API answers, and http-<status>, has a page at /problems/<type> saying its status and meaning; anything else is the 404 problem")
    func pages() async throws {
        let fixture = try await GatewayRouterFixture()
        try await withUpstreamClient { client in
            let router = try fixture.router(environment: ["UPSTREAM_URL_TEMPLATE": "http://127.0.0.1:1/{service}"], client: client)
            try await Application(router: router).test(.router) { gateway in
                for type in ProblemType.all {
                    try await gateway.execute(uri: "/problems/\(type.slug)", method: .get) { response in
                        #expect(response.status == .ok, "\(type.slug)")
                        #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                        let page = String(buffer: response.body)
                        #expect(page.contains("HTTP \(type.status.code) "), "\(type.slug)")
                        #expect(page.contains("<code>\(type.slug)</code>"), "\(type.slug)")
                    }
                }
                let precondition = try await gateway.execute(uri: "/problems/precondition-failed", method: .get) { String(buffer: $0.body) }
                #expect(precondition.contains("<h1>Precondition failed</h1>") && precondition.contains("<code>If-Match</code>"))
                #expect(try await gateway.execute(uri: "/problems/http-418", method: .get) { $0.status } == .ok)
                for missing in ["/problems/no-such-thing", "/problems/http-200", "/problems/%3Cscript%3E"] {
                    try await gateway.execute(uri: missing, method: .get) { response in
                        #expect(response.status == .notFound, "\(missing)")
                        #expect(response.headers[.contentType] == "application/problem+json", "\(missing)")
                    }
                }
                #expect(try await gateway.execute(uri: "/problems/not-found", method: .post) { $0.status } == .methodNotAllowed)
            }
        }
    }
}
