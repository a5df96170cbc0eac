import Foundation
import SurgeTestSupport
import Testing

@Suite("Gateway: limits, idempotency, CORS and errors", .tags(.system), .kind(.system), .serialized)
struct GatewaySystemTests {
    func guest(_ http: TestHTTP, name: String, headers: [(String, String)] = []) async throws -> TestResponse {
        try await http.post("/v1/auth/guest", json: ["displayName": name, "timeZone": "Europe/Rome"], headers: headers)
    }

    @Test("credential routes and users have rate limits, answered 429 with Retry-After and RateLimit headers")
    func rateLimits() async throws {
        try await withTestStack("gateway-limits") { stack in
            try await stack.start("identity")
            try await stack.start("gateway", environment: ["RATE_LIMIT_CREDENTIALS_PER_MINUTE": "3", "RATE_LIMIT_PER_USER_PER_MINUTE": "4"])
            let http = try stack.http()
            var tokens: [String] = []
            for index in 0..<3 {
                let response = try await guest(http, name: "user-\(index)")
                #expect(response.status == 201)
                #expect(response.header("RateLimit-Limit") == "3")
                #expect(response.header("RateLimit-Remaining") == String(2 - index))
                tokens.append(((response.json["tokens"] as? [String: Any])?["accessToken"] as? String) ?? "")
            }
            let refused = try await guest(http, name: "one too many")
            #expect(refused.status == 429)
            #expect(refused.json["type"] as? String == "https://surge.example/problems/rate-limited")
            #expect(Int(refused.header("Retry-After") ?? "") ?? 0 >= 1)
            #expect(refused.header("RateLimit-Remaining") == "0")
            #expect(try await stack.database.count("SELECT count(*) FROM identity.users") == 3)

            let first = http.authorized(tokens[0])
            for _ in 0..<4 { #expect(try await first.get("/v1/me").status == 200) }
            let limited = try await first.get("/v1/me")
            #expect(limited.status == 429)
            #expect(try await http.authorized(tokens[1]).get("/v1/me").status == 200)
        }
    }

    @Test("a retried create with the same Idempotency-Key returns the first response and creates once")
    func idempotencyKeys() async throws {
        try await withTestStack("gateway-idempotency") { stack in
            try await stack.start("identity")
            try await stack.start("gateway")
            let http = try stack.http()
            let first = try await guest(http, name: "Once", headers: [("Idempotency-Key", "key-1")])
            let retry = try await guest(http, name: "Once", headers: [("Idempotency-Key", "key-1")])
            #expect(first.status == 201)
            #expect(retry.status == 201)
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(retry.body == first.body)
            #expect(try await stack.database.count("SELECT count(*) FROM identity.users") == 1)

            let different = try await guest(http, name: "Other", headers: [("Idempotency-Key", "key-1")])
            // The key is bound to the stored first request: a conflict with stored state, not a malformed request.
            #expect(different.status == 409)
            #expect(different.json["type"] as? String == "https://surge.example/problems/idempotency-key-reused")
            #expect(different.header("Idempotent-Replayed") == nil)
            let invalid = try await guest(http, name: "Bad key", headers: [("Idempotency-Key", "has spaces")])
            #expect(invalid.status == 422)
            let unkeyed = try await guest(http, name: "Once")
            #expect(unkeyed.status == 201)
            #expect(try await stack.database.count("SELECT count(*) FROM identity.users") == 2)
        }
    }

    @Test("signed-out idempotency keys belong to the client's address: nobody else can replay them")
    func anonymousKeysAreScoped() async throws {
        try await withTestStack("gateway-idempotency-scope") { stack in
            try await stack.start("identity")
            try await stack.start("gateway", environment: ["TRUSTED_PROXY_HOPS": "1"])
            let http = try stack.http()
            let mine = try await guest(http, name: "Sam", headers: [("Idempotency-Key", "guessable"), ("X-Forwarded-For", "203.0.113.7")])
            let again = try await guest(http, name: "Sam", headers: [("Idempotency-Key", "guessable"), ("X-Forwarded-For", "203.0.113.7")])
            let theirs = try await guest(http, name: "Sam", headers: [("Idempotency-Key", "guessable"), ("X-Forwarded-For", "198.51.100.9")])
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(again.body == mine.body)
            #expect(theirs.status == 201)
            #expect(theirs.header("Idempotent-Replayed") == nil)
            #expect((theirs.json["user"] as? [String: Any])?["id"] as? String != (mine.json["user"] as? [String: Any])?["id"] as? String)
        }
    }

    @Test("CORS for listed origins, body limits, unknown routes and the OpenAPI document")
    func edges() async throws {
        try await withTestStack("gateway-edges") { stack in
            try await stack.start("identity")
            try await stack.start("gateway", environment: ["CORS_ALLOWED_ORIGINS": "https://app.example", "MAX_REQUEST_BYTES": "4096"])
            let http = try stack.http()

            let preflight = try await http.send(
                .OPTIONS, "/v1/me", body: nil,
                headers: [("Origin", "https://app.example"), ("Access-Control-Request-Method", "GET")])
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example")
            #expect(preflight.header("Access-Control-Allow-Headers")?.contains("Idempotency-Key") == true)
            let foreign = try await http.send(
                .OPTIONS, "/v1/me", body: nil,
                headers: [("Origin", "https://evil.example"), ("Access-Control-Request-Method", "GET")])
            #expect(foreign.header("Access-Control-Allow-Origin") == nil)
            let simple = try await http.get("/v1/me", headers: [("Origin", "https://app.example")])
            #expect(simple.status == 401)
            #expect(simple.header("Access-Control-Allow-Origin") == "https://app.example")
            #expect(simple.header("Access-Control-Expose-Headers")?.contains("X-Request-ID") == true)

            let big = try await http.send(.POST, "/v1/auth/guest", body: Data(repeating: 0x20, count: 10_000))
            #expect(big.status == 413)
            #expect(big.header("content-type") == "application/problem+json")
            let streamed = try await http.sendChunked(.POST, "/v1/auth/guest", body: Data(repeating: 0x20, count: 10_000))
            #expect(streamed.status == 413, "\(streamed.text)")

            let missing = try await http.get("/v1/nowhere")
            #expect(missing.status == 404)
            #expect(missing.header("content-type") == "application/problem+json")
            #expect(missing.header("X-Request-ID") != nil)
            let wrongMethod = try await http.send(.DELETE, "/v1/auth/guest", body: nil)
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("Allow") == "POST")
            let trace = try await http.send(.TRACE, "/v1/me", body: nil)
            #expect(trace.status == 405)
            #expect(trace.header("Allow") == "GET, PATCH, DELETE")
            #expect(trace.header("content-type") == "application/problem+json")
            #expect(try await http.send(.TRACE, "/v1/nowhere", body: nil).status == 404)

            let document = try await http.get("/openapi.json")
            #expect(document.status == 200)
            #expect(document.json["openapi"] as? String == "3.1.0")
            #expect((document.json["paths"] as? [String: Any])?["/v1/auth/guest"] != nil)
        }
    }

    @Test("a body the gateway lets through but the service finds too large is a 413 problem that says why, as the gateway's own is")
    func tooLargeForTheService() async throws {
        try await withTestStack("gateway-too-large") { stack in
            try await stack.start("identity")
            try await stack.start("gateway", environment: ["MAX_REQUEST_BYTES": String(1 << 20)])
            let http = try stack.http()
            // Under the gateway's 1 MiB, over the 256 KiB a service decodes.
            let tooLong = String(repeating: "x", count: 300 * 1024)
            for response in [
                try await http.post("/v1/auth/guest", json: ["displayName": tooLong, "timeZone": "Europe/Rome"]),
                try await http.sendChunked(.POST, "/v1/auth/guest", body: Data(#"{"displayName": "\#(tooLong)", "timeZone": "UTC"}"#.utf8)),
            ] {
                #expect(response.status == 413, "\(response.text.prefix(200))")
                #expect(response.json["type"] as? String == "https://surge.example/problems/payload-too-large")
                #expect((response.json["detail"] as? String)?.contains("262144 bytes") == true, "\(response.text.prefix(200))")
            }
        }
    }
}
