import Hummingbird
import SurgeContracts
import SurgeRuntime

/// Registers every public route: each goes through the pipeline, then to its service, or to the gateway's own
/// handler for the few operations the gateway answers itself.
struct PublicRouter {
    typealias LocalHandler = RoutePipeline.Handler

    let pipeline: RoutePipeline
    let proxy: ProxyController
    let local: [String: LocalHandler]

    static func key(_ method: HTTPRequest.Method, _ path: String) -> String { "\(method.rawValue) \(path)" }

    func addRoutes(_ routes: [PublicRoute], to router: Router<GatewayRequestContext>) {
        for route in routes {
            let handler: LocalHandler
            if route.upstream == .gateway {
                guard let local = local[Self.key(route.method, route.path)] else {
                    preconditionFailure("no gateway handler for \(route.method) \(route.path)")
                }
                handler = local
            } else {
                handler = { request, context in try await proxy.forward(request, context: context, to: route.upstream) }
            }
            router.on(RouterPath(route.routerPath), method: route.method) { request, context in
                try await pipeline.handle(request, context: context, route: route, handler: handler)
            }
        }
    }
}
