import Foundation
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
        var operations: [DocumentedOperation] = []
        for (path, methods) in paths {
            for (method, operation) in methods where operation["x-surge-service"] as? String == "identity" {
                let security = operation["security"] as? [Any] ?? []
                var properties: [String: String]?
                if let body = operation["requestBody"] as? [String: Any],
                    let schema = ((body["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"] as? [String: Any]
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

@Suite("Identity: security and bad input", .serialized)
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
                if operation.id == "searchUsers" { path += "?query=Vic" }
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
            expectProblem(try await asTester.get("/v1/groups?cursor=bm90LWEtY3Vyc29y"), 422, "validation")
            expectProblem(try await asTester.get("/v1/friend-requests?direction=sideways"), 422, "validation")
            expectProblem(try await asTester.get("/v1/users"), 422, "validation")
            expectProblem(try await asTester.get("/v1/users?query=" + String(repeating: "a", count: 51)), 422, "validation")
            expectProblem(try await asTester.post("/v1/groups/join", json: ["code": "'; DROP TABLE groups; --"]), 404)

            // The tester is intact after all that.
            #expect(try await asTester.get("/v1/me").status == 200)
        }
    }
}
