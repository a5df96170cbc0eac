import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import SurgeContracts

/// Headers the gateway sets on requests it forwards to services.
public enum InternalHeaders {
    /// The authenticated caller's user id, trusted only under a valid `InternalCallSigner` signature.
    public static let caller = HTTPField.Name("X-Surge-Caller")!
    /// The client's address as the gateway determined it (the TCP peer, or the trusted `X-Forwarded-For` hop),
    /// trusted only under a valid signature.
    public static let clientAddress = HTTPField.Name("X-Surge-Client-Address")!
    /// The authenticated caller's roles from the access token (`admin`), comma-separated; absent when it has none.
    /// Trusted only under a valid signature, which covers it.
    public static let roles = HTTPField.Name("X-Surge-Roles")!
    /// The session (refresh-token family) the caller's access token belongs to, its `sid`; absent for a token without
    /// one. Trusted only under a valid signature, which covers it.
    public static let session = HTTPField.Name("X-Surge-Session")!
    /// The client's `Idempotency-Key` on a keyed route, forwarded so that the service records its answer in the
    /// command's own transaction (`IdempotentRequestMiddleware`). Trusted only under a valid signature, which covers it.
    public static let idempotencyKey = HTTPField.Name("X-Surge-Idempotency-Key")!
    public static let requestID = HTTPField.Name("X-Request-ID")!
    public static let traceparent = HTTPField.Name("traceparent")!
    public static let tracestate = HTTPField.Name("tracestate")!
}

/// The request context of every Surge service: who is calling and which trace the request belongs to.
public struct SurgeRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var callerID: UUID?
    /// The end client's address, as the gateway saw it; nil for a call the gateway did not sign.
    public var clientAddress: String?
    /// The caller's roles as the gateway forwarded them under its signature (`admin`); empty for anyone else.
    public var callerRoles: Set<String> = []
    /// The session the caller's access token belongs to, as the gateway forwarded it under its signature.
    public var callerSessionID: UUID?
    /// The client's `Idempotency-Key`, when the gateway forwarded one under its signature.
    public var idempotencyKey: String?
    public var trace = TraceContext()

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    public var requestDecoder: StrictJSONDecoder { StrictJSONDecoder() }
    /// Whole-second instants and lower-case UUIDs (`SurgeJSON.apiEncoder`).
    public var responseEncoder: APIResponseEncoder { APIResponseEncoder() }
    public var maxUploadSize: Int { 256 * 1024 }

    /// The authenticated caller, or 401.
    public func caller() throws -> UUID {
        guard let callerID else { throw Problem.unauthorized() }
        return callerID
    }

    /// The first line of every `.admin` operation's handler: the caller, when the gateway vouched (signed) that its
    /// access token carries the admin role; otherwise the same 404 an unknown route gets. The gateway refuses such
    /// callers already; this is the second fence.
    @discardableResult
    public func requireAdmin() throws -> UUID {
        guard let callerID, callerRoles.contains("admin") else { throw Problem.notFound() }
        return callerID
    }
}

/// Checks that a request comes from the gateway (`InternalCallSigner`), then reads the caller, request id and W3C
/// trace context it forwarded, tags the log with them and echoes the request id. A request without a valid signature
/// is refused with 401 before any handler runs; only the operational routes, the public signing keys and the
/// development clock answer anyone.
public struct ForwardedContextMiddleware: RouterMiddleware {
    public typealias Context = SurgeRequestContext

    let signer: InternalCallSigner
    /// This replica's memory of the calls it accepted: a replayed call is refused.
    let seen: SeenSignatures

    public init(signer: InternalCallSigner, seen: SeenSignatures = SeenSignatures()) {
        self.signer = signer
        self.seen = seen
    }

    static let unauthenticated = Problem(
        slug: "unauthenticated-call", title: "Unauthenticated call", status: .unauthorized,
        detail: "Services answer only calls signed by the gateway.")

    /// The only routes that answer an unsigned call: health, metrics, the public signing keys, the development clock.
    static let openPaths: Set<String> = ["/healthz", "/readyz", "/metrics", "/internal/jwks.json", "/internal/clock"]

    /// Decided on the raw request target, not the decoded path: a target whose percent-encoding does not decode must
    /// not slip past as some other path.
    static func needsSignature(_ target: String) -> Bool {
        let path = target.utf8.prefix { $0 != UInt8(ascii: "?") }
        return !openPaths.contains { $0.utf8.elementsEqual(path) }
    }

    /// Whether an HTTP/1 request has a body: a length other than 0, or a transfer coding.
    static func mayHaveBody(_ request: Request) -> Bool {
        request.headers[.transferEncoding] != nil || (request.headers[.contentLength].map { $0 != "0" } ?? false)
    }

    /// Whether the target holds a NUL byte or `%00`.
    static func mayHoldNUL(_ target: String) -> Bool {
        target.utf8.contains(0) || target.contains("%00")
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        var request = request
        let forwardedID = request.headers[InternalHeaders.requestID]
        let requestID = forwardedID ?? UUID.pooledRandom().key
        let target = request.head.path ?? ""
        if Self.needsSignature(target) {
            let caller = request.headers[InternalHeaders.caller]
            let clientAddress = request.headers[InternalHeaders.clientAddress]
            let roles = request.headers[InternalHeaders.roles]
            let session = request.headers[InternalHeaders.session]
            let idempotencyKey = request.headers[InternalHeaders.idempotencyKey]
            guard
                let signature = signer.verify(
                    request.headers[InternalCallSigner.header], method: request.method.rawValue, target: target,
                    caller: caller, clientAddress: clientAddress, roles: roles, session: session, requestID: forwardedID ?? "",
                    idempotencyKey: idempotencyKey)
            else { throw Self.unauthenticated }
            switch seen.use(signature) {
            case .first: break
            case .repeated:
                throw Problem(
                    slug: "unauthenticated-call", title: "Unauthenticated call", status: .unauthorized,
                    detail: "This signed call was already answered: the gateway signs each call once.")
            case .full: throw Problem.unavailable("Too many calls to remember right now.")
            }
            if signature.body != .empty || Self.mayHaveBody(request) {
                request.body = RequestBody(asyncSequence: DigestCheckedBody(base: request.body, expected: signature.body))
            }
            context.callerID = caller.flatMap { UUID(text: $0) }
            context.clientAddress = clientAddress
            context.idempotencyKey = idempotencyKey
            // Roles and a session mean something only for a caller.
            if context.callerID != nil { context.callerSessionID = session.flatMap { UUID(text: $0) } }
            if context.callerID != nil, let roles {
                context.callerRoles = Set(roles.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
            }
            // PostgreSQL cannot store or compare U+0000 in text: refused here for every query parameter of every route.
            // Only `%00` decodes to it, so a target without one is not parsed here.
            if Self.mayHoldNUL(target) {
                var parameters: [String: String] = [:]
                for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
                try Problem.checkNoNUL(in: parameters)
            }
        }
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

/// A request body checked against the digest the gateway signed as it is read: the end of the body throws when it is
/// not the signed one. Every handler collects its body whole before using it, so a body that is not the one signed is
/// refused before anything acts on it.
struct DigestCheckedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let base: RequestBody
    let expected: InternalCallSigner.BodyDigest

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        let expected: InternalCallSigner.BodyDigest
        var hasher: SHA256? = SHA256()

        mutating func next() async throws -> ByteBuffer? {
            guard hasher != nil else { return nil }
            if let chunk = try await base.next() {
                chunk.withUnsafeReadableBytes { hasher?.update(bufferPointer: $0) }
                return chunk
            }
            let digest = InternalCallSigner.BodyDigest(hasher!.finalize())
            hasher = nil
            guard digest == expected else {
                throw Problem(
                    slug: "unauthenticated-call", title: "Unauthenticated call", status: .unauthorized,
                    detail: "The body is not the one the gateway signed.")
            }
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), expected: expected)
    }
}
