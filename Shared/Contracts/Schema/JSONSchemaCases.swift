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
        /// Exactly one of these fields is present (a quantity task's `target` or `targetFromDailyGoal`).
        public var exactlyOne: [String]
        /// Fields left out in this case. Here and in `allowed` a name may be a path into the object's fields:
        /// `rule.kind` is a field of the object field `rule`, `badges[].rule.kind` that of every element of `badges`.
        public var absent: [String]
        /// Fields whose value must be one of the listed values in this case.
        public var allowed: [String: [JSONSchema.Value]]
        /// Cases of every element of an array field, by the field's name (the tasks of a weekly challenge).
        public var each: [String: [Case]]
        /// Further cases inside this one (the visibility cases of a competition).
        public var nested: [Case]
        /// No object of this case is valid (a value only the server itself may use).
        public var refused: Bool

        public init(
            when field: String, is values: [String], byDefault: Bool = false, required: [String] = [], exactlyOne: [String] = [],
            absent: [String] = [], allowed: [String: [JSONSchema.Value]] = [:], each: [String: [Case]] = [:], nested: [Case] = [],
            refused: Bool = false
        ) {
            self.field = field
            self.values = values
            self.byDefault = byDefault
            self.required = required
            self.exactlyOne = exactlyOne
            self.absent = absent
            self.allowed = allowed
            self.each = each
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
            if !exactlyOne.isEmpty { body["oneOf"] = exactlyOne.map { ["required": [$0]] } }
            for name in absent { Self.place(false, at: name, in: &body) }
            for (name, values) in allowed.sorted(by: { $0.key < $1.key }) { Self.place(["enum": values.map(\.json)], at: name, in: &body) }
            for (name, cases) in each.sorted(by: { $0.key < $1.key }) { Self.place(Self.apply(cases, to: [:]), at: name + "[]", in: &body) }
            return Self.apply(nested, to: body)
        }

        /// Puts `schema` at `path` among `object`'s properties, merging with what an earlier path put on the way.
        private static func place(_ schema: Any, at path: String, in object: inout [String: Any]) {
            let steps = path.split(separator: ".", maxSplits: 1)
            let step = steps[0]
            let isArray = step.hasSuffix("[]")
            let name = String(isArray ? step.dropLast(2) : step)
            var properties = object["properties"] as? [String: Any] ?? [:]
            if steps.count == 1 && !isArray {
                properties[name] = schema
            } else {
                var field = properties[name] as? [String: Any] ?? [:]
                if isArray {
                    var element = field["items"] as? [String: Any] ?? [:]
                    if steps.count == 1 {
                        element.merge(schema as? [String: Any] ?? [:]) { _, new in new }
                    } else {
                        place(schema, at: String(steps[1]), in: &element)
                    }
                    field["items"] = element
                } else {
                    place(schema, at: String(steps[1]), in: &field)
                }
                properties[name] = field
            }
            object["properties"] = properties
        }
    }
}

/// A type whose fields depend on one another by cases of one field's value (a challenge's `kind`, a cadence's `kind`):
/// the cases are part of its derived schema, so the document states what the server's validation checks.
public protocol JSONSchemaCased {
    static var fieldCases: [JSONSchema.Case] { get }
}
