import Foundation
import Logging
import NIOHTTP1
import SurgeAuth
import SurgeContracts
import SurgeTestSupport
import Testing

/// One identity operation as the published OpenAPI document describes it.
struct DocumentedOperation: Sendable, CustomStringConvertible {
    var id: String
    var method: String
    var path: String
    var authenticated: Bool
    /// The request body's top-level properties and their JSON types, if the operation takes a body.
    var bodyProperties: [String: String]?

    var description: String { "\(method) \(path)" }

    /// Every operation the gateway routes to identity, read from the gateway's own `/openapi.json`: the sweeps below
    /// cover routes added later without anyone remembering to list them.
    static func identityOperations(_ http: TestHTTP) async throws -> [DocumentedOperation] {
        let document = try await http.get("/openapi.json").json
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        let components = (document["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]] ?? [:]
        // A named schema (`$ref: #/components/schemas/Name`) stands for its definition.
        func resolved(_ schema: [String: Any]?) -> [String: Any]? {
            guard let reference = schema?["$ref"] as? String else { return schema }
            return components[String(reference.split(separator: "/").last ?? "")]
        }
        var operations: [DocumentedOperation] = []
        for (path, methods) in paths {
            for (method, operation) in methods where operation["x-surge-service"] as? String == "identity" {
                let security = operation["security"] as? [Any] ?? []
                var properties: [String: String]?
                if let body = operation["requestBody"] as? [String: Any],
                    let schema = resolved(((body["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"] as? [String: Any])
                {
                    properties = ((schema["properties"] as? [String: [String: Any]]) ?? [:]).mapValues { $0["type"] as? String ?? "object" }
                }
                operations.append(
                    DocumentedOperation(
                        id: operation["operationId"] as? String ?? "", method: method.uppercased(), path: path, authenticated: !security.isEmpty,
                        bodyProperties: properties))
            }
        }
        return operations.sorted { ($0.path, $0.method) < ($1.path, $1.method) }
    }

    func path(_ values: [String: String]) -> String {
        values.reduce(path) { $0.replacingOccurrences(of: "{\($1.key)}", with: $1.value) }
    }

    var httpMethod: HTTPMethod { HTTPMethod(rawValue: method) }
}

@Suite("Identity: security and bad input", .tags(.system), .kind(.system), .serialized)
struct IdentitySecuritySystemTests {
    /// Bodies a different user may legitimately send, so each route gets past decoding and shows what it does.
    static func attackerBody(_ operation: DocumentedOperation, victim: String) -> [String: any Sendable]? {
        switch operation.id {
        case "updateMe": ["displayName": "Mallory"]
        case "attachCredentials": ["email": "victim@example.com", "password": "correct horse battery"]
        case "putPreferences": ["notificationsEnabled": true, "telemetryOptOut": false]
        case "putTrainingPlan", "previewTrainingPlan": ["activityLevel": "beginner", "maxPushUpsInOneSet": 5, "daysPerWeek": 3]
        case "deleteMe": ["confirm": false]
        case "sendFriendRequest": ["userID": victim]
        case "createGroup": ["name": "Mallory's", "kind": "friends", "timeZone": "UTC"]
        case "updateGroup": ["name": "Taken over"]
        case "createGroupInvite": ["expiresInHours": 700]
        case "joinGroup": ["code": "ZZZZZZZZZZ"]
        default: operation.bodyProperties == nil ? nil : [:]
        }
    }

    @Test("with a second user's token, no identity route gives away the first user's private data or a group's data to a non-member")
    func secondUserSweep() async throws {
        try await withTestStack("identity-security") { stack in
            let system = try await IdentityStack.start(stack)
            let operations = try await DocumentedOperation.identityOperations(system.http)
            #expect(operations.count >= 30)

            // The victim: private profile, preferences, plan, a friend, a pending request, a household with an invite.
            let victim = try await system.register("victim@example.com", name: "Victoria", timeZone: "Pacific/Auckland")
            let friend = try await system.guest("Wendy")
            let asVictim = system.client(victim)
            _ = try await asVictim.patch("/v1/me", json: ["avatarURL": "https://cdn.example.com/victoria-secret.png", "locale": "en-NZ"])
            _ = try await asVictim.put("/v1/me/preferences", json: ["notificationsEnabled": true, "dailyReminderTime": "06:45", "telemetryOptOut": true])
            _ = try await asVictim.put("/v1/me/training-plan", json: ["activityLevel": "advanced", "maxPushUpsInOneSet": 77, "daysPerWeek": 6])
            let groupID = try #require(
                try await asVictim.post("/v1/groups", json: ["name": "Secret Household", "kind": "household", "timeZone": "Pacific/Auckland"]).json["id"] as? String)
            let code = try #require(try await asVictim.post("/v1/groups/\(groupID)/invites").json["code"] as? String)
            _ = try await system.client(friend).post("/v1/groups/join", json: ["code": code])
            let requestID = try #require(try await asVictim.post("/v1/friend-requests", json: ["userID": friend.userID]).json["id"] as? String)
            // "06:45" in quotes: a bare 06:45 may well occur inside a timestamp.
            let secrets = ["victim@example.com", "Secret Household", code, "Pacific/Auckland", "\"06:45\"", "en-NZ", victim.refreshToken]

            let mallory = try await system.register("mallory@example.com", name: "Mallory", timeZone: "UTC")
            let asMallory = system.client(mallory)
            let parameters = ["groupID": groupID, "userID": victim.userID, "requestID": requestID, "code": code]
            var swept = 0
            for operation in operations where operation.authenticated {
                var path = operation.path(parameters)
                if operation.id == "searchUsers" { path += "?q=Vic" }
                let body = Self.attackerBody(operation, victim: victim.userID)
                let response = try await asMallory.send(
                    operation.httpMethod, path, body: try body.map { try JSONSerialization.data(withJSONObject: $0) })
                swept += 1
                #expect(response.status < 500, "\(operation): \(response.status) \(response.text)")
                // A problem's `instance` echoes the path Mallory sent; what she already knew is no leak.
                let answer = response.text.replacingOccurrences(of: path, with: "")
                for secret in secrets {
                    #expect(!answer.contains(secret), "\(operation) leaked \(secret): \(response.text)")
                }
                if operation.path.contains("{groupID}") || operation.path.contains("{requestID}") || operation.id == "removeFriend" {
                    expectProblem(response, 404)
                }
                if operation.id == "searchUsers" {
                    #expect(items(response).map { $0["id"] as? String } == [victim.userID])
                }
            }
            #expect(swept == operations.filter(\.authenticated).count)

            // The gateway drops a client's own X-Surge-Caller: Mallory cannot pose as Victoria.
            let spoofed = try await asMallory.get("/v1/me", headers: [("X-Surge-Caller", victim.userID)])
            #expect((spoofed.json["user"] as? [String: Any])?["id"] as? String == mallory.userID)
            expectProblem(try await system.http.get("/v1/me/preferences", headers: [("X-Surge-Caller", victim.userID)]), 401)

            // And nothing of Victoria's changed.
            let group = try await asVictim.get("/v1/groups/\(groupID)")
            #expect(group.json["name"] as? String == "Secret Household")
            #expect(group.json["memberCount"] as? Int == 2)
            #expect(items(try await asVictim.get("/v1/groups/\(groupID)/invites")).map { $0["code"] as? String } == [code])
            #expect(items(try await asVictim.get("/v1/friend-requests?direction=outgoing")).map { $0["id"] as? String } == [requestID])
            let me = try #require(try await asVictim.get("/v1/me").json["user"] as? [String: Any])
            #expect(me["displayName"] as? String == "Victoria")
            #expect(me["email"] as? String == "victim@example.com")
            #expect(try await asVictim.get("/v1/me/training-plan").json["maxPushUpsInOneSet"] as? Int == 77)
        }
    }

    @Test("expired, tampered, wrong-key and malformed access tokens are refused on every authenticated identity route")
    func badTokensEverywhere() async throws {
        try await withTestStack("identity-tokens") { stack in
            let system = try await IdentityStack.start(stack)
            let session = try await system.guest("Tess")
            let userID = try #require(UUID(uuidString: session.userID))
            let expired = try await AccessTokenIssuer(signingKey: system.signingKey).issue(userID: userID, kind: "guest", now: Date().addingTimeInterval(-7200))
            let foreign = try await AccessTokenIssuer(signingKey: try .generate(id: system.signingKey.id)).issue(userID: userID, kind: "guest")
            var tampered = session.accessToken
            tampered.removeLast(4)
            tampered += "AAAA"
            let operations = try await DocumentedOperation.identityOperations(system.http).filter(\.authenticated)
            let parameters = ["groupID": UUID().uuidString, "userID": UUID().uuidString, "requestID": UUID().uuidString, "code": "ABCDEFGHJK"]
            for operation in operations {
                for token in [expired.token, foreign.token, tampered, "garbage"] {
                    let response = try await system.http.authorized(token).send(operation.httpMethod, operation.path(parameters), body: Data("{}".utf8))
                    expectProblem(response, 401, "invalid-token")
                }
            }
            #expect(try await system.client(session).get("/v1/me").status == 200)
        }
    }

    @Test("malformed JSON, wrong types, unknown fields, oversized bodies, wrong media types and invalid time zones get a 4xx problem, never a 5xx")
    func badInput() async throws {
        try await withTestStack("identity-bad-input") { stack in
            let system = try await IdentityStack.start(stack)
            let session = try await system.register("tester@example.com", name: "Tester")
            let asTester = system.client(session)
            let groupID = try #require(
                try await asTester.post("/v1/groups", json: ["name": "Testers", "kind": "team", "timeZone": "UTC"]).json["id"] as? String)
            let parameters = ["groupID": groupID, "userID": UUID().uuidString, "requestID": UUID().uuidString, "code": "ABCDEFGHJK"]
            let operations = try await DocumentedOperation.identityOperations(system.http).filter { $0.bodyProperties != nil }
            #expect(operations.count >= 15)

            let oversized = Data(("{\"displayName\": \"" + String(repeating: "x", count: 300 * 1024) + "\"}").utf8)
            for operation in operations {
                let client = operation.authenticated ? asTester : system.http
                let path = operation.path(parameters)
                let properties = operation.bodyProperties ?? [:]
                // Every known field with a value of the wrong JSON type.
                let wrongTypes = properties.mapValues { type -> any Sendable in type == "string" ? 12345 : "not a \(type)" }
                let cases: [(String, Data, String, [Int])] = [
                    ("malformed JSON", Data(#"{"displayName": "#.utf8), "application/json", [400]),
                    ("a JSON array", Data("[1, 2, 3]".utf8), "application/json", [422]),
                    ("wrong types", try JSONSerialization.data(withJSONObject: wrongTypes), "application/json", properties.isEmpty ? [] : [422]),
                    ("an unknown field", Data(#"{"isAdmin": true}"#.utf8), "application/json", [422]),
                    ("an oversized body", oversized, "application/json", [413]),
                    ("another media type", Data("displayName=x".utf8), "application/x-www-form-urlencoded", [415]),
                ]
                for (name, body, contentType, expected) in cases {
                    let response = try await client.send(operation.httpMethod, path, body: body, contentType: contentType)
                    #expect((400..<500).contains(response.status), "\(operation) with \(name): \(response.status) \(response.text)")
                    #expect(response.header("content-type") == "application/problem+json", "\(operation) with \(name): \(response.text)")
                    if !expected.isEmpty {
                        #expect(expected.contains(response.status), "\(operation) with \(name): \(response.status) \(response.text)")
                    }
                    if name == "an unknown field", response.status == 422 {
                        #expect(problemFields(response).contains("isAdmin"), "\(operation): \(response.text)")
                    }
                }
            }

            // Invalid time zones, wherever a time zone is taken.
            let zoneCases: [(TestHTTP, HTTPMethod, String, [String: any Sendable])] = [
                (system.http, .POST, "/v1/auth/guest", ["displayName": "Z", "timeZone": "Mars/Base"]),
                (system.http, .POST, "/v1/auth/register", ["email": "z@example.com", "password": "correct horse battery", "displayName": "Z", "timeZone": "CET"]),
                (asTester, .PATCH, "/v1/me", ["timeZone": "GMT+2"]),
                (asTester, .POST, "/v1/groups", ["name": "Z", "kind": "friends", "timeZone": "Europe/Nowhere"]),
                (asTester, .PATCH, "/v1/groups/\(groupID)", ["timeZone": ""]),
                (system.http, .POST, "/v1/auth/social", ["provider": "google", "idToken": "x", "timeZone": "Asia/Atlantis"]),
            ]
            for (client, method, path, body) in zoneCases {
                let response = try await client.send(method, path, body: try JSONSerialization.data(withJSONObject: body))
                expectProblem(response, 422, "validation")
                #expect(problemFields(response) == ["timeZone"], "\(method) \(path): \(response.text)")
            }

            // Paths and queries.
            expectProblem(try await asTester.get("/v1/groups/not-a-uuid"), 404)
            expectProblem(try await asTester.post("/v1/friend-requests/42/accept"), 404)
            expectProblem(try await asTester.get("/v1/friends?limit=0"), 422, "validation")
            expectProblem(try await asTester.get("/v1/friends?limit=many"), 422, "validation")
            expectProblem(try await asTester.get("/v1/groups?cursor=bm90LWEtY3Vyc29y"), 400, "unknown-cursor")
            #expect(try await asTester.get("/v1/groups?cursor=").status == 200, "an empty cursor is the first page")
            expectProblem(try await asTester.get("/v1/friend-requests?direction=sideways"), 422, "validation")
            expectProblem(try await asTester.get("/v1/users"), 422, "validation")
            expectProblem(try await asTester.get("/v1/users?q=" + String(repeating: "a", count: 51)), 422, "validation")
            expectProblem(try await asTester.post("/v1/groups/join", json: ["code": "'; DROP TABLE groups; --"]), 404)

            // The tester is intact after all that.
            #expect(try await asTester.get("/v1/me").status == 200)
        }
    }

    @Test("lockout is no weapon: after an address fails five times, a correct password from a fresh address still signs in; the attacking address stays refused with Retry-After; a spray still stops at the 11th try")
    func lockoutIsNoWeapon() async throws {
        try await withTestStack("identity-lockout") { stack in
            let key = try SigningKey.generate(id: "identity-test")
            try await stack.start(
                "identity", environment: ["BCRYPT_COST": "4", "SIMULATED_CLOCK": "true", "JWT_SIGNING_KEY": key.seed, "JWT_SIGNING_KEY_ID": key.id])
            // The gateway's real budget for credential routes (10 a minute per address), the address taken from
            // X-Forwarded-For as behind one trusted proxy.
            try await stack.start("gateway", environment: ["TRUSTED_PROXY_HOPS": "1", "RATE_LIMIT_CREDENTIALS_PER_MINUTE": "10"])
            let http = try stack.http()
            let identity = try stack.http("identity")
            // Identity reads the client address from X-Surge-Client-Address, which the gateway is to set from the
            // address it determined; the test sends the same address in both headers, so it holds either way.
            func from(_ address: String) -> [(String, String)] { [("X-Forwarded-For", address), ("X-Surge-Client-Address", address)] }
            func signIn(_ email: String, _ password: String, from address: String) async throws -> TestResponse {
                try await http.post("/v1/auth/sign-in", json: ["email": email, "password": password], headers: from(address))
            }
            let (owner, attacker, fresh, sprayer) = ("203.0.113.7", "198.51.100.66", "192.0.2.44", "203.0.113.200")

            let registered = try await http.post(
                "/v1/auth/register", json: ["email": "victim@example.com", "password": "correct horse battery", "displayName": "Vic", "timeZone": "UTC"],
                headers: from(owner))
            #expect(registered.status == 201, "\(registered.text)")
            let victimID = try #require((registered.json["user"] as? [String: Any])?["id"] as? String)

            // The attacker's address fails five times; its sixth try is refused even with the right password.
            for _ in 0..<5 { expectProblem(try await signIn("victim@example.com", "guess guess guess", from: attacker), 401, "invalid-credentials") }
            let refused = try await signIn("victim@example.com", "correct horse battery", from: attacker)
            expectProblem(refused, 429, "sign-in-throttled")
            let retryAfter = try #require(refused.header("Retry-After").flatMap(Int.init), "\(refused.headers)")
            #expect((1...60).contains(retryAfter))

            // The owner, from an address that has not failed, signs in at once.
            let signedIn = try await signIn("victim@example.com", "correct horse battery", from: fresh)
            #expect(signedIn.status == 200, "\(signedIn.text)")
            #expect(try TestSession(signedIn).userID == victimID)

            // Her success does not forgive the attacker: still refused, with Retry-After.
            let stillRefused = try await signIn("victim@example.com", "correct horse battery", from: attacker)
            expectProblem(stillRefused, 429, "sign-in-throttled")
            #expect((1...60).contains(stillRefused.header("Retry-After").flatMap(Int.init) ?? 0), "\(stillRefused.headers)")

            // Once the wait is over the attacker gets one more try, and its failure doubles the wait.
            let clockText = try #require(try await identity.get("/internal/clock").json["now"] as? String)
            let clock = try #require(Timestamp.parse(clockText))
            #expect(try await identity.put("/internal/clock", json: ["now": Timestamp.format(clock.addingTimeInterval(Double(retryAfter) + 1))]).status == 200)
            expectProblem(try await signIn("victim@example.com", "guess again, again", from: attacker), 401, "invalid-credentials")
            let doubled = try await signIn("victim@example.com", "correct horse battery", from: attacker)
            expectProblem(doubled, 429, "sign-in-throttled")
            #expect((61...120).contains(doubled.header("Retry-After").flatMap(Int.init) ?? 0), "\(doubled.headers)")

            // A spray, one try per account from one address, is stopped by the gateway at the 11th try.
            for index in 1...10 {
                expectProblem(try await signIn("user\(index)@example.com", "Summer2024!!", from: sprayer), 401, "invalid-credentials")
            }
            let sprayed = try await signIn("user11@example.com", "Summer2024!!", from: sprayer)
            expectProblem(sprayed, 429, "rate-limited")
            #expect(sprayed.header("Retry-After").flatMap(Int.init) != nil, "\(sprayed.headers)")

            // Only the gateway may say where a request comes from: it replaces a client's own X-Surge-Client-Address
            // and signs the one it derived, so a refused address cannot claim a fresh one.
            let spoofed = try await http.post(
                "/v1/auth/sign-in", json: ["email": "victim@example.com", "password": "correct horse battery"],
                headers: [("X-Forwarded-For", attacker), ("X-Surge-Client-Address", "192.0.2.250")])
            expectProblem(spoofed, 429, "sign-in-throttled")
        }
    }

    @Test("without JWT_SIGNING_KEY identity keeps one development key in its database: two replicas agree, and a token issued before a restart verifies against the JWKS after it")
    func developmentKeySurvivesRestarts() async throws {
        try await withTestStack("identity-dev-key") { stack in
            // Two replicas starting together on an empty database.
            async let first = stack.start("identity", environment: ["BCRYPT_COST": "4"])
            async let second = stack.start("identity", instance: "identity-b", environment: ["BCRYPT_COST": "4"])
            let (identity, _) = try await (first, second)
            // The published keys as kid:x pairs (JSON member order varies).
            func publishedKeys(_ response: TestResponse) -> [String] {
                ((response.json["keys"] as? [[String: Any]]) ?? []).map { "\($0["kid"] as? String ?? "?"):\($0["x"] as? String ?? "?")" }
            }
            let keys = publishedKeys(try await stack.http("identity").get("/internal/jwks.json"))
            #expect(keys.count == 1)
            #expect(publishedKeys(try await stack.http("identity-b").get("/internal/jwks.json")) == keys)
            try await stack.start("gateway")
            let http = try stack.http()

            let guest = try await http.post("/v1/auth/guest", json: ["displayName": "Gus", "timeZone": "UTC"])
            #expect(guest.status == 201, "\(guest.text)")
            let before = try TestSession(guest)

            // Restart identity on the same port and database, still without JWT_SIGNING_KEY.
            let port = try identity.port
            await identity.stop()
            try await stack.process("identity-b").stop()
            try await stack.start("identity", environment: ["BCRYPT_COST": "4", "HTTP_PORT": "\(port)"])
            let served = try await stack.http("identity").get("/internal/jwks.json")
            #expect(served.status == 200)
            #expect(publishedKeys(served) == keys)

            // The token from before the restart verifies against the keys served after it, as a freshly started
            // gateway would check it; and the gateway accepts both it and a token issued after the restart.
            let verifier = AccessTokenVerifier(logger: Logger.test("verifier")) { served.text }
            let claims = try await verifier.verify(before.accessToken)
            #expect(claims.userID?.uuidString.lowercased() == before.userID.lowercased())
            try await waitUntil("the gateway accepts the old token at the restarted identity", timeout: .seconds(10)) {
                try await http.authorized(before.accessToken).get("/v1/me").status == 200
            }
            let after = try TestSession(try await http.post("/v1/auth/guest", json: ["displayName": "Ida", "timeZone": "UTC"]))
            #expect(try await http.authorized(after.accessToken).get("/v1/me").status == 200)
        }
    }
}
