import Foundation
import HTTPTypes
import SurgeContracts

/// Writes the OpenAPI 3.1 document of the public API from the services' operation declarations. Request and
/// response schemas are derived from the Codable types the services actually decode and encode; every struct and enum
/// among them is one named schema (`SchemaComponents`).
public enum OpenAPIGenerator {
    public static func document(_ operations: [APIOperation], version: String = SurgeBuild.version) throws -> Data {
        let operations = operations.sorted { ($0.path, $0.method.rawValue) < ($1.path, $1.method.rawValue) }
        let problem = try JSONSchema.detailed(from: Problem.Body.self)
        var components = SchemaComponents()
        try components.collect(problem, .response)
        for operation in operations {
            for schema in try schemas(of: operation, in: .request) { try components.collect(schema, .request) }
            for schema in try schemas(of: operation, in: .response) { try components.collect(schema, .response) }
        }
        if case .named(let id, _) = problem { try components.assignNames(preferred: [id: "Problem"]) }

        var paths: [String: [String: Any]] = [:]
        for operation in operations {
            paths[operation.path, default: [:]][operation.method.rawValue.lowercased()] = try describe(operation, components)
        }
        var schemas = components.rendered()
        schemas["Problem"] = documented(problem: schemas["Problem"] as? [String: Any] ?? [:])
        let document: [String: Any] = [
            "openapi": "3.1.0",
            "info": [
                "title": "Surge public API",
                "version": version,
                "description": """
                    The JSON API of Surge, served by the gateway. Authenticated operations need `Authorization: Bearer \
                    <access token>`. Errors are RFC 9457 problem documents whose `type` is the deployment's \
                    `PROBLEM_TYPE_BASE_URL` (by default \(Problem.defaultTypeBase)) followed by a slug, a link to the gateway's \
                    page for it where the base names the gateway's `/problems/`; each \
                    operation lists the slugs it can answer (`x-problem-types`) and the `Problem` schema explains them all. \
                    Lists are paginated with `limit` and an opaque `cursor`. POSTs that create something accept an \
                    `Idempotency-Key` header. JSON reads carry a strong `ETag` (304 to `If-None-Match`), and a PATCH sent \
                    with `If-Match` applies only to the representation it names (else 412). Every response carries \
                    `X-Request-ID` and the `RateLimit-*` headers; W3C \
                    `traceparent` is honoured. Request bodies are decoded strictly: a field the schema does not list is \
                    refused, and no field takes `null` (leave an optional field out instead). No request text may contain \
                    NUL (U+0000): 400 `invalid-characters`. Instants and dates are from 1970 to 2200 (UTC). Responses \
                    may gain fields and open lists may gain values in later versions.
                    """,
            ],
            "servers": [["url": "http://localhost:8080", "description": "The gateway of a local stack (`make run`)."]],
            "tags": SurgeService.deployed.map { ["name": $0.rawValue] }.filter { tag in operations.contains { $0.service.rawValue == tag["name"] } },
            "paths": paths,
            "components": [
                "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT"]],
                "schemas": schemas,
                "headers": headers,
                "responses": Dictionary(uniqueKeysWithValues: errorStatuses(of: operations).map { (responseName($0), errorResponse($0)) }),
            ],
        ]
        var data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        data.append(contentsOf: "\n".utf8)
        return data
    }

    /// The schemas an operation's requests (body, query and path parameters) or responses use.
    private static func schemas(of operation: APIOperation, in use: SchemaComponents.Use) throws -> [JSONSchema] {
        switch use {
        case .request:
            let parameters = try operation.pathParameters.map { try pathParameter($0).schema } + operation.query.map(\.schema)
            return try parameters + (operation.requestType.map { [try JSONSchema.detailed(from: $0)] } ?? [])
        case .response:
            return try operation.responseType.map { [try JSONSchema.detailed(from: $0)] } ?? []
        }
    }

    private static func pathParameter(_ name: String) throws -> APIOperation.PathParameter {
        guard let parameter = APIOperation.pathParameters[name] else {
            throw SchemaComponents.Mismatch(description: "path parameter {\(name)} is not in APIOperation.pathParameters")
        }
        return parameter
    }

    /// Every problem type the operation can answer, by status.
    static func problems(of operation: APIOperation) -> [ProblemType] {
        var seen: Set<String> = []
        return (ProblemType.common(to: operation) + operation.problems)
            .filter { seen.insert($0.slug).inserted }
            .sorted { ($0.status.code, $0.slug) < ($1.status.code, $1.slug) }
    }

    private static func describe(_ operation: APIOperation, _ components: SchemaComponents) throws -> [String: Any] {
        let problems = problems(of: operation)
        var object: [String: Any] = [
            "operationId": operation.id,
            "summary": firstSentence(of: operation.summary),
            "description": description(of: operation, problems: problems),
            "tags": [operation.service.rawValue],
            "x-surge-service": operation.service.rawValue,
            "x-surge-throttle": operation.throttle.rawValue,
            "x-problem-types": problems.map(\.slug),
            "security": operation.access.needsToken ? [["bearer": [String]()]] : [[String: [String]]](),
        ]
        var parameters: [[String: Any]] = try operation.pathParameters.map { name in
            let parameter = try pathParameter(name)
            return ["name": name, "in": "path", "required": true, "description": parameter.description, "schema": components.reference(parameter.schema, in: .request)]
        }
        parameters += operation.query.map { parameter in
            [
                "name": parameter.name, "in": "query", "required": parameter.required, "description": parameter.description,
                "schema": components.reference(parameter.schema, in: .request),
            ]
        }
        if operation.idempotent {
            parameters.append([
                "name": "Idempotency-Key", "in": "header", "required": false,
                "description": "A client-chosen key: a retry with the same key and body gets the first response again (keys are kept for a day). "
                    + "The same key with a different request is 409 `idempotency-key-reused`; a key still being answered is 409 "
                    + "`idempotency-key-in-progress`; a key that is not 1 to 255 visible ASCII characters is 422 `validation`.",
                "schema": ["type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$", "examples": ["2f1c6a0e-start"]],
            ])
        }
        func entityTagHeader(_ name: String, _ description: String) -> [String: Any] {
            ["name": name, "in": "header", "required": false, "description": description,
             "schema": ["type": "string", "examples": [#""k2VxF0bq1c8b3T0hQd9WZg""#]]]
        }
        if operation.isTagged {
            parameters.append(entityTagHeader(
                "If-None-Match",
                "The `ETag` of the copy the client holds: while the representation is unchanged the answer is 304 without a body."))
        }
        if operation.acceptsIfMatch {
            parameters.append(entityTagHeader(
                "If-Match",
                "The `ETag` of the representation the change was made from (from a GET of the same path): if the resource has "
                    + "changed since, nothing is changed and the answer is 412 `precondition-failed`. Without it the change applies "
                    + "to whatever is current."))
        }
        if !parameters.isEmpty { object["parameters"] = parameters }
        if let requestType = operation.requestType {
            object["requestBody"] = [
                "required": operation.requestRequired,
                "content": ["application/json": ["schema": components.reference(try JSONSchema.detailed(from: requestType), in: .request)]],
            ]
        } else if operation.isUpload {
            object["requestBody"] = ["required": true, "content": binary(operation.requestMediaTypes)]
        }
        var success: [String: Any] = [
            "description": operation.status.reasonPhrase, "headers": responseHeaders(replayable: operation.idempotent, tagged: operation.isTagged),
        ]
        if let responseType = operation.responseType {
            success["content"] = ["application/json": ["schema": components.reference(try JSONSchema.detailed(from: responseType), in: .response)]]
        } else if !operation.responseMediaTypes.isEmpty {
            success["content"] = binary(operation.responseMediaTypes)
        }
        var responses: [String: Any] = [String(operation.status.code): success]
        for status in Set(problems.map(\.status) + operation.errors) {
            responses[String(status.code)] = ["$ref": "#/components/responses/\(responseName(status))"]
        }
        if operation.isTagged {
            responses["304"] = [
                "description": "Not Modified: the representation still has the tag `If-None-Match` named; no body.",
                "headers": responseHeaders(tagged: true),
            ]
        }
        object["responses"] = responses
        return object
    }

    /// The summary, the problem types particular to the operation with their meaning, and the generic ones by name
    /// (the `Problem` schema explains them).
    private static func description(of operation: APIOperation, problems: [ProblemType]) -> String {
        let particular = Set(operation.problems.map(\.slug))
        let own = problems.filter { particular.contains($0.slug) }.map { "- \($0.status.code) `\($0.slug)`: \($0.meaning)" }
        let generic = problems.filter { !particular.contains($0.slug) }.map { "`\($0.slug)` (\($0.status.code))" }
        let admin =
            operation.access == .admin
            ? ["Admins only (an access token with the `admin` role): to anyone else, signed in or not, this answers 404 `not-found`, "
                + "exactly as a path that does not exist."]
            : []
        return ([operation.summary] + admin + (own.isEmpty ? [] : ["Problem types:\n" + own.joined(separator: "\n")])
            + ["Also, as any such operation: " + generic.joined(separator: ", ") + "."]).joined(separator: "\n\n")
    }

    /// Bytes for images, text for `text/*` (CSV, an event stream), so generated clients return each as what it is.
    private static func binary(_ mediaTypes: [String]) -> [String: Any] {
        Dictionary(uniqueKeysWithValues: mediaTypes.map { type in
            (type, ["schema": type.hasPrefix("text/") ? ["type": "string"] : ["type": "string", "format": "binary"]])
        })
    }

    /// The summary's first sentence: up to the first full stop followed by a capital letter.
    static func firstSentence(of text: String) -> String {
        let characters = Array(text)
        for index in characters.indices.dropLast(2) where characters[index] == "." && characters[index + 1] == " " && characters[index + 2].isUppercase {
            return String(characters[...index])
        }
        return text
    }

    // MARK: Headers and shared error responses

    private static var headers: [String: Any] { [
        "X-Request-ID": [
            "description": "The request's id: the client's own `X-Request-ID` if it sent a sane one, else a new one. Quote it when reporting a problem.",
            "schema": ["type": "string"],
        ],
        "Retry-After": ["description": "Seconds after which a retry may succeed.", "schema": ["type": "integer", "minimum": 0]],
        "RateLimit-Limit": ["description": "The request budget of the tightest limit that applies.", "schema": ["type": "integer", "minimum": 0]],
        "RateLimit-Remaining": ["description": "Requests left in that budget.", "schema": ["type": "integer", "minimum": 0]],
        "RateLimit-Reset": ["description": "Seconds until the budget is whole again.", "schema": ["type": "integer", "minimum": 0]],
        "RateLimit-Policy": ["description": "The limit as `<requests>;w=<window seconds>`.", "schema": ["type": "string", "examples": ["120;w=60"]]],
        "ETag": [
            "description": "A strong entity tag of this representation (the same bytes have the same tag): send it back as `If-None-Match` "
                + "to be answered 304 while it is unchanged, or as `If-Match` with a change to the same path.",
            "schema": ["type": "string"],
        ],
        "Idempotent-Replayed": [
            "description": "`true` when this is the stored response to an earlier request with the same `Idempotency-Key`.",
            "schema": ["type": "string", "enum": ["true"]],
        ],
    ] }

    /// `X-Request-ID` on every response; `Retry-After` where a retry may succeed later; the `RateLimit-*` headers, which
    /// every response carries, declared where a client needs them (a 429), so the generated client stays lean.
    private static func responseHeaders(replayable: Bool = false, tagged: Bool = false, retryAfter: Bool = false, rateLimit: Bool = false) -> [String: Any] {
        var names = ["X-Request-ID"]
        if replayable { names.append("Idempotent-Replayed") }
        if tagged { names.append("ETag") }
        if retryAfter { names.append("Retry-After") }
        if rateLimit { names += ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy"] }
        return Dictionary(uniqueKeysWithValues: names.map { ($0, ["$ref": "#/components/headers/\($0)"]) })
    }

    private static func errorStatuses(of operations: [APIOperation]) -> Set<HTTPResponse.Status> {
        Set(operations.flatMap { problems(of: $0).map(\.status) + $0.errors })
    }

    static func responseName(_ status: HTTPResponse.Status) -> String {
        status.reasonPhrase.filter { $0.isLetter || $0.isNumber }
    }

    /// A problem response, shared by every operation that can answer `status`.
    private static func errorResponse(_ status: HTTPResponse.Status) -> [String: Any] {
        let types = ProblemType.all.filter { $0.status == status }.map { "`\($0.slug)`" }
        return [
            "description": "\(status.reasonPhrase): a problem document" + (types.isEmpty ? "." : " (\(types.joined(separator: ", "))); each operation lists its own."),
            "headers": responseHeaders(
                retryAfter: [.tooManyRequests, .serviceUnavailable, .conflict].contains(status), rateLimit: status == .tooManyRequests),
            "content": ["application/problem+json": ["schema": ["$ref": "#/components/schemas/Problem"]]],
        ]
    }

    /// The problem schema, with every known `type` explained.
    private static func documented(problem: [String: Any]) -> [String: Any] {
        var problem = problem
        var properties = problem["properties"] as? [String: Any] ?? [:]
        properties["type"] = [
            "type": "string", "format": "uri", "examples": [ProblemType.attemptNotActive.uri],
            "description": "Stable per kind of problem: the deployment's base (by default \(Problem.defaultTypeBase)) followed by one of these slugs (later versions may add "
                + "others; `http-<status>` stands for any other HTTP error):\n"
                + ProblemType.all.map { "- `\($0.slug)` (\($0.status.code)): \($0.meaning)" }.joined(separator: "\n"),
        ]
        properties["errors"] = (properties["errors"] as? [String: Any] ?? [:]).merging(["description": "The offending fields, for 400 and 422."]) { $1 }
        problem["properties"] = properties
        problem["description"] = "An RFC 9457 problem document."
        return problem
    }
}
