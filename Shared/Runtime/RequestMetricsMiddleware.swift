import Dispatch
import Hummingbird
import Metrics
import Synchronization

/// Requests answered, their duration and errors per route, method and status, and the requests in flight: the metrics
/// of Hummingbird's `MetricsMiddleware` (its dimensions, and its names with Prometheus's suffixes: `_total` on a
/// counter, the unit on a duration), recorded without wrapping the response body.
///
/// Hummingbird's middleware records after the body is written, by turning every body into a closure. That takes a
/// response off Hummingbird's single-buffer path: head, body and end then leave as three writes, each a hop to the
/// event loop and a `write(2)`, where one does. A body of known length is in memory when the handler returns, so its
/// request is recorded then; a streamed body (no length) is still recorded when its last byte is written.
public struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    private let cache = RequestMetricsCache()

    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let active = cache.active(request.method)
        active.increment()
        do {
            var response = try await next(request, context)
            let endpoint = cache.endpoint(.init(route: context.endpointPath ?? "Unknown", method: request.method, status: response.status))
            guard response.body.contentLength == nil else {
                endpoint.record(since: started)
                active.decrement()
                return response
            }
            let body = response.body
            response.body = ResponseBody { writer in
                defer {
                    endpoint.record(since: started)
                    active.decrement()
                }
                try await body.write(writer)
            }
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            let endpoint = cache.endpoint(.init(route: context.endpointPath ?? "NotFound", method: request.method, status: status))
            endpoint.requests.increment()
            endpoint.errors.increment()
            active.decrement()
            throw error
        }
    }
}

/// The metric handles per method and per route, method and status, created once each.
public final class RequestMetricsCache: Sendable {
    public struct EndpointKey: Hashable, Sendable {
        public var route: String
        public var method: HTTPRequest.Method
        public var status: HTTPResponse.Status

        public init(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status) {
            (self.route, self.method, self.status) = (route, method, status)
        }
    }

    public struct Endpoint: Sendable {
        let requests: Counter
        let duration: Timer
        let errors: Counter

        init(_ key: EndpointKey) {
            let (route, method, status) = (key.route, key.method.rawValue, key.status.code.description)
            requests = Counter(
                label: "hb_requests_total", dimensions: [("http.route", route), ("http.request.method", method), ("http.response.status_code", status)])
            duration = Timer(
                label: "http_server_request_duration_seconds",
                dimensions: [("http.route", route), ("http.request.method", method), ("http.response.status_code", status)], preferredDisplayUnit: .seconds)
            errors = Counter(label: "hb_request_errors_total", dimensions: [("http.route", route), ("http.request.method", method), ("error.type", status)])
        }

        public func record(since started: UInt64) {
            requests.increment()
            duration.recordNanoseconds(DispatchTime.now().uptimeNanoseconds - started)
        }
    }

    private let actives = Mutex<[HTTPRequest.Method: Meter]>([:])
    private let endpoints = Mutex<[EndpointKey: Endpoint]>([:])

    public init() {}

    public func active(_ method: HTTPRequest.Method) -> Meter {
        actives.withLock { actives in
            if let meter = actives[method] { return meter }
            let meter = Meter(label: "http_server_active_requests", dimensions: [("http.request.method", method.rawValue)])
            actives[method] = meter
            return meter
        }
    }

    public func endpoint(_ key: EndpointKey) -> Endpoint {
        endpoints.withLock { endpoints in
            if let endpoint = endpoints[key] { return endpoint }
            let endpoint = Endpoint(key)
            endpoints[key] = endpoint
            return endpoint
        }
    }
}
