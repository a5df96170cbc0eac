import Foundation
import Hummingbird
import SurgeContracts

/// The gateway's request context: the caller proven by the access token, and the trace the request belongs to.
public struct GatewayRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var callerID: UUID?
    public var requestID = ""
    public var traceParent = TraceParent.random()
    public var traceState: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
