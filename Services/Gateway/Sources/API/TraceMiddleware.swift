import Foundation
import GatewayDomain
import HTTPTypes
import Hummingbird
import SurgeContracts
import SurgeRuntime

/// Accepts a client's `X-Request-ID` (if sane) and W3C `traceparent`, or starts new ones, echoes the request id, and
/// answers every error as a problem document carrying it.
struct TraceMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.requestID = Self.requestID(of: request.headers)
        context.traceParent = Self.traceParent(of: request.headers)
        context.traceState = request.headers[InternalHeaders.tracestate]
        context.logger[metadataKey: "request.id"] = .string(context.requestID)
        context.logger[metadataKey: "trace.id"] = .string(context.traceParent.traceID)
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = try Problem.from(error, logger: context.logger).response(from: request, context: context)
        }
        response.headers[InternalHeaders.requestID] = context.requestID
        return response
    }

    /// The client's `X-Request-ID` if sane, else a new one.
    static func requestID(of headers: HTTPFields) -> String {
        requestID(header: headers[InternalHeaders.requestID])
    }

    /// The client's `X-Request-ID` (`header`) if sane, or a new one.
    static func requestID(header: String?) -> String {
        header.flatMap(acceptableRequestID) ?? UUID.pooledRandom().key
    }

    /// A child of the client's `traceparent`, or a new trace.
    static func traceParent(of headers: HTTPFields) -> TraceParent {
        traceParent(header: headers[InternalHeaders.traceparent])
    }

    /// A child of the client's `traceparent` (`header`), or a new trace.
    static func traceParent(header: String?) -> TraceParent {
        header.flatMap(TraceParent.init)?.child() ?? .random()
    }

    static func acceptableRequestID(_ value: String) -> String? {
        let allowed = value.count <= 128 && !value.isEmpty
            && value.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains(Character($0)) || "-_.:".unicodeScalars.contains($0)) }
        return allowed ? value : nil
    }
}
