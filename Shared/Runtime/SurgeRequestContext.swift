import Foundation
import HTTPTypes
import Hummingbird
import SurgeContracts

/// Headers the gateway sets on requests it forwards to services.
public enum InternalHeaders {
    /// The authenticated caller's user id. Services trust it because only the gateway can reach them.
    public static let caller = HTTPField.Name("X-Surge-Caller")!
    public static let requestID = HTTPField.Name("X-Request-ID")!
    public static let traceparent = HTTPField.Name("traceparent")!
    public static let tracestate = HTTPField.Name("tracestate")!
}

/// The request context of every Surge service: who is calling and which trace the request belongs to.
public struct SurgeRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var callerID: UUID?
    public var trace = TraceContext()

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    public var requestDecoder: StrictJSONDecoder { StrictJSONDecoder() }
    public var responseEncoder: JSONEncoder { SurgeJSON.encoder() }
    public var maxUploadSize: Int { 256 * 1024 }

    /// The authenticated caller, or 401.
    public func caller() throws -> UUID {
        guard let callerID else { throw Problem.unauthorized() }
        return callerID
    }
}

/// Reads the caller, request id and W3C trace context the gateway forwarded, tags the log with them and echoes the
/// request id.
public struct ForwardedContextMiddleware: RouterMiddleware {
    public typealias Context = SurgeRequestContext

    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.callerID = request.headers[InternalHeaders.caller].flatMap(UUID.init(uuidString:))
        let requestID = request.headers[InternalHeaders.requestID] ?? UUID().uuidString.lowercased()
        context.trace = TraceContext(
            traceparent: request.headers[InternalHeaders.traceparent], tracestate: request.headers[InternalHeaders.tracestate],
            requestID: requestID)
        context.logger[metadataKey: "request.id"] = .string(requestID)
        if let callerID = context.callerID { context.logger[metadataKey: "caller"] = .string(callerID.key) }
        var response = try await next(request, context)
        response.headers[InternalHeaders.requestID] = requestID
        return response
    }
}
