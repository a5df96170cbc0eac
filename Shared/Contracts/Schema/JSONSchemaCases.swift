import Foundation

extension JSONSchema {
    /// What an object asks of its other fields in one case of a field's value: the fields a chore needs, the ones a
    /// checkbox task must leave out. Rendered as JSON Schema's `if`/`then`/`else`, so a generator of valid data (and a
    /// reader) sees the rules the server's validation applies across fields.
    public struct Case: Equatable, Sendable {
        /// The field whose value selects the case, and the values that select it.
        public var field: String
        public var values: [String]
        /// Whether the case also applies when the field is absent (its default is one of `values`).
        public var byDefault: Bool
        public var required: [String]
        public var absent: [String]
        /// Fields whose value must be one of the listed values in this case.
        public var allowed: [String: [JSONSchema.Value]]
        /// Further cases inside this one (the visibility cases of a competition).
        public var nested: [Case]
        /// No object of this case is valid (a value only the server itself may use).
        public var refused: Bool

        public init(
            when field: String, is values: [String], byDefault: Bool = false, required: [String] = [], absent: [String] = [],
            allowed: [String: [JSONSchema.Value]] = [:], nested: [Case] = [], refused: Bool = false
        ) {
            self.field = field
            self.values = values
            self.byDefault = byDefault
            self.required = required
            self.absent = absent
            self.allowed = allowed
            self.nested = nested
            self.refused = refused
        }

        /// Cases of a field's value that exclude one another, as one `if`/`then`/`else` chain merged into `object`.
        static func apply(_ cases: [Case], to object: [String: Any]) -> [String: Any] {
            guard let first = cases.first else { return object }
            var object = object
            object["if"] = first.condition
            object["then"] = first.refused ? false : first.body
            let rest = apply(Array(cases.dropFirst()), to: [:])
            if !rest.isEmpty { object["else"] = rest }
            return object
        }

        private var condition: [String: Any] {
            let value: [String: Any] = values.count == 1 ? ["const": values[0]] : ["enum": values]
            var condition: [String: Any] = ["properties": [field: value]]
            if !byDefault { condition["required"] = [field] }
            return condition
        }

        private var body: [String: Any] {
            var body: [String: Any] = [:]
            if !required.isEmpty { body["required"] = required }
            var properties: [String: Any] = [:]
            for name in absent { properties[name] = false }
            for (name, values) in allowed { properties[name] = ["enum": values.map(\.json)] }
            if !properties.isEmpty { body["properties"] = properties }
            return Self.apply(nested, to: body)
        }
    }
}

/// A type whose fields depend on one another by cases of one field's value (a challenge's `kind`, a cadence's `kind`):
/// the cases are part of its derived schema, so the document states what the server's validation checks.
public protocol JSONSchemaCased {
    static var fieldCases: [JSONSchema.Case] { get }
}
