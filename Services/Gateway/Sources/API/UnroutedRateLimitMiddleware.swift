import Foundation
import GatewayDomain
import Hummingbird
import SurgeRuntime

/// Gives the answers no route's pipeline made, a 404 for a path the gateway does not route and a 405 for a method a
/// path does not take, the `RateLimit-*` headers every answer carries: the client address's budget is spent on them
/// as on any request (a scanner's guesses count). They stay 404 and 405 past the budget, and the 404 an `.admin` route
/// gives whoever is not an admin is made here too, from the budget its pipeline spent (`AdminRouteHidden`), so the
/// two are alike, headers and all.
struct UnroutedRateLimitMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let pipeline: RoutePipeline

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        var decisions: [RateLimitDecision]?
        do {
            response = try await next(request, context)
        } catch let hidden as AdminRouteHidden {
            response = try Problem.notFound().response(from: request, context: context)
            decisions = hidden.decisions
        } catch {
            let problem = Problem.from(error, logger: context.logger)
            guard problem.status == .notFound else { throw problem }
            response = try problem.response(from: request, context: context)
        }
        // Every answer passes here: the cheap status test first, the header lookup only for a 404 or 405.
        guard response.status == .notFound || response.status == .methodNotAllowed, response.headers[.rateLimitLimit] == nil else {
            return response
        }
        let spent = decisions ?? pipeline.spendAddressBudget(of: request, context: context)
        return RoutePipeline.withRateLimitHeaders(response, spent)
    }
}

/// Thrown by the pipeline for an `.admin` route to anyone not proven an admin: answered as a path the gateway does
/// not route, with the budget the pipeline spent before looking at the token.
struct AdminRouteHidden: Error {
    let decisions: [RateLimitDecision]
}
