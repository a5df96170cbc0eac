import Foundation
import HTTPTypes
import SurgeContracts

/// Writes the OpenAPI 3.1 document of the public API from the services' operation declarations. Request and
/// response schemas are derived from the Codable types the services actually decode and encode.
public enum OpenAPIGenerator {
    public static func document(_ operations: [APIOperation], version: String = "1.0.0") throws -> Data {
        var paths: [String: [String: Any]] = [:]
        for operation in operations.sorted(by: { ($0.path, $0.method.rawValue) < ($1.path, $1.method.rawValue) }) {
            paths[operation.path, default: [:]][operation.method.rawValue.lowercased()] = try describe(operation)
        }
        let document: [String: Any] = [
            "openapi": "3.1.0",
            "info": [
                "title": "Surge public API",
                "version": version,
                "description": """
                    The JSON API of Surge, served by the gateway. Authenticated operations need `Authorization: Bearer \
                    <access token>`. Errors are RFC 9457 problem documents with a stable `type`. Lists are paginated \
                    with `limit` and an opaque `cursor`. POSTs that create something accept an `Idempotency-Key` \
                    header. Every response carries `X-Request-ID`; W3C `traceparent` is honoured.
                    """,
            ],
            "servers": [["url": "/"]],
            "paths": paths,
            "components": [
                "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT"]],
                "schemas": ["Problem": try JSONSchema.derived(from: Problem.Body.self).jsonObject],
                "responses": [
                    "Problem": [
                        "description": "An RFC 9457 problem document.",
                        "content": ["application/problem+json": ["schema": ["$ref": "#/components/schemas/Problem"]]],
                    ]
                ],
            ],
        ]
        var data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        data.append(contentsOf: "\n".utf8)
        return data
    }

    private static func describe(_ operation: APIOperation) throws -> [String: Any] {
        var object: [String: Any] = [
            "operationId": operation.id,
            "summary": operation.summary,
            "tags": [operation.service.rawValue],
            "x-surge-service": operation.service.rawValue,
            "x-surge-throttle": operation.throttle.rawValue,
            "security": operation.access == .authenticated ? [["bearer": [String]()]] : [[String: [String]]](),
        ]
        var parameters: [[String: Any]] = operation.pathParameters.map { name in
            [
                "name": name, "in": "path", "required": true,
                "schema": (name.hasSuffix("ID") ? JSONSchema.string(format: "uuid") : .string()).jsonObject,
            ]
        }
        parameters += operation.query.map { parameter in
            ["name": parameter.name, "in": "query", "required": parameter.required, "description": parameter.description, "schema": parameter.schema.jsonObject]
        }
        if operation.idempotent {
            parameters.append([
                "name": "Idempotency-Key", "in": "header", "required": false,
                "description": "A client-chosen key (up to 255 characters); a retry with the same key and body gets the first response again.",
                "schema": ["type": "string", "maxLength": 255],
            ])
        }
        if !parameters.isEmpty { object["parameters"] = parameters }
        if let requestType = operation.requestType {
            object["requestBody"] = [
                "required": true,
                "content": ["application/json": ["schema": try JSONSchema.derived(from: requestType).jsonObject]],
            ]
        } else if operation.requestMediaTypes != ["application/json"] {
            object["requestBody"] = [
                "required": true,
                "content": Dictionary(uniqueKeysWithValues: operation.requestMediaTypes.map { ($0, ["schema": ["type": "string", "format": "binary"]]) }),
            ]
        }
        var responses: [String: Any] = [:]
        var success: [String: Any] = ["description": operation.status.reasonPhrase]
        if let responseType = operation.responseType {
            success["content"] = ["application/json": ["schema": try JSONSchema.derived(from: responseType).jsonObject]]
        }
        responses[String(operation.status.code)] = success
        var errors = Set(operation.errors.map(\.code))
        errors.formUnion([429, 503])
        if operation.requestType != nil || !operation.query.isEmpty { errors.formUnion([400, 422]) }
        if operation.access == .authenticated { errors.insert(401) }
        if !operation.pathParameters.isEmpty { errors.insert(404) }
        for code in errors { responses[String(code)] = ["$ref": "#/components/responses/Problem"] }
        object["responses"] = responses
        return object
    }
}
