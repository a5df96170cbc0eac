import Foundation
import HTTPTypes
import Hummingbird
import SurgeContracts

/// One operation of the public API, declared by the service that answers it. Services register their handlers
/// through these declarations, the OpenAPI document is generated from them, and the gateway's route table is
/// generated from that: one source of truth, so the three cannot drift.
public struct APIOperation: Sendable {
    public enum Access: String, Sendable {
        /// Anyone may call it (sign-up, sign-in).
        case anonymous
        /// Needs a valid access token; the gateway passes the caller's id on.
        case authenticated
        /// Needs a valid access token with the admin role (`surge-admin grant-admin`). To anyone else (anonymous, a
        /// guest, an ordinary user, a bad token) the gateway answers the 404 of an unknown route before forwarding
        /// anything, so the route's existence does not show; it forwards the caller's roles signed, and the service
        /// checks again with `context.requireAdmin()`.
        case admin

        /// Whether the gateway must verify an access token: `.authenticated` and `.admin`.
        public var needsToken: Bool { self != .anonymous }
    }

    /// How hard the gateway rate-limits the operation.
    public enum Throttle: String, Sendable {
        case standard
        /// Credential checks (sign-in, sign-up, refresh): a much smaller budget per IP, against password guessing.
        case credentials
    }

    public struct QueryParameter: Sendable {
        public var name: String
        public var description: String
        public var schema: JSONSchema
        public var required: Bool

        public init(_ name: String, _ description: String, schema: JSONSchema = .string(), required: Bool = false) {
            self.name = name
            self.description = description
            self.schema = schema
            self.required = required
        }

        /// `limit` and `cursor` of every paginated list.
        public static let pagination: [QueryParameter] = [
            QueryParameter(
                "limit", "Items per page.",
                schema: .integer(in: 1...PageRequest<Int>.maximumLimit, default: PageRequest<Int>.defaultLimit)),
            QueryParameter(
                "cursor",
                "The `nextCursor` of the previous page; opaque. Absent or empty: the first page. A cursor not issued for this list "
                    + "(and sort order) is 400 `unknown-cursor`: start again without one."),
        ]
    }

    /// A `{placeholder}` of a path: its schema and meaning.
    public struct PathParameter: Sendable {
        public var schema: JSONSchema
        public var description: String
    }

    /// Every path parameter name the API uses. Only the ones parsed as UUIDs are UUIDs; the generator refuses a name
    /// missing here.
    public static let pathParameters: [String: PathParameter] = {
        let uuids = [
            "attemptID": "An attempt.", "challengeID": "A challenge (any version).", "groupID": "A group.", "logID": "A logged amount.",
            "occurrenceID": "A chore occurrence.", "photoID": "A photo.", "requestID": "A friend request.", "userID": "A user.",
            "notificationID": "A notification in the caller's inbox.",
            "pushTokenID": "One of the caller's push devices.",
            "webhookID": "One of the caller's webhook subscriptions.",
            "sessionID": "One of the caller's signed-in devices (a session from the session list).",
        ].mapValues { PathParameter(schema: .string(format: "uuid"), description: $0) }
        return uuids.merging([
            "taskID": PathParameter(
                schema: JSONSchema.string().refined(.init(pattern: "^[a-z0-9-]{1,40}$", example: "push-ups")),
                description: "A task of the attempt's challenge, by its id within the definition (not a UUID)."),
            "version": PathParameter(schema: JSONSchema.integer.refined(.init(minimum: 1, example: 2)), description: "A version number, from 1."),
            "code": PathParameter(
                schema: JSONSchema.string().refined(.init(pattern: "^[A-HJKMNP-TV-Za-hjkmnp-tv-z2-9-]+$", example: "K7MP-Q2RX-VA")),
                description: "An invite code: 10 characters, case-insensitive; dashes are ignored."),
        ]) { $1 }
    }()

    public var id: String
    public var method: HTTPRequest.Method
    /// OpenAPI path template: `/v1/groups/{groupID}/members`.
    public var path: String
    public var summary: String
    public var service: SurgeService
    public var access: Access
    public var throttle: Throttle
    public var query: [QueryParameter]
    public var requestType: (any (Decodable & Sendable).Type)?
    /// The request body's media type when it is not JSON (a photo upload).
    public var requestMediaTypes: [String]
    /// Whether the JSON body may be left out (an empty body stands for the defaults).
    public var requestRequired: Bool
    public var status: HTTPResponse.Status
    public var responseType: (any (Decodable & Sendable).Type)?
    /// The success response's media types when it is not JSON (a photo's bytes).
    public var responseMediaTypes: [String]
    /// The problem types particular to this operation; the generic ones (validation, authentication, rate limits,
    /// 404 for a path that names nothing...) follow from the declaration.
    public var problems: [ProblemType]
    /// Error statuses worth documenting that no problem type above names.
    public var errors: [HTTPResponse.Status]
    /// POSTs that create something (and other commands declared so, such as a tick) accept `Idempotency-Key`; the
    /// gateway replays the first response to a retry, and the service records it with the command
    /// (`IdempotentRequestMiddleware`).
    public var idempotent: Bool

    public init(
        _ method: HTTPRequest.Method, _ path: String, id: String, service: SurgeService, summary: String,
        access: Access = .authenticated, throttle: Throttle = .standard, query: [QueryParameter] = [],
        request: (any (Decodable & Sendable).Type)? = nil, requestRequired: Bool = true, requestMediaTypes: [String] = ["application/json"],
        status: HTTPResponse.Status = .ok, response: (any (Decodable & Sendable).Type)? = nil, responseMediaTypes: [String] = [],
        problems: [ProblemType] = [], errors: [HTTPResponse.Status] = [], idempotent: Bool? = nil
    ) {
        self.id = id
        self.method = method
        self.path = path
        self.summary = summary
        self.service = service
        self.access = access
        self.throttle = throttle
        self.query = query
        self.requestType = request
        self.requestRequired = requestRequired
        self.requestMediaTypes = requestMediaTypes
        self.status = status
        self.responseType = response
        self.responseMediaTypes = responseMediaTypes
        self.problems = problems
        self.errors = errors
        self.idempotent = idempotent ?? (method == .post && status == .created)
    }

    /// A read whose JSON answer the gateway tags with a strong `ETag`, answering 304 to an `If-None-Match` that names
    /// it (`ConditionalRequests`).
    public var isTagged: Bool { method == .get && responseType != nil }
    /// A change the gateway makes conditional on `If-Match`: 412 `precondition-failed` unless it names the current tag.
    public var acceptsIfMatch: Bool { method == .patch }

    /// The template in Hummingbird's router syntax: `/v1/groups/:groupID/members`.
    public var routerPath: RouterPath {
        RouterPath(path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? ":" + segment.dropFirst().dropLast() : segment
        }.joined(separator: "/"))
    }

    /// Whether the body is an upload (a photo), not JSON.
    public var isUpload: Bool { requestMediaTypes != ["application/json"] }

    /// Names of the `{placeholders}` in the path.
    public var pathParameters: [String] {
        path.split(separator: "/").filter { $0.hasPrefix("{") && $0.hasSuffix("}") }.map { String($0.dropFirst().dropLast()) }
    }
}

extension Router {
    /// Registers `handler` for a declared operation.
    @discardableResult
    public func add<Output: ResponseGenerator>(
        _ operation: APIOperation, use handler: @Sendable @escaping (Request, Context) async throws -> Output
    ) -> Self {
        on(operation.routerPath, method: operation.method, use: handler)
    }
}

extension Request {
    /// A path parameter that must be a UUID; 404 when it is not one (no such resource can exist).
    public func uuidParameter(_ name: String, context: some RequestContext) throws -> UUID {
        guard let text = context.parameters.get(name), let id = UUID(text: text) else {
            throw Problem.notFound()
        }
        return id
    }
}
