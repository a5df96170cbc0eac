import Foundation

/// The subset of JSON Schema (draft 2020-12) that Surge's event payloads need.
public indirect enum JSONSchema: Equatable, Sendable {
    case string(format: String? = nil)
    case integer
    case number
    case boolean
    case enumeration([String])
    case array(JSONSchema)
    case map(JSONSchema)
    case object([Property])

    public struct Property: Equatable, Sendable {
        public var name: String
        public var schema: JSONSchema
        public var required: Bool

        public init(name: String, schema: JSONSchema, required: Bool) {
            self.name = name
            self.schema = schema
            self.required = required
        }
    }

    /// The schema as a JSON-compatible tree.
    public var jsonObject: [String: Any] {
        switch self {
        case .string(let format):
            var object: [String: Any] = ["type": "string"]
            if let format { object["format"] = format }
            return object
        case .integer: return ["type": "integer"]
        case .number: return ["type": "number"]
        case .boolean: return ["type": "boolean"]
        case .enumeration(let cases): return ["type": "string", "enum": cases]
        case .array(let items): return ["type": "array", "items": items.jsonObject]
        case .map(let values): return ["type": "object", "additionalProperties": values.jsonObject]
        case .object(let properties):
            var object: [String: Any] = [
                "type": "object",
                "properties": Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0.schema.jsonObject) }),
            ]
            let required = properties.filter(\.required).map(\.name).sorted()
            if !required.isEmpty { object["required"] = required }
            return object
        }
    }

    /// A one-line human description used by the event catalogue.
    public var summary: String {
        switch self {
        case .string(let format): format.map { "string (\($0))" } ?? "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .enumeration(let cases): "one of " + cases.map { "`\($0)`" }.joined(separator: ", ")
        case .array(let items): "array of \(items.summary)"
        case .map(let values): "map of string to \(values.summary)"
        case .object: "object"
        }
    }
}

/// A type that states its own schema instead of having it derived, for values with a validating `init(from:)`.
public protocol JSONSchemaDescribing {
    static var jsonSchema: JSONSchema { get }
    /// Any valid value, handed to the enclosing type while its schema is derived.
    static var schemaPlaceholder: Self { get }
}

/// A string-backed enum; the derived schema lists its cases.
public protocol JSONSchemaEnum: CaseIterable, RawRepresentable, Decodable where RawValue == String {}

extension JSONSchemaEnum {
    static var schemaCases: [String] { allCases.map(\.rawValue) }
    static var firstCase: Self { allCases.first! }
}

extension JSONSchema {
    /// Derives the schema of a Decodable type by decoding it with a decoder that records every field it is asked for.
    public static func derived<T: Decodable>(from type: T.Type) throws -> JSONSchema {
        try SchemaRecorder.describe(type).1
    }
}
