import Foundation
import GatewayDomain
import HTTPTypes
import Hummingbird
import Metrics
import NIOCore
import NIOFoundationCompat
import SurgeAuth
import SurgeContracts
import SurgeRuntime

/// What every public route goes through, in order: rate limits, authentication, the idempotency key, conditional requests
/// (`ETag`, `If-None-Match`, `If-Match`), then the handler (forwarding to a service, or a gateway-local operation).
/// `RateLimit-*` headers go on every answer; the 404 an `.admin` route gives whoever is not an admin is the unknown
/// route's, headers and all (`UnroutedRateLimitMiddleware`).
struct RoutePipeline: Sendable {
    typealias Handler = @Sendable (Request, GatewayRequestContext) async throws -> Response

    let limits: RateLimits
    let limiter: RateLimiter
    let authenticator: Authenticator
    let clientAddress: ClientAddress
    let maxBodyBytes: Int
    let maxUploadBytes: Int
    let now: @Sendable () -> Date

    func handle(_ request: Request, context: GatewayRequestContext, route: PublicRoute, handler: @escaping Handler) async throws -> Response {
        var context = context
        let bodyLimit = route.acceptsUpload ? maxUploadBytes : maxBodyBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > bodyLimit {
            throw Problem.tooLarge(limit: bodyLimit)
        }
        // The IP's budgets are spent before the token is checked, so bad tokens cannot be tried without limit.
        let ip = clientAddress.of(request.headers, peer: context.peerAddress)
        context.clientAddress = ip
        var decisions = spendAddressBudgets(ip: ip, route: route)
        var response: Response
        if route.access == .admin {
            // Anyone not proven an admin (no token, a bad or expired one, a guest's, an ordinary user's) gets exactly
            // what a path the gateway does not route gets: the 404 thrown to the router's middleware, no RateLimit
            // headers. Past its IP budget the token is not even checked (no unbounded signature checks): also 404.
            guard decisions.allSatisfy(\.allowed), let caller = try? await authenticator.caller(of: request),
                caller.roles.contains(AccessTokenClaims.adminRole)
            else { throw AdminRouteHidden(decisions: decisions) }
            context.callerID = caller.id
            context.callerRoles = caller.roles
            context.callerSessionID = caller.sessionID
            decisions.append(spendCallerBudget(caller.id))
        } else if decisions.allSatisfy(\.allowed), route.access == .authenticated {
            do {
                let caller = try await authenticator.caller(of: request)
                context.callerID = caller.id
                context.callerRoles = caller.roles
                context.callerSessionID = caller.sessionID
                decisions.append(spendCallerBudget(caller.id))
            } catch {
                response = try Problem.from(error, logger: context.logger).response(from: request, context: context)
                return Self.withRateLimitHeaders(response, decisions)
            }
        }
        let tightest = Self.tightest(decisions)
        if !tightest.allowed {
            response = try Self.rateLimited(tightest).response(from: request, context: context)
        } else {
            do {
                var request = request
                // The whole body is read here, before anything can answer. An answer sent while the body is still
                // arriving (a 415 or 404 from a service that never reads it, a 413 half-way) would leave its reader
                // suspended on the connection while the server drains the rest: two readers of one HTTP stream,
                // which NIO traps on. Bodies are small and capped, so buffering them costs little.
                try await Self.collectBody(of: &request, limit: bodyLimit)
                if route.idempotent, let key = request.headers[.idempotencyKey] {
                    // The service keeps the first answer to the key with its command, in one transaction
                    // (`IdempotentRequestMiddleware`): only it knows whether a request whose connection broke was committed.
                    guard Self.isAcceptable(idempotencyKey: key) else {
                        throw Problem.validation(field: "Idempotency-Key", "must be 1 to 255 visible ASCII characters")
                    }
                    context.idempotencyKey = key
                }
                response = try await ConditionalRequests.respond(request, context: context, handler: handler)
            } catch {
                response = try Problem.from(error, logger: context.logger).response(from: request, context: context)
            }
        }
        return Self.withRateLimitHeaders(response, decisions)
    }

    /// Replaces the streamed body by the collected one; 413 past `limit`.
    static func collectBody(of request: inout Request, limit: Int) async throws {
        do {
            _ = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw Problem.tooLarge(limit: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw Problem.tooLarge(limit: limit)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // A malformed chunk, or a connection that ended before its Content-Length: the client's fault, not ours.
            throw Problem.malformedBody("The request body could not be read: it was cut short or badly framed.")
        }
    }

    /// The client address's budgets a request to `route` spends, spent.
    func spendAddressBudgets(ip: String, route: PublicRoute) -> [RateLimitDecision] {
        limits.budgets(ip: ip, userID: nil, credentialOperation: route.throttle == .credentials).map { take($0, $1) }
    }

    /// The proven caller's budget, spent; only once the address's budgets allowed the request.
    func spendCallerBudget(_ caller: UUID) -> RateLimitDecision {
        take(caller.key, limits.perUser)
    }

    /// The 429 for a request `tightest` refused, counted in `surge_rate_limited_total`.
    static func rateLimited(_ tightest: RateLimitDecision) -> Problem {
        rejected(by: tightest.policy).increment()
        return Problem(
            slug: "rate-limited", title: "Too many requests", status: .tooManyRequests,
            detail: "Slow down: retry after \(tightest.retryAfterSeconds ?? 1) seconds.", retryAfter: tightest.retryAfterSeconds)
    }

    private func take(_ key: String, _ policy: RateLimitPolicy) -> RateLimitDecision {
        limiter.take(key, policy: policy, now: Double(DispatchTime.now().uptimeNanoseconds) / 1e9)
    }

    /// The refused decision if any, else the one with the fewest requests left.
    static func tightest(_ decisions: [RateLimitDecision]) -> RateLimitDecision {
        decisions.min { ($0.allowed ? 1 : 0, $0.remaining) < ($1.allowed ? 1 : 0, $1.remaining) }!
    }

    /// The client address's budgets spent on a request no route answers (`UnroutedRateLimitMiddleware`).
    func spendAddressBudget(of request: Request, context: GatewayRequestContext) -> [RateLimitDecision] {
        limits.budgets(ip: clientAddress.of(request.headers, peer: context.peerAddress), userID: nil, credentialOperation: false).map { take($0, $1) }
    }

    static func withRateLimitHeaders(_ response: Response, _ decisions: [RateLimitDecision]) -> Response {
        var response = response
        setRateLimitHeaders(&response.headers, decisions)
        return response
    }

    /// `RateLimit-*` from the tightest of `decisions`.
    static func setRateLimitHeaders(_ headers: inout HTTPFields, _ decisions: [RateLimitDecision]) {
        for (name, value) in rateLimitFields(decisions) { headers[name] = value }
    }

    /// `RateLimit-*` from the tightest of `decisions`, as fields.
    static func rateLimitFields(_ decisions: [RateLimitDecision]) -> [(HTTPField.Name, String)] {
        let tightest = Self.tightest(decisions)
        return [
            (.rateLimitLimit, String(tightest.policy.limit)), (.rateLimitRemaining, String(tightest.remaining)),
            (.rateLimitReset, String(tightest.resetSeconds)), (.rateLimitPolicy, "\(tightest.policy.limit);w=\(Int(tightest.policy.windowSeconds))"),
        ]
    }

    /// Keys are client-chosen: 1 to 255 visible ASCII characters.
    static func isAcceptable(idempotencyKey key: String) -> Bool {
        (1...255).contains(key.utf8.count) && key.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) }
    }
}

extension RoutePipeline {
    /// The pipeline with the limits, client address and body limits `settings` give.
    init(settings: GatewaySettings, limiter: RateLimiter, authenticator: Authenticator, now: @escaping @Sendable () -> Date) {
        self.init(
            limits: settings.rateLimits, limiter: limiter, authenticator: authenticator,
            clientAddress: settings.clientAddress, maxBodyBytes: settings.maxBodyBytes, maxUploadBytes: settings.maxUploadBytes, now: now)
        // Each budget's series exists from the start, at zero.
        for policy in limits.all { _ = Self.rejected(by: policy) }
    }

    /// `surge_rate_limited_total{policy}`: requests answered 429, by the budget they exhausted (`ip`, `user`, `credentials`).
    static func rejected(by policy: RateLimitPolicy) -> Counter {
        Counter(label: "surge_rate_limited_total", dimensions: [("policy", policy.name)])
    }
}

/// The client's address: the TCP peer, or with `TRUSTED_PROXY_HOPS` = n > 0, the address n hops from the right of
/// `X-Forwarded-For` (each trusted proxy appends the address it saw).
struct ClientAddress: Sendable {
    let trustedHops: Int

    func of(_ headers: HTTPFields, peer: String) -> String {
        of(forwardedFor: headers[.xForwardedFor], peer: peer)
    }

    /// The address for a request from `peer` with the `X-Forwarded-For` value `forwardedFor`.
    func of(forwardedFor: String?, peer: String) -> String {
        guard trustedHops > 0, let forwarded = forwardedFor else { return peer }
        let hops = forwarded.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard hops.count >= trustedHops else { return hops.first ?? peer }
        return hops[hops.count - trustedHops]
    }
}

extension HTTPField.Name {
    static let idempotencyKey = Self("Idempotency-Key")!
    static let idempotentReplayed = Self("Idempotent-Replayed")!
    static let rateLimitLimit = Self("RateLimit-Limit")!
    static let rateLimitRemaining = Self("RateLimit-Remaining")!
    static let rateLimitReset = Self("RateLimit-Reset")!
    static let rateLimitPolicy = Self("RateLimit-Policy")!
    static let xForwardedFor = Self("X-Forwarded-For")!
}
