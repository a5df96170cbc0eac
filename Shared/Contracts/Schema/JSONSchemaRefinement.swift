import Foundation

extension JSONSchema {
    /// Keywords that narrow or explain one field's schema. On an array, `minItems` and `maxItems` bound the array and
    /// the limits, length and pattern apply to its items.
    public struct Refinement: Equatable, Sendable {
        public var minimum: Double?
        /// Values must be greater than this.
        public var exclusiveMinimum: Double?
        public var maximum: Double?
        public var minLength: Int?
        public var maxLength: Int?
        /// An ECMA-262 regular expression the whole value must match (anchor it).
        public var pattern: String?
        public var minItems: Int?
        public var maxItems: Int?
        public var uniqueItems: Bool?
        public var description: String?
        /// The value the server uses when the field is omitted.
        public var `default`: Value?
        public var example: Value?
        /// The field's schema instead of the derived one: the named list a string field's values come from, say.
        public var schema: JSONSchema?

        public init(
            minimum: Double? = nil, exclusiveMinimum: Double? = nil, maximum: Double? = nil, minLength: Int? = nil, maxLength: Int? = nil,
            pattern: String? = nil, minItems: Int? = nil, maxItems: Int? = nil, uniqueItems: Bool? = nil, description: String? = nil, default: Value? = nil,
            example: Value? = nil, schema: JSONSchema? = nil
        ) {
            self.minimum = minimum
            self.exclusiveMinimum = exclusiveMinimum
            self.maximum = maximum
            self.minLength = minLength
            self.maxLength = maxLength
            self.pattern = pattern
            self.minItems = minItems
            self.maxItems = maxItems
            self.uniqueItems = uniqueItems
            self.description = description
            self.default = `default`
            self.example = example
            self.schema = schema
        }

        /// An integer (or number) from `range`.
        public static func range(_ range: ClosedRange<Int>, default value: Int? = nil) -> Refinement {
            Refinement(minimum: Double(range.lowerBound), maximum: Double(range.upperBound), default: value.map { .number(Double($0)) })
        }

        /// Text of at most `maxLength` characters, with at least one that is not white space when `nonBlank`, and no
        /// C0 or C1 control character when `controls` is false (NUL is refused in any text).
        public static func text(maxLength: Int, nonBlank: Bool = false, controls: Bool = true, example: Value? = nil) -> Refinement {
            Refinement(maxLength: maxLength, pattern: textPattern(nonBlank: nonBlank, controls: controls), example: example)
        }

        /// The pattern of text: any characters but NUL (U+0000, which the server refuses in any request text), or none
        /// of the C0 and C1 controls (U+0000-U+001F, U+007F-U+009F) when `controls` is false; with `nonBlank`, at least
        /// one that is not white space. Anchored, so that it states the whole rule.
        public static func textPattern(nonBlank: Bool = false, controls: Bool = true) -> String {
            "^" + (nonBlank ? "(?=[\\s\\S]*\\S)" : "") + (controls ? "[^\\u0000]" : "[^\\u0000-\\u001F\\u007F-\\u009F]") + "*$"
        }

        /// An IANA time zone name. Which names exist is the tz database's call, not a pattern's: the document says so
        /// with a format of its own, `iana-time-zone` (a generator of valid data needs a list of names), and the
        /// pattern states the shape every accepted name has.
        public static let ianaTimeZone = Refinement(
            pattern: "^(UTC|[A-Z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){1,2})$",
            description: "An IANA time zone name such as Europe/Rome (format `iana-time-zone`: a name of the tz database).",
            example: "Europe/Rome", schema: .string(format: "iana-time-zone"))

        /// A string whose values come from `type`'s list.
        public static func values<T: JSONSchemaEnum>(_ type: T.Type) -> Refinement { Refinement(schema: .of(type)) }

        /// The keywords as JSON members, added to `object` (a rendered schema).
        func applied(to object: [String: Any]) -> [String: Any] {
            var object = object
            var own: [String: Any?] = ["minItems": minItems, "maxItems": maxItems, "uniqueItems": uniqueItems, "default": self.default?.json, "description": description]
            own["examples"] = example.map { [$0.json] }
            let value: [String: Any?] = [
                "minimum": minimum.map(Self.number), "exclusiveMinimum": exclusiveMinimum.map(Self.number), "maximum": maximum.map(Self.number),
                "minLength": minLength, "maxLength": maxLength, "pattern": pattern,
            ]
            if object["type"] as? String == "array", var items = object["items"] as? [String: Any] {
                for case (let key, let member?) in value { items[key] = member }
                object["items"] = items
            } else {
                for case (let key, let member?) in value { object[key] = member }
            }
            for case (let key, let member?) in own { object[key] = member }
            return object
        }

        static func number(_ value: Double) -> Any {
            value == value.rounded() && abs(value) < 1e15 ? Int(value) as Any : value
        }
    }

    /// A JSON scalar: a default or an example.
    public enum Value: Equatable, Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
        ExpressibleByBooleanLiteral
    {
        case string(String)
        case number(Double)
        case boolean(Bool)

        public init(stringLiteral value: String) { self = .string(value) }
        public init(integerLiteral value: Int) { self = .number(Double(value)) }
        public init(floatLiteral value: Double) { self = .number(value) }
        public init(booleanLiteral value: Bool) { self = .boolean(value) }

        var json: Any {
            switch self {
            case .string(let text): text
            case .number(let number): Refinement.number(number)
            case .boolean(let flag): flag
            }
        }
    }
}
