import Foundation
import Hummingbird
import Logging
import NIOCore
import SurgeContracts
import SurgePostgres
import Synchronization

/// An RFC 9457 problem: the only shape Surge's HTTP errors take. `type` is stable per kind of error, so clients can
/// branch on it; `errors` names each offending field.
public struct Problem: HTTPResponseError, Sendable, Equatable {
    /// The shape domain modules report refusals in (SurgeContracts), so they need not import this module.
    public typealias FieldError = SurgeContracts.FieldError

    /// The `type` base unless `PROBLEM_TYPE_BASE_URL` says otherwise.
    public static let defaultTypeBase = "https://surge.example/problems/"
    private static let configuredTypeBase = Mutex(defaultTypeBase)
    /// What every `type` begins with; one per process, set at start (`useTypeBase`).
    public static var typeBase: String { configuredTypeBase.withLock { $0 } }

    /// Sets the `type` base for the process: `ServiceInfrastructure` does, from `PROBLEM_TYPE_BASE_URL`.
    public static func useTypeBase(_ base: String) {
        configuredTypeBase.withLock { $0 = base }
    }

    public var type: String
    public var title: String
    public var status: HTTPResponse.Status
    public var detail: String?
    public var errors: [FieldError]?
    /// Seconds after which a retry may succeed (rate limits, unavailable dependencies).
    public var retryAfter: Int?

    public init(slug: String, title: String, status: HTTPResponse.Status, detail: String? = nil, errors: [FieldError]? = nil, retryAfter: Int? = nil) {
        self.type = Self.typeBase + slug
        self.title = title
        self.status = status
        self.detail = detail
        self.errors = errors
        self.retryAfter = retryAfter
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let (head, body) = try answer(instance: request.uri.path)
        return Response(status: head.status, headers: head.headerFields, body: .init(byteBuffer: body))
    }

    /// The answer's head and document, for a request to `instance` (its path).
    public func answer(instance: String) throws -> (HTTPResponse, ByteBuffer) {
        let body = Body(type: type, title: title, status: Int(status.code), detail: detail, instance: instance, errors: errors)
        let data = try SurgeJSON.apiEncode(body)
        var headers: HTTPFields = [.contentType: "application/problem+json", .contentLength: String(data.count)]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return (HTTPResponse(status: status, headerFields: headers), ByteBuffer(bytes: data))
    }

    /// The JSON members of a problem document.
    public struct Body: Codable, Sendable, Equatable {
        public var type: String
        public var title: String
        public var status: Int
        public var detail: String?
        public var instance: String?
        public var errors: [FieldError]?
    }
}

extension Problem {
    public static func validation(_ errors: [FieldError], detail: String = "The request has invalid fields.") -> Problem {
        Problem(slug: "validation", title: "Invalid request", status: .unprocessableContent, detail: detail, errors: errors)
    }

    public static func validation(field: String, _ message: String) -> Problem {
        validation([FieldError(field: field, message: message)])
    }

    public static func malformedBody(_ detail: String) -> Problem {
        Problem(slug: "malformed-body", title: "Malformed request body", status: .badRequest, detail: detail)
    }

    /// Text the request carries (body strings and keys, query parameters) contains U+0000, which PostgreSQL cannot
    /// store: a 400 naming each field.
    public static func invalidCharacters(_ errors: [FieldError]) -> Problem {
        Problem(
            slug: "invalid-characters", title: "Invalid characters", status: .badRequest,
            detail: "Text must not contain NUL (U+0000) characters.", errors: errors)
    }

    /// Refuses NUL characters in query parameters (names or values) before they reach a query.
    public static func checkNoNUL(in parameters: [String: String]) throws {
        let errors = FieldError.nulCharacters(in: parameters)
        guard errors.isEmpty else { throw invalidCharacters(errors) }
    }

    /// A `cursor` this API did not issue, or issued for another list or sort order: 400, a request that cannot name a
    /// position. The client starts the list again without a cursor.
    public static func unknownCursor() -> Problem {
        Problem(
            slug: "unknown-cursor", title: "Unknown cursor", status: .badRequest,
            detail: "This cursor was not issued for this list (or sort order): request the first page again without a cursor.")
    }

    public static func notFound(_ detail: String = "No such resource.") -> Problem {
        Problem(slug: "not-found", title: "Not found", status: .notFound, detail: detail)
    }

    public static func unauthorized(_ detail: String = "A valid access token is required.") -> Problem {
        Problem(slug: "unauthorized", title: "Unauthorized", status: .unauthorized, detail: detail)
    }

    public static func forbidden(_ detail: String = "You may not do this.") -> Problem {
        Problem(slug: "forbidden", title: "Forbidden", status: .forbidden, detail: detail)
    }

    public static func conflict(_ slug: String = "conflict", _ detail: String) -> Problem {
        Problem(slug: slug, title: "Conflict", status: .conflict, detail: detail)
    }

    public static func tooLarge(limit: Int) -> Problem {
        Problem(slug: "payload-too-large", title: "Payload too large", status: .contentTooLarge, detail: "The body may be at most \(limit) bytes.")
    }

    public static let internalError = Problem(
        slug: "internal", title: "Internal error", status: .internalServerError,
        detail: "Something went wrong on our side. It has been logged.")

    public static func unavailable(_ detail: String, retryAfter: Int = 1) -> Problem {
        Problem(slug: "unavailable", title: "Service unavailable", status: .serviceUnavailable, detail: detail, retryAfter: retryAfter)
    }

    /// The problem for any status a framework error carried.
    public static func forStatus(_ status: HTTPResponse.Status, detail: String?) -> Problem {
        switch status {
        case .notFound: notFound(detail ?? "No such resource.")
        case .methodNotAllowed: Problem(slug: "method-not-allowed", title: "Method not allowed", status: status, detail: detail)
        case .badRequest: malformedBody(detail ?? "The request could not be read.")
        case .contentTooLarge:
            Problem(slug: "payload-too-large", title: "Payload too large", status: status, detail: detail ?? "The body is larger than this operation takes.")
        case .unauthorized: unauthorized(detail ?? "A valid access token is required.")
        case .forbidden: forbidden(detail ?? "You may not do this.")
        case .unsupportedMediaType: Problem(slug: "unsupported-media-type", title: "Unsupported media type", status: status, detail: detail)
        default: Problem(slug: "http-\(status.code)", title: status.reasonPhrase, status: status, detail: detail)
        }
    }
}

/// A domain error that its service's `<Name>Problems` describes as a problem document (declared there, at the edge), so
/// use cases and stores throw domain errors and never build HTTP answers.
public protocol ProblemDescribing: Error {
    var problem: Problem { get }
}

/// Turns every error into a problem document; unexpected errors are logged and answered with a generic 500.
public struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            throw Problem.from(error, logger: context.logger)
        }
    }
}

extension Problem {
    /// The problem document for any error; a database outage is a 503 the client may retry, other unexpected errors
    /// are logged and become a generic 500.
    public static func from(_ error: any Error, logger: Logger) -> Problem {
        switch error {
        case let problem as Problem:
            return problem
        case let error as any ProblemDescribing:
            return error.problem
        // What every `collect(upTo:)` throws past its limit: Hummingbird answers it as a bare 413.
        case let error as NIOTooManyBytesError:
            return error.maxBytes.map(Problem.tooLarge(limit:)) ?? Problem.forStatus(.contentTooLarge, detail: nil)
        case let error as HTTPError:
            return Problem.forStatus(error.status, detail: error.body)
        case let error as any HTTPResponseError:
            return Problem.forStatus(error.status, detail: nil)
        case _ where error.isDatabaseUnavailable:
            logger.warning("Database unavailable", metadata: ["error": "\(String(reflecting: error))"])
            return Problem.unavailable("The database is not reachable right now.")
        default:
            logger.error("Unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            return Problem.internalError
        }
    }
}
