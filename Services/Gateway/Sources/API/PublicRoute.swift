import HTTPTypes
import SurgeContracts
import SurgeRuntime

/// One operation of the public API as the gateway sees it: which service answers, whether a token is needed, how
/// hard to throttle, whether `Idempotency-Key` applies. The table (`PublicAPI.routes`) is generated from the
/// services' declarations together with the OpenAPI document.
public struct PublicRoute: Sendable, Hashable {
    public var method: HTTPRequest.Method
    /// OpenAPI-style template: `/v1/groups/{groupID}/members`.
    public var path: String
    public var upstream: SurgeService
    public var access: APIOperation.Access
    public var throttle: APIOperation.Throttle
    public var idempotent: Bool
    /// Takes a binary upload (a photo) rather than JSON: a larger body limit applies.
    public var acceptsUpload: Bool

    public init(
        _ method: HTTPRequest.Method, _ path: String, _ upstream: SurgeService, _ access: APIOperation.Access,
        _ throttle: APIOperation.Throttle, idempotent: Bool, upload: Bool = false
    ) {
        self.method = method
        self.path = path
        self.upstream = upstream
        self.access = access
        self.throttle = throttle
        self.idempotent = idempotent
        self.acceptsUpload = upload
    }

    /// The same template in Hummingbird's router syntax: `/v1/groups/:groupID/members`.
    public var routerPath: String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? ":" + segment.dropFirst().dropLast() : segment
        }.joined(separator: "/")
    }
}
