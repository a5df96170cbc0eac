import Foundation

/// The subset of JSON Schema (draft 2020-12) that Surge's event payloads and public API need.
public indirect enum JSONSchema: Equatable, Sendable {
    case string(format: String? = nil)
    case integer
    case number
    case boolean
    /// One of the listed strings. An `open` list may grow in later versions: a reader must accept values it does not
    /// know (an OpenAPI document says so with `anyOf: [{enum}, {type: string}]`).
    case enumeration([String], open: Bool = false)
    case array(JSONSchema)
    case map(JSONSchema)
    case object([Property])
    /// A type's schema under the type's qualified name (`ProgressService.AttemptView`): an OpenAPI document lists it
    /// once, among its components, and refers to it wherever it appears.
    case named(String, JSONSchema)
    /// A field's schema narrowed or explained by keywords: the limits the server enforces, a pattern, an example.
    case refined(JSONSchema, Refinement)
    /// An object whose fields depend on one another by cases of one field's value.
    case cased(JSONSchema, [Case])

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

    /// The shape alone, without names, refinements or open lists: what event payloads document and what the strict
    /// request decoder checks field names against.
    public var plain: JSONSchema {
        switch self {
        case .enumeration(let cases, _): .enumeration(cases)
        case .array(let items): .array(items.plain)
        case .map(let values): .map(values.plain)
        case .object(let properties): .object(properties.map { .init(name: $0.name, schema: $0.schema.plain, required: $0.required) })
        case .named(_, let schema), .refined(let schema, _), .cased(let schema, _): schema.plain
        case .string, .integer, .number, .boolean: self
        }
    }

    /// The schema as a JSON-compatible tree, named schemas inline.
    public var jsonObject: [String: Any] { rendered { _, schema in schema.jsonObject } }

    /// The schema as a JSON-compatible tree; `named` renders each named schema (a `$ref`, in an OpenAPI document).
    public func rendered(named: (String, JSONSchema) -> [String: Any]) -> [String: Any] {
        switch self {
        case .string(let format):
            var object: [String: Any] = ["type": "string"]
            if let format { object["format"] = format }
            return object
        case .integer: return ["type": "integer"]
        case .number: return ["type": "number"]
        case .boolean: return ["type": "boolean"]
        case .enumeration(let cases, let open):
            let closed: [String: Any] = ["type": "string", "enum": cases]
            return open ? ["anyOf": [closed, ["type": "string"]]] : closed
        case .array(let items): return ["type": "array", "items": items.rendered(named: named)]
        case .map(let values): return ["type": "object", "additionalProperties": values.rendered(named: named)]
        case .object(let properties) where properties.isEmpty:
            return ["type": "object"]
        case .object(let properties):
            var object: [String: Any] = [
                "type": "object",
                "properties": Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0.schema.rendered(named: named)) }),
            ]
            let required = properties.filter(\.required).map(\.name).sorted()
            if !required.isEmpty { object["required"] = required }
            return object
        case .named(let name, let schema): return named(name, schema)
        case .refined(let schema, let refinement): return refinement.applied(to: (refinement.schema ?? schema).rendered(named: named))
        case .cased(let schema, let cases): return Case.apply(cases, to: schema.rendered(named: named))
        }
    }

    /// A one-line human description used by the event catalogue.
    public var summary: String {
        switch self {
        case .string(let format): format.map { "string (\($0))" } ?? "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .enumeration(let cases, _): "one of " + cases.map { "`\($0)`" }.joined(separator: ", ")
        case .array(let items): "array of \(items.summary)"
        case .map(let values): "map of string to \(values.summary)"
        case .object: "object"
        case .named(_, let schema), .refined(let schema, _), .cased(let schema, _): schema.summary
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
public protocol JSONSchemaEnum: CaseIterable, RawRepresentable, Decodable where RawValue == String {
    /// Whether later versions may add cases (the default). A reader must accept a value it does not know in an
    /// extensible list; only a list fixed by nature (the weekdays) is closed.
    static var isExtensible: Bool { get }
}

extension JSONSchemaEnum {
    public static var isExtensible: Bool { true }
    public static var schemaCases: [String] { allCases.map(\.rawValue) }
    static var firstCase: Self { allCases.first! }
}

/// A type whose derived schema is refined field by field: the limits the server's validation enforces, patterns,
/// examples, or the list a string field's values come from. Keys are the JSON field names; one the type does not
/// decode makes the derivation fail.
public protocol JSONSchemaRefined {
    static var fieldRefinements: [String: JSONSchema.Refinement] { get }
}

extension JSONSchema {
    /// Derives the shape of a Decodable type by decoding it with a decoder that records every field it is asked for:
    /// plain, as events document it and the strict request decoder checks it.
    public static func derived<T: Decodable>(from type: T.Type) throws -> JSONSchema {
        try SchemaRecorder.describe(type).1.plain
    }

    /// The derived schema with every struct and enum named after its Swift type and every refinement applied: what
    /// an OpenAPI document is made of.
    public static func detailed<T: Decodable>(from type: T.Type) throws -> JSONSchema {
        try SchemaRecorder.describe(type).1
    }

    /// The named schema of an enum, as a field of that type gets it.
    public static func of<T: JSONSchemaEnum>(_ type: T.Type) -> JSONSchema {
        .named(String(reflecting: type), .enumeration(type.schemaCases, open: type.isExtensible))
    }

    /// The named schema of a type that states its own (a `LocalDate`), as a field of that type gets it.
    public static func of<T: JSONSchemaDescribing>(_ type: T.Type) -> JSONSchema {
        .named(String(reflecting: type), type.jsonSchema)
    }

    /// An instant: RFC 3339 as the server reads it (`Timestamp.parse`: upper-case `T` and `Z`, offsets up to ±18:00),
    /// in the years Surge supports (UTC 1970 to 2200, as `Timestamp.supportedRange`). The pattern says what the
    /// format alone does not: years 0001 to 9999, lower case, offsets to ±23:59 and a leap second (`23:59:60`) are
    /// RFC 3339 too.
    public static let instant = JSONSchema.string(format: "date-time").refined(.init(
        pattern: "^(19[7-9][0-9]|2[01][0-9]{2}|2200)-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?"
            + "(Z|[+-](0[0-9]|1[0-7]):[0-5][0-9]|[+-]18:00)$"))

    /// An integer from `range`, and the value an omitted one takes.
    public static func integer(in range: ClosedRange<Int>, default value: Int? = nil) -> JSONSchema {
        .refined(.integer, Refinement(minimum: Double(range.lowerBound), maximum: Double(range.upperBound), default: value.map { .number(Double($0)) }))
    }

    /// This schema with `refinement` applied.
    public func refined(_ refinement: Refinement) -> JSONSchema { .refined(self, refinement) }
}
