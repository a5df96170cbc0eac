import Foundation
import GatewayDomain
import Hummingbird
import NIOCore
import SurgeContracts
import SurgeRuntime

/// The gateway's request context: the caller proven by the access token, the client's address, and the trace the
/// request belongs to.
public struct GatewayRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var callerID: UUID?
    /// The caller's roles from its access token (`admin`), forwarded to the service under the signature.
    public var callerRoles: [String] = []
    /// The session of the caller's access token (`sid`), forwarded to the service under the signature.
    public var callerSessionID: UUID?
    public var requestID = ""
    /// Set by `TraceMiddleware` from the client's `traceparent` or a new trace, before anything reads it.
    public var traceParent = TraceParent.unset
    public var traceState: String?
    /// The TCP peer; the client's address is derived from it and trusted `X-Forwarded-For` hops.
    public let peerAddress: String
    /// The client's address as the route pipeline derived it.
    public var clientAddress: String?
    /// The client's `Idempotency-Key` on a keyed route, forwarded to the service under the signature.
    public var idempotencyKey: String?
    /// The client's connection: the live stream watches it to let go of a client that went away.
    let channel: any Channel

    /// The services' dialect (`SurgeJSON.apiEncoder`) for what the gateway answers itself.
    public var responseEncoder: APIResponseEncoder { APIResponseEncoder() }

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        channel = source.channel
    }
}
