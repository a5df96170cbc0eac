import Foundation
import Hummingbird
import HummingbirdTesting
import SurgeRuntime
import SurgeTestSupport
import Testing

@Suite("Calls between the gateway and the services", .tags(.unit), .kind(.unit))
struct InternalCallTests {
    let signer: InternalCallSigner
    let caller = "6f1c1d3e-5b0a-4c4e-9a57-2f6a1f6c9d10"

    init() throws {
        signer = try InternalCallSigner(secret: String(repeating: "s", count: 40))
    }

    @Test("a signature verifies only for its method, target, caller, request id and secret, and only while fresh")
    func signatureBindsTheCall() throws {
        let now = Date()
        let header = signer.signature(method: "GET", target: "/internal/export", caller: caller, requestID: "r1", at: now)
        #expect(signer.isValid(header, method: "GET", target: "/internal/export", caller: caller, requestID: "r1", now: now))
        #expect(signer.isValid(header, method: "GET", target: "/internal/export", caller: caller.uppercased(), requestID: "r1", now: now))
        #expect(!signer.isValid(header, method: "DELETE", target: "/internal/export", caller: caller, requestID: "r1", now: now))
        #expect(!signer.isValid(header, method: "GET", target: "/v1/me", caller: caller, requestID: "r1", now: now))
        #expect(!signer.isValid(header, method: "GET", target: "/internal/export", caller: UUID().uuidString, requestID: "r1", now: now))
        #expect(!signer.isValid(header, method: "GET", target: "/internal/export", caller: nil, requestID: "r1", now: now))
        #expect(!signer.isValid(header, method: "GET", target: "/internal/export", caller: caller, requestID: "r2", now: now))
        #expect(!signer.isValid(header, method: "GET", target: "/internal/export", caller: caller, requestID: "r1", now: now.addingTimeInterval(61)))
        #expect(!signer.isValid(header, method: "GET", target: "/internal/export", caller: caller, requestID: "r1", now: now.addingTimeInterval(-61)))
        let other = try InternalCallSigner(secret: String(repeating: "t", count: 40))
        #expect(!other.isValid(header, method: "GET", target: "/internal/export", caller: caller, requestID: "r1", now: now))
        for garbage in [
            nil, "", "v2", "v2;t=x;sig=y", "v1;t=1;sig=abc", header + "x", header.replacingOccurrences(of: "v2;", with: "v1;"),
            header.replacingOccurrences(of: ";n=", with: ";n=A"), header.replacingOccurrences(of: ";b=e", with: ";b=E"),
        ] {
            #expect(!signer.isValid(garbage, method: "GET", target: "/internal/export", caller: caller, requestID: "r1", now: now))
        }
    }

    /// Computed outside Swift (Python's `hmac` and `hashlib`): the lines joined by line feeds, HMAC-SHA256, unpadded
    /// base64url; the body's SHA-256 in hex. A gateway and a service of different releases must keep agreeing during a
    /// rolling upgrade.
    @Test("signatures are byte for byte the documented HMAC of the call's lines, and each verifies")
    func knownAnswers() {
        let empty = InternalCallSigner.BodyDigest(of: [UInt8]())
        #expect(empty == .empty && empty.hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let vectors: [(header: String, method: String, target: String, caller: String?, clientAddress: String?, requestID: String, roles: String?, session: String?, body: String)] = [
            ("v2;t=1700000000;n=AAAAAAAAAAAAAAAAAAAAAA;b=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855;sig=vfgq-ejibOJ3buzSwtquWvec3ICr8TuGqJPRapIizKg",
             "GET", "/internal/export", caller, nil, "r1", nil, nil, ""),
            ("v2;t=1700000001;n=n2-_nonce;b=48208f9428d64634bd8e28ff345bf0eab60d53c18fa2fbdb0b9bc1e84df2b5f6;sig=3WUgulUhF_PiLJLjUT1epCXwtjXh1ECm2mZjGbpfSWE",
             "put", "/v1/attempts/a/tasks/t", caller.uppercased(), "203.0.113.7", "req-2", "admin", "9A8B7C6D-0000-4000-8000-00000000000A", #"{"value":1}"#),
            ("v2;t=1700000002;n=x;b=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855;sig=ve2xi5_OUYcC7lMtHHo51xsIyUivMVmWqcgJyID7wtQ",
             "GET", "/v1/x?name=café", nil, nil, "r3", nil, nil, ""),
        ]
        for vector in vectors {
            let fields = vector.header.split(separator: ";")
            let seconds = Int(fields[1].dropFirst(2))!
            let nonce = String(fields[2].dropFirst(2))
            let body = InternalCallSigner.BodyDigest(of: Array(vector.body.utf8))
            let at = Date(timeIntervalSince1970: TimeInterval(seconds))
            let header = signer.signature(
                method: vector.method, target: vector.target, caller: vector.caller, clientAddress: vector.clientAddress, roles: vector.roles,
                session: vector.session, requestID: vector.requestID, body: body, nonce: nonce, at: at)
            #expect(header == vector.header)
            #expect(
                signer.isValid(
                    vector.header, method: vector.method, target: vector.target, caller: vector.caller, clientAddress: vector.clientAddress,
                    roles: vector.roles, session: vector.session, requestID: vector.requestID, body: body, now: at.addingTimeInterval(59)))
            // One character of the code changed, the code cut short or lengthened: refused.
            var changed = Array(vector.header.utf8)
            changed[changed.count - 5] = changed[changed.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            for forged in [
                String(decoding: changed, as: UTF8.self), String(vector.header.dropLast()), vector.header + "A",
                "v2;t=+\(seconds)" + vector.header[vector.header.range(of: ";n=")!.lowerBound...],
            ] {
                #expect(
                    !signer.isValid(
                        forged, method: vector.method, target: vector.target, caller: vector.caller, clientAddress: vector.clientAddress,
                        roles: vector.roles, session: vector.session, requestID: vector.requestID, body: body, now: at))
            }
            // Another body under the same signature.
            #expect(
                !signer.isValid(
                    vector.header, method: vector.method, target: vector.target, caller: vector.caller, clientAddress: vector.clientAddress,
                    roles: vector.roles, session: vector.session, requestID: vector.requestID, body: .init(of: Array("{}".utf8)), now: at))
        }
    }

    struct Note: Codable {
        var text: String
    }

    @Test("a signed call is answered once: sent again as it was, or with another body than the one signed, it is refused before the handler")
    func replays() async throws {
        let router = Router(context: SurgeRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: ForwardedContextMiddleware(signer: signer))
        let handled = LockedValue<[String]>([])
        router.post("/v1/notes") { request, context in
            let note = try await request.decode(as: Note.self, context: context)
            handled.withLock { $0.append(note.text) }
            return note.text
        }
        router.get("/v1/notes") { _, _ in "notes" }
        let app = Application(router: router)
        let signer = self.signer
        let caller = self.caller
        @Sendable func headers(_ method: HTTPRequest.Method, signing body: ByteBuffer?) -> HTTPFields {
            [
                InternalHeaders.caller: caller, InternalHeaders.requestID: "r", .contentType: "application/json",
                InternalCallSigner.header: signer.signature(
                    method: method.rawValue, target: "/v1/notes", caller: caller, requestID: "r", body: body.map { .init(of: $0) } ?? .empty),
            ]
        }
        @Sendable func problemDetail(_ response: HummingbirdTesting.TestResponse) -> String {
            (try? JSONDecoder().decode(Problem.Body.self, from: Data(buffer: response.body)).detail) ?? String(buffer: response.body)
        }
        let mine = ByteBuffer(string: #"{"text":"mine"}"#)
        let theirs = ByteBuffer(string: #"{"text":"theirs"}"#)
        try await app.test(.router) { client in
            let signed = headers(.post, signing: mine)
            try await client.execute(uri: "/v1/notes", method: .post, headers: signed, body: mine) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "mine")
            }
            // The same call again, within the signature's 60 s: refused.
            try await client.execute(uri: "/v1/notes", method: .post, headers: signed, body: mine) { response in
                #expect(response.status == .unauthorized)
                #expect(problemDetail(response).contains("already"), "\(problemDetail(response))")
            }
            // A signature captured before its call arrived, sent with another body: refused, and the handler never sees it.
            let captured = headers(.post, signing: mine)
            try await client.execute(uri: "/v1/notes", method: .post, headers: captured, body: theirs) { response in
                #expect(response.status == .unauthorized)
                #expect(problemDetail(response).contains("body"), "\(problemDetail(response))")
            }
            // A signature of a call without a body (a GET's), given a body: refused likewise.
            try await client.execute(uri: "/v1/notes", method: .post, headers: headers(.post, signing: nil), body: theirs) { response in
                #expect(response.status == .unauthorized)
            }
            #expect(handled.value == ["mine"])
            // Equal calls in the same second are signed differently (the nonce), and each is answered.
            for _ in 0..<3 {
                try await client.execute(uri: "/v1/notes", method: .get, headers: headers(.get, signing: nil)) { response in
                    #expect(response.status == .ok)
                }
            }
        }
    }

    @Test("the memory of accepted signatures forgets a second only when it cannot be fresh again, and refuses past its capacity")
    func seenSignatures() {
        let seen = SeenSignatures(capacity: 3)
        func signature(_ seconds: Int64, _ key: UInt64) -> InternalCallSigner.Verified {
            .init(body: .empty, seconds: seconds, replayKey: key)
        }
        #expect(seen.use(signature(1000, 1)) == .first)
        #expect(seen.use(signature(1000, 1)) == .repeated)
        #expect(seen.use(signature(1001, 1)) == .first)
        #expect(seen.use(signature(1000, 2)) == .first)
        #expect(seen.use(signature(1002, 1)) == .full)
        #expect(seen.use(signature(1000, 2)) == .repeated)
        // 128 s later the slot of second 1000 is reused: none of its signatures can be fresh any more.
        #expect(seen.use(signature(1128, 1)) == .first)
        #expect(seen.use(signature(1002, 1)) == .first)
    }

    @Test("a short secret is a configuration error naming the variable")
    func shortSecret() {
        #expect(throws: ConfigurationError.self) { try InternalCallSigner(secret: "short") }
        #expect(throws: ConfigurationError.self) { try InternalCallSigner.from(EnvironmentReader([:])) }
    }

    @Test("a service answers public and internal routes only to signed calls; operational routes answer anyone")
    func middlewareRefusesForgedCallers() async throws {
        let router = Router(context: SurgeRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: ForwardedContextMiddleware(signer: signer))
        router.get("/internal/export") { _, context in try context.caller().uuidString.lowercased() }
        router.get("/v1/me") { _, context in context.callerID?.uuidString.lowercased() ?? "anonymous" }
        router.get("/healthz") { _, _ in "ok" }
        let app = Application(router: router)
        try await app.test(.router) { client in
            // A forged caller header, without or with a bad signature, gets nothing.
            try await client.execute(uri: "/internal/export", method: .get, headers: [InternalHeaders.caller: caller]) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(!String(buffer: response.body).contains(caller))
            }
            let forged = signer.signature(method: "GET", target: "/internal/export", caller: UUID().uuidString, requestID: "r")
            try await client.execute(
                uri: "/internal/export", method: .get,
                headers: [InternalHeaders.caller: caller, InternalHeaders.requestID: "r", InternalCallSigner.header: forged]
            ) { response in #expect(response.status == .unauthorized) }
            try await client.execute(uri: "/v1/me", method: .get) { response in #expect(response.status == .unauthorized) }
            // The gateway's signature lets the caller through.
            let signed = signer.signature(method: "GET", target: "/internal/export", caller: caller, requestID: "r")
            try await client.execute(
                uri: "/internal/export", method: .get,
                headers: [InternalHeaders.caller: caller, InternalHeaders.requestID: "r", InternalCallSigner.header: signed]
            ) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == caller)
            }
            try await client.execute(uri: "/healthz", method: .get) { response in #expect(response.status == .ok) }
            // A NUL in a query parameter (only `%00` decodes to one) is refused before any handler.
            for target in ["/v1/me?q=a%00b", "/v1/me?q=%00", "/v1/me?x=%2500&q=%%00"] {
                let signed = signer.signature(method: "GET", target: target, caller: caller, requestID: "r")
                try await client.execute(
                    uri: target, method: .get, headers: [InternalHeaders.caller: caller, InternalHeaders.requestID: "r", InternalCallSigner.header: signed]
                ) { response in
                    #expect(response.status == (target.hasPrefix("/v1/me?x=%2500") ? .ok : .badRequest), "\(target)")
                }
            }
        }
    }

    @Test("roles and the session are signed when there are any; a call without them is signed exactly as before they existed")
    func rolesAreSigned() {
        let now = Date()
        let plain = signer.signature(method: "GET", target: "/v1/admin/kpis", caller: caller, requestID: "r1", at: now)
        // Each signature carries a nonce of its own, so an empty role list is compared by what verifies, not by bytes.
        #expect(signer.isValid(plain, method: "GET", target: "/v1/admin/kpis", caller: caller, roles: "", requestID: "r1", now: now))
        #expect(signer.isValid(plain, method: "GET", target: "/v1/admin/kpis", caller: caller, requestID: "r1", now: now))
        #expect(!signer.isValid(plain, method: "GET", target: "/v1/admin/kpis", caller: caller, roles: "admin", requestID: "r1", now: now))
        let admin = signer.signature(method: "GET", target: "/v1/admin/kpis", caller: caller, roles: "admin", requestID: "r1", at: now)
        #expect(admin != plain)
        #expect(signer.isValid(admin, method: "GET", target: "/v1/admin/kpis", caller: caller, roles: "admin", requestID: "r1", now: now))
        #expect(!signer.isValid(admin, method: "GET", target: "/v1/admin/kpis", caller: caller, requestID: "r1", now: now))
        #expect(!signer.isValid(admin, method: "GET", target: "/v1/admin/kpis", caller: caller, roles: "admin,other", requestID: "r1", now: now))
        // The caller's session likewise: signed when there is one, so it cannot be added, changed or dropped.
        let session = UUID().uuidString.lowercased()
        let withSession = signer.signature(method: "GET", target: "/v1/me/sessions", caller: caller, session: session, requestID: "r1", at: now)
        #expect(signer.isValid(withSession, method: "GET", target: "/v1/me/sessions", caller: caller, session: session, requestID: "r1", now: now))
        #expect(!signer.isValid(withSession, method: "GET", target: "/v1/me/sessions", caller: caller, requestID: "r1", now: now))
        #expect(
            !signer.isValid(
                withSession, method: "GET", target: "/v1/me/sessions", caller: caller, session: UUID().uuidString, requestID: "r1", now: now))
        let sessionless = signer.signature(method: "GET", target: "/v1/me/sessions", caller: caller, requestID: "r1", at: now)
        #expect(!signer.isValid(sessionless, method: "GET", target: "/v1/me/sessions", caller: caller, session: session, requestID: "r1", now: now))
        #expect(InternalCallSigner.rolesHeader([]) == nil)
        #expect(InternalCallSigner.rolesHeader(["b", "admin", "b"]) == "admin,b")
    }

    @Test("requireAdmin lets through only a caller whose admin role the gateway signed; anyone else gets the 404 of an unknown route")
    func requireAdmin() async throws {
        let router = Router(context: SurgeRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: ForwardedContextMiddleware(signer: signer))
        router.get("/v1/admin/kpis") { _, context in try context.requireAdmin().uuidString.lowercased() }
        let app = Application(router: router)
        let signer = self.signer
        let caller = self.caller
        @Sendable func headers(roles: String?, signedRoles: String?, caller: String? = caller) -> HTTPFields {
            var fields: HTTPFields = [InternalHeaders.requestID: "r"]
            if let caller { fields[InternalHeaders.caller] = caller }
            if let roles { fields[InternalHeaders.roles] = roles }
            fields[InternalCallSigner.header] = signer.signature(
                method: "GET", target: "/v1/admin/kpis", caller: caller, roles: signedRoles, requestID: "r")
            return fields
        }
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/admin/kpis", method: .get, headers: headers(roles: "admin", signedRoles: "admin")) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == caller)
            }
            // An ordinary caller, signed without roles.
            try await client.execute(uri: "/v1/admin/kpis", method: .get, headers: headers(roles: nil, signedRoles: nil)) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/problem+json")
                let problem = try JSONDecoder().decode(Problem.Body.self, from: Data(String(buffer: response.body).utf8))
                #expect(problem.type == Problem.typeBase + "not-found")
            }
            // A roles header added after signing breaks the signature.
            try await client.execute(uri: "/v1/admin/kpis", method: .get, headers: headers(roles: "admin", signedRoles: nil)) { response in
                #expect(response.status == .unauthorized)
            }
            // Roles without a caller mean nothing.
            try await client.execute(
                uri: "/v1/admin/kpis", method: .get, headers: headers(roles: "admin", signedRoles: "admin", caller: nil)
            ) { response in
                #expect(response.status == .notFound)
            }
            try await client.execute(uri: "/v1/admin/kpis", method: .get, headers: headers(roles: "editor", signedRoles: "editor")) { response in
                #expect(response.status == .notFound)
            }
        }
    }
}
