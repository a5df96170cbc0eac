import Foundation
import SurgeAuth
import SurgeTestSupport
import Testing

@Suite("Gateway: access tokens", .tags(.system), .kind(.system), .serialized)
struct GatewayAuthSystemTests {
    @Test("a guest's access token opens authenticated routes; missing, expired, tampered and foreign tokens do not")
    func tokens() async throws {
        try await withTestStack("gateway-auth") { stack in
            let key = try SigningKey.generate(id: "test-key")
            try await stack.start("identity", environment: ["JWT_SIGNING_KEY": key.seed, "JWT_SIGNING_KEY_ID": key.id])
            try await stack.start("gateway")
            let http = try stack.http()
            let session = try await http.post("/v1/auth/guest", json: ["displayName": "Marcus", "timeZone": "Europe/Berlin"])
            #expect(session.status == 201)
            let token = try #require((session.json["tokens"] as? [String: Any])?["accessToken"] as? String)
            let userID = try #require((session.json["user"] as? [String: Any])?["id"] as? String)

            let me = try await http.authorized(token).get("/v1/me", headers: [("X-Surge-Caller", UUID().uuidString)])
            #expect(me.status == 200)
            #expect((me.json["user"] as? [String: Any])?["id"] as? String == userID)

            let anonymous = try await http.get("/v1/me", headers: [("X-Surge-Caller", userID)])
            #expect(anonymous.status == 401)
            #expect(anonymous.header("content-type") == "application/problem+json")
            #expect(anonymous.header("www-authenticate") == "Bearer")
            #expect(anonymous.json["type"] as? String == "https://surge.example/problems/unauthorized")

            let issuer = await AccessTokenIssuer(signingKey: key)
            let expired = try await issuer.issue(userID: UUID(uuidString: userID)!, kind: "guest", now: Date().addingTimeInterval(-7200))
            let foreign = try await AccessTokenIssuer(signingKey: .generate(id: "test-key")).issue(userID: UUID(uuidString: userID)!, kind: "guest")
            var tampered = token
            tampered.removeLast(4)
            tampered += "AAAA"
            for bad in [expired.token, foreign.token, tampered, "garbage"] {
                let response = try await http.authorized(bad).get("/v1/me")
                #expect(response.status == 401)
                #expect(response.json["type"] as? String == "https://surge.example/problems/invalid-token")
            }
        }
    }

    @Test("a deleted account's unexpired token is refused at the gateway for every service")
    func deletedAccounts() async throws {
        try await withTestStack("gateway-deleted") { stack in
            try await stack.start("identity")
            try await stack.start("challenges")
            try await stack.start("gateway")
            let http = try stack.http()
            let session = try await http.post("/v1/auth/guest", json: ["displayName": "Leaving", "timeZone": "Europe/Rome"])
            let token = try #require((session.json["tokens"] as? [String: Any])?["accessToken"] as? String)
            let me = http.authorized(token)
            #expect(try await me.get("/v1/challenges?limit=1").status == 200)
            let deleted = try await me.delete("/v1/me?confirm=true")
            #expect(deleted.status == 204, "\(deleted.text)")
            try await waitUntil("the gateway refuses the token") {
                let response = try await me.get("/v1/challenges?limit=1")
                return response.status == 401 && response.json["type"] as? String == "https://surge.example/problems/account-deleted"
            }
            let write = try await me.post("/v1/challenges", json: ["kind": "habit", "name": "Ghost habit"])
            #expect(write.status == 401)
            #expect(try await stack.database.count("SELECT count(*) FROM challenges.challenges WHERE name = 'Ghost habit'") == 0)
        }
    }
}
