import HTTPTypes
import Hummingbird
import SurgeRuntime

/// Cross-origin access for browser clients. `CORS_ALLOWED_ORIGINS` lists exact origins (or `*`); empty disables CORS.
struct CORSPolicy: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let allowedOrigins: Set<String>
    let maxAgeSeconds: Int

    static let allowedMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
    static let allowedHeaders = "Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, X-Request-ID, traceparent, tracestate"
    static let exposedHeaders =
        "X-Request-ID, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Idempotent-Replayed, Location, ETag"

    static func from(_ reader: EnvironmentReader) throws -> CORSPolicy? {
        let origins = reader.string("CORS_ALLOWED_ORIGINS", default: "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard !origins.isEmpty else { return nil }
        return CORSPolicy(allowedOrigins: Set(origins), maxAgeSeconds: try reader.int("CORS_MAX_AGE_SECONDS", default: 600, range: 0...86_400))
    }

    func allowedOrigin(for origin: String?) -> String? {
        guard let origin, origin != "null" else { return nil }
        return allowedOrigins.contains("*") ? "*" : (allowedOrigins.contains(origin) ? origin : nil)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        let allowed = allowedOrigin(for: origin)
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers: HTTPFields = [.vary: "Origin"]
            if let allowed {
                headers[.accessControlAllowOrigin] = allowed
                headers[.accessControlAllowMethods] = Self.allowedMethods
                headers[.accessControlAllowHeaders] = Self.allowedHeaders
                headers[.accessControlMaxAge] = String(maxAgeSeconds)
            }
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        if let allowed {
            response.headers[.accessControlAllowOrigin] = allowed
            response.headers[.accessControlExposeHeaders] = Self.exposedHeaders
            response.headers[.vary] = "Origin"
        }
        return response
    }
}
