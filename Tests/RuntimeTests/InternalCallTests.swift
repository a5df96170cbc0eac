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
        for garbage in [nil, "", "v1", "v1;t=x;sig=y", "v2;t=1;sig=abc", header + "x", header.replacingOccurrences(of: "v1;", with: "v0;")] {
            #expect(!signer.isValid(garbage, method: "GET", target: "/internal/export", caller: caller, requestID: "r1", now: now))
        }
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
        }
    }
}
