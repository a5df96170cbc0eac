import Hummingbird
import SurgeRuntime

/// Answers 405 with `Allow` when the path is one the gateway routes but the method is not (TRACE, or DELETE on a
/// path that only reads); a path the gateway does not route goes on to the router's 404. CORS preflights are answered
/// before this, by `CORSPolicy`.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let allowed: AllowedMethods

    /// The routes the gateway answers besides the public API: the document, the problem pages, the dashboard's pages
    /// and the operational routes. `.admin` routes are left out: a wrong method there is the 404 of an unknown path, so
    /// a 405 with `Allow` does not tell who is not an admin that they exist.
    static func routes(_ publicRoutes: [PublicRoute]) -> [(method: HTTPRequest.Method, path: String)] {
        publicRoutes.filter { $0.access != .admin }.map { ($0.method, $0.path) }
            + [(.get, "/openapi.json"), (.get, ProblemPagesController.path), (.get, "/healthz"), (.get, "/readyz"), (.get, "/metrics")]
            + DashboardController.paths.map { (.get, $0) }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard !allowed.permits(request.method, on: path) else { return try await next(request, context) }
        let allow = allowed.methods(for: path).map(\.rawValue).joined(separator: ", ")
        var response = try Problem(
            slug: "method-not-allowed", title: "Method not allowed", status: .methodNotAllowed,
            detail: "\(request.method.rawValue) is not allowed here; this path answers \(allow)."
        ).response(from: request, context: context)
        response.headers[.allow] = allow
        return response
    }
}
