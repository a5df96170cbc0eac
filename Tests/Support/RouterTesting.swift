import Foundation
import Hummingbird
import HummingbirdTesting
import SurgeContracts
import SurgeRuntime

/// What every service's router tests share: the router as `ServiceInfrastructure.makeRouter` guards it (problem
/// documents, and only calls signed as the gateway signs them), the signer, and reading answers.
public enum RouterTesting {
    /// The internal-call secret router tests sign with.
    public static func signer() throws -> InternalCallSigner {
        try InternalCallSigner(secret: String(repeating: "k", count: 32))
    }

    /// An empty router with problem documents and the gateway's signature check, for a service's `addRoutes`.
    public static func router(signer: InternalCallSigner) -> Router<SurgeRequestContext> {
        let router = Router(context: SurgeRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: ForwardedContextMiddleware(signer: signer))
        return router
    }

    /// The headers of a call as the gateway forwards it, on behalf of `caller` (nil: a call without one), with `body`.
    public static func signedHeaders(
        _ method: HTTPRequest.Method, _ target: String, caller: UUID?, body: ByteBuffer? = nil, signer: InternalCallSigner
    ) -> HTTPFields {
        var headers: HTTPFields = [InternalHeaders.requestID: "r"]
        if let caller { headers[InternalHeaders.caller] = caller.key }
        headers[InternalCallSigner.header] = signer.signature(
            method: method.rawValue, target: target, caller: caller?.key, requestID: "r", body: body.map { .init(of: $0) } ?? .empty)
        return headers
    }
}

extension HummingbirdTesting.TestResponse {
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try SurgeJSON.decode(type, from: Data(buffer: body))
    }

    /// The problem document's kind (the last part of its `type`) and the fields it names; nil for another body.
    public var problem: (slug: String, fields: [String])? {
        guard headers[.contentType] == "application/problem+json", let document = try? decode(Problem.Body.self) else { return nil }
        return (String(document.type.split(separator: "/").last ?? ""), document.errors?.map(\.field) ?? [])
    }
}
