import HTTPTypes
import SurgeContracts

/// One operation of the public API and the service that answers it. The table is the gateway's whole routing
/// knowledge, and the OpenAPI document must list exactly these operations.
public struct PublicRoute: Sendable, Hashable {
    public enum Access: Sendable, Hashable {
        /// Anyone may call it (sign-up, sign-in).
        case anonymous
        /// Needs a valid access token; the caller's id is passed on.
        case authenticated
    }

    public var method: HTTPRequest.Method
    /// OpenAPI-style template: `/v1/groups/{groupID}/members`.
    public var path: String
    public var upstream: SurgeService
    public var access: Access

    public init(_ method: HTTPRequest.Method, _ path: String, _ upstream: SurgeService, _ access: Access) {
        self.method = method
        self.path = path
        self.upstream = upstream
        self.access = access
    }

    /// The same template in Hummingbird's router syntax: `/v1/groups/:groupID/members`.
    public var routerPath: String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? ":" + segment.dropFirst().dropLast() : segment
        }.joined(separator: "/")
    }
}

public enum PublicRoutes {
    public static let all: [PublicRoute] = [
        PublicRoute(.post, "/v1/auth/guest", .identity, .anonymous),
    ]
}
