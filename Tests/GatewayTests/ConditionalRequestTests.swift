import Foundation
import GatewayDomain
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

@Suite("Gateway: entity tags and conditional requests", .tags(.integration), .kind(.integration))
struct ConditionalRequestTests {
    @Test("If-None-Match: a listed tag (weak or strong) or * matches; If-Match: only a strong listed tag or *")
    func comparisons() {
        let tag = #""abc""#
        #expect(EntityTags.noneMatchFails(tag, current: tag))
        #expect(EntityTags.noneMatchFails(#"W/"abc""#, current: tag))
        #expect(EntityTags.noneMatchFails(#""x", "abc""#, current: tag))
        #expect(EntityTags.noneMatchFails("*", current: tag))
        #expect(!EntityTags.noneMatchFails(#""abd""#, current: tag))
        #expect(EntityTags.matches(#" "x" ,"abc""#, current: tag))
        #expect(EntityTags.matches("*", current: tag))
        #expect(!EntityTags.matches(#"W/"abc""#, current: tag))
        #expect(!EntityTags.matches(#""abc"x"#, current: tag))
    }

    /// A profile behind `/v1/me` that PATCH renames, and a group that does not exist.
    final class Upstream: Sendable {
        let name = LockedValue("Ana")
        let patches = LockedValue(0)

        var application: some ApplicationProtocol {
            let router = Router()
            router.get("/:service/v1/me") { [self] _, _ in json(#"{"displayName":"\#(name.value)"}"#) }
            router.patch("/:service/v1/me") { [self] request, _ in
                let body = try await request.body.collect(upTo: 1 << 16)
                let change = try JSONDecoder().decode([String: String].self, from: Data(buffer: body))
                name.withLock { $0 = change["displayName"] ?? $0 }
                patches.withLock { $0 += 1 }
                return json(#"{"displayName":"\#(name.value)"}"#)
            }
            router.get("/:service/v1/groups/:groupID") { _, _ in
                Response(status: .notFound, headers: [.contentType: "application/problem+json"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
            }
            router.patch("/:service/v1/groups/:groupID") { [self] _, _ in
                patches.withLock { $0 += 1 }
                return Response(status: .notFound, headers: [.contentType: "application/problem+json"], body: .init(byteBuffer: ByteBuffer(string: "{}")))
            }
            return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        }

        private func json(_ text: String) -> Response {
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
        }
    }

    @Test("a JSON read carries a strong ETag and is 304 without a body to a matching If-None-Match; a PATCH with a stale If-Match is 412 and never reaches the service, with the current one or none it applies, and one to a missing resource answers for itself")
    func conditionalRequests() async throws {
        let fixture = try await GatewayRouterFixture()
        let upstream = Upstream()
        let user = UUID()
        try await withUpstreamClient { client in
            try await upstream.application.test(.live) { service in
                let router = try fixture.router(environment: ["UPSTREAM_URL_TEMPLATE": "http://127.0.0.1:\(try #require(service.port))/{service}"], client: client)
                try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { gateway in
                    let bearer = try await fixture.bearer(user)
                    func get(_ condition: String? = nil) async throws -> (HTTPResponse.Status, String?, ByteBuffer) {
                        var headers = bearer
                        if let condition { headers[.ifNoneMatch] = condition }
                        return try await gateway.execute(uri: "/v1/me", method: .get, headers: headers) { ($0.status, $0.headers[.eTag], $0.body) }
                    }
                    func patch(_ name: String, ifMatch: String?, path: String = "/v1/me") async throws -> (HTTPResponse.Status, ByteBuffer) {
                        var headers = bearer
                        headers[.contentType] = "application/json"
                        if let ifMatch { headers[.ifMatch] = ifMatch }
                        return try await gateway.execute(
                            uri: path, method: .patch, headers: headers, body: ByteBuffer(string: #"{"displayName":"\#(name)"}"#)
                        ) { ($0.status, $0.body) }
                    }

                    let (status, tag, body) = try await get()
                    let etag = try #require(tag)
                    #expect(status == .ok && String(buffer: body).contains("Ana"))
                    #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 24, "16 bytes of SHA-256, base64url, quoted")
                    #expect(try await get().1 == etag, "the same bytes, the same tag")
                    for condition in [etag, "W/" + etag, #""other", "# + etag, "*"] {
                        let (notModified, sameTag, empty) = try await get(condition)
                        #expect(notModified == .notModified && sameTag == etag && empty.readableBytes == 0, "\(condition)")
                    }
                    #expect(try await get(#""other""#).0 == .ok)

                    #expect(try await patch("Ben", ifMatch: etag).0 == .ok)
                    let (changed, newTag, _) = try await get()
                    #expect(changed == .ok && newTag != etag)
                    let (stale, problem) = try await patch("Cy", ifMatch: etag)
                    #expect(stale == .preconditionFailed)
                    #expect(String(buffer: problem).contains(ProblemType.preconditionFailed.uri))
                    #expect(upstream.name.value == "Ben" && upstream.patches.value == 1, "the stale change never reached the service")
                    #expect(try await patch("Cy", ifMatch: #"W/"# + (newTag ?? "")).0 == .preconditionFailed, "a weak tag never matches")
                    #expect(try await patch("Dee", ifMatch: nil).0 == .ok)
                    #expect(upstream.name.value == "Dee" && upstream.patches.value == 2)
                    #expect(try await patch("Eve", ifMatch: #""any""#, path: "/v1/groups/\(UUID().key)").0 == .notFound)
                    #expect(upstream.patches.value == 3, "nothing to compare with: the change answers for itself")
                }
            }
        }
    }
}

@Suite("Gateway: the address's budget on answers no route makes", .tags(.integration), .kind(.integration))
struct UnroutedRateLimitTests {
    @Test("a 404 for an unknown path and a 405 for an undeclared method carry RateLimit-* and spend the address's budget; past it they stay 404 and 405")
    func unroutedAnswersSpendTheBudget() async throws {
        let fixture = try await GatewayRouterFixture()
        try await withUpstreamClient { client in
            let environment = ["UPSTREAM_URL_TEMPLATE": "http://127.0.0.1:1/{service}", "RATE_LIMIT_PER_IP_PER_MINUTE": "3"]
            let router = try fixture.router(environment: environment, client: client)
            try await Application(router: router).test(.router) { gateway in
                var answers: [(HTTPResponse.Status, String?, String?)] = []
                for (path, method) in [("/v1/nowhere", HTTPRequest.Method.get), ("/v1/me", .init("TRACE")!), ("/v1/nowhere", .get), ("/v1/me", .init("TRACE")!)] {
                    answers.append(try await gateway.execute(uri: path, method: method) {
                        ($0.status, $0.headers[.rateLimitLimit], $0.headers[.rateLimitRemaining])
                    })
                }
                #expect(answers.map(\.0) == [.notFound, .methodNotAllowed, .notFound, .methodNotAllowed])
                #expect(answers.map(\.1) == ["3", "3", "3", "3"])
                #expect(answers.map(\.2) == ["2", "1", "0", "0"])
            }
        }
    }
}
