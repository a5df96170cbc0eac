import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SurgeAuth
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// An answer of identity's router, as the tests read it.
struct RouterAnswer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: Data

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try SurgeJSON.decode(type, from: body) }

    /// The problem document's slug (`validation`, `not-found`, ...); nil when the answer is not a problem.
    var problem: String? {
        guard headers[.contentType] == "application/problem+json", let body = try? JSONDecoder().decode(Problem.Body.self, from: body) else {
            return nil
        }
        return String(body.type.dropFirst(Problem.typeBase.count))
    }

    /// The fields a validation problem names, sorted.
    var fields: [String] {
        ((try? JSONDecoder().decode(Problem.Body.self, from: body))?.errors ?? []).map(\.field).sorted()
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Identity's whole router as the service builds it (`IdentityService.addRoutes` behind the middleware every service
/// has), over a store's stores, called as the gateway calls it: signed, on behalf of a caller or of nobody.
struct IdentityRouterClient: Sendable {
    let client: any TestClientProtocol
    let signer: InternalCallSigner

    /// `caller` nil is an anonymous call (sign-up, sign-in); `session` is the access token's `sid` the gateway forwards;
    /// `address` the client address it determined.
    func call(
        _ method: HTTPRequest.Method, _ path: String, as caller: UUID? = nil, session: UUID? = nil, json: String? = nil,
        from address: String = "203.0.113.7"
    ) async throws -> RouterAnswer {
        var headers: HTTPFields = [InternalHeaders.requestID: "r"]
        headers[InternalHeaders.clientAddress] = address
        if let caller { headers[InternalHeaders.caller] = caller.key }
        let sessionKey = caller == nil ? nil : session?.key
        if let sessionKey { headers[InternalHeaders.session] = sessionKey }
        if json != nil { headers[.contentType] = "application/json" }
        let body = json.map { ByteBuffer(string: $0) }
        headers[InternalCallSigner.header] = signer.signature(
            method: method.rawValue, target: path, caller: caller?.key, clientAddress: address, session: sessionKey, requestID: "r",
            body: body.map { .init(of: $0) } ?? .empty)
        return try await client.execute(uri: path, method: method, headers: headers, body: body) { response in
            RouterAnswer(status: response.status, headers: response.headers, body: Data(buffer: response.body))
        }
    }

    /// A password account (password "a fine passphrase") signed up through the router from a device named "Phone",
    /// and its session.
    func register(_ email: String, name: String) async throws -> SessionResponse {
        let answer = try await call(
            .post, "/v1/auth/register",
            json: #"{"email":"\#(email)","password":"a fine passphrase","displayName":"\#(name)","timeZone":"Europe/Rome","deviceName":"Phone"}"#)
        #expect(answer.status == .created, "\(answer.text)")
        return try answer.decode(SessionResponse.self)
    }
}

/// The claims of an access token, unverified (`sid`, `roles`, ...).
func claims(of token: String) throws -> [String: Any] {
    let payload = try #require(Base64URL.decode(String(token.split(separator: ".")[1])))
    return try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
}

extension IdentityFixture {
    /// Runs `body` with a client of identity's whole router over this fixture's use cases. No social sign-in
    /// provider is enabled.
    func withRouter(_ body: @Sendable (IdentityRouterClient) async throws -> Void) async throws {
        let signer = try RouterTesting.signer()
        let router = RouterTesting.router(signer: signer)
        IdentityService.addRoutes(
            to: router, useCases: useCases, issuer: AccessTokenIssuerSlot(await AccessTokenIssuer(signingKey: try .generate())),
            passwords: try await PasswordHasher(cost: 4), social: SocialTokenVerifier(configurations: [:], logger: Logger.test("social")) { _ in "" },
            clock: clock)
        try await Application(router: router).test(.router) { client in
            try await body(IdentityRouterClient(client: client, signer: signer))
        }
    }
}
