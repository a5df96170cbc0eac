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

/// What every public route goes through, in order: rate limits, authentication, idempotency, conditional requests
/// (`ETag`, `If-None-Match`, `If-Match`), then the handler (forwarding to a service, or a gateway-local operation).
/// `RateLimit-*` headers go on every answer; the 404 an `.admin` route gives whoever is not an admin is the unknown
/// route's, headers and all (`UnroutedRateLimitMiddleware`).
struct RoutePipeline: Sendable {
    typealias Handler = @Sendable (Request, GatewayRequestContext) async throws -> Response

    let limits: RateLimits
    let limiter: RateLimiter
    let authenticator: Authenticator
    let idempotency: IdempotencyStore
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
                let conditional: Handler = { request, context in try await ConditionalRequests.respond(request, context: context, handler: handler) }
                if route.idempotent, let key = request.headers[.idempotencyKey] {
                    response = try await idempotent(request, context: context, key: key, ip: ip, bodyLimit: bodyLimit, handler: conditional)
                } else {
                    response = try await conditional(request, context)
                }
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
        let tightest = Self.tightest(decisions)
        headers[.rateLimitLimit] = String(tightest.policy.limit)
        headers[.rateLimitRemaining] = String(tightest.remaining)
        headers[.rateLimitReset] = String(tightest.resetSeconds)
        headers[.rateLimitPolicy] = "\(tightest.policy.limit);w=\(Int(tightest.policy.windowSeconds))"
    }

    /// Runs the request once per key; a retry with the same key and body gets the stored first answer.
    private func idempotent(
        _ request: Request, context: GatewayRequestContext, key: String, ip: String, bodyLimit: Int, handler: Handler
    ) async throws -> Response {
        guard IdempotencyFingerprint.isAcceptable(key) else {
            throw Problem.validation(field: "Idempotency-Key", "must be 1 to 255 visible ASCII characters")
        }
        var request = request
        let body = try await request.collectBody(upTo: bodyLimit)
        let fingerprint = IdempotencyFingerprint.of(method: request.method.rawValue, path: request.uri.description, body: Data(buffer: body))
        // Signed-out keys are scoped to the client's address, so nobody can replay a guessable key to read another
        // person's sign-up response.
        let scope = context.callerID.map { "user:\($0.key)" } ?? "anonymous:\(ip)"
        switch try await idempotency.claim(scope: scope, key: key, fingerprint: fingerprint, now: now()) {
        case .mismatch:
            throw Problem(
                slug: "idempotency-key-reused", title: "Idempotency key reused", status: .conflict,
                detail: "This Idempotency-Key was used for a different request; use a new key for a new request.")
        case .inProgress:
            throw Problem(
                slug: "idempotency-key-in-progress", title: "Request in progress", status: .conflict,
                detail: "A request with this Idempotency-Key is still running.", retryAfter: 1)
        case .replay(let stored):
            var headers: HTTPFields = [.idempotentReplayed: "true", .contentLength: String(stored.body.count)]
            if let contentType = stored.contentType { headers[.contentType] = contentType }
            if let location = stored.location { headers[.location] = location }
            return Response(
                status: HTTPResponse.Status(code: stored.status), headers: headers, body: .init(byteBuffer: ByteBuffer(data: stored.body)))
        case .claimed:
            // The service records its answer with its command, under the same key: whether a request whose connection
            // broke was committed is known there, not here.
            var context = context
            context.idempotencyKey = key
            let response: Response
            do {
                response = try await handler(request, context)
            } catch {
                try? await idempotency.release(scope: scope, key: key)
                throw error
            }
            // A server error, or an answer that asks to retry later, is not the request's final outcome.
            guard response.status.code < 500, response.headers[.retryAfter] == nil else {
                try? await idempotency.release(scope: scope, key: key)
                return response
            }
            var replayable = response
            let buffer = try await replayable.collectBody()
            let stored = IdempotencyStore.StoredResponse(
                status: response.status.code, contentType: response.headers[.contentType], location: response.headers[.location],
                body: Data(buffer: buffer))
            try await idempotency.complete(scope: scope, key: key, response: stored, now: now())
            return replayable
        }
    }
}

extension RoutePipeline {
    /// The pipeline with the limits, client address and body limits `settings` give.
    init(settings: GatewaySettings, limiter: RateLimiter, authenticator: Authenticator, idempotency: IdempotencyStore, now: @escaping @Sendable () -> Date) {
        self.init(
            limits: settings.rateLimits, limiter: limiter, authenticator: authenticator, idempotency: idempotency,
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
        guard trustedHops > 0, let forwarded = headers[.xForwardedFor] else { return peer }
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
