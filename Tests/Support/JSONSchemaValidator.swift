import Foundation
import SurgeContracts

/// Checks a JSON value against a schema of a document (an OpenAPI document's components), as a generated client's or a
/// fuzzer's validator would, for the keywords Surge's documents use to say what is valid: `$ref`, boolean schemas,
/// `type`, `enum`, `const`, `properties`, `required`, `additionalProperties`, `items`, `minItems`, `maxItems`,
/// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`, `maxLength`, `pattern`, `if`/`then`/`else`,
/// `allOf`, `anyOf`, `oneOf` and `not`. `format` is not checked: what this refuses, any JSON Schema validator refuses.
public struct JSONSchemaValidator: Sendable {
    public let document: JSONValue

    public init(document: JSONValue) {
        self.document = document
    }

    public init(document data: Data) throws {
        self.init(document: try JSONDecoder().decode(JSONValue.self, from: data))
    }

    /// The schema at a JSON pointer of the document (`#/components/schemas/ChallengeDraft`).
    public func schema(at pointer: String) -> JSONValue? {
        var node = document
        for step in pointer.dropFirst(2).split(separator: "/") {
            let key = step.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            guard case .object(let fields) = node, let next = fields[key] else { return nil }
            node = next
        }
        return node
    }

    /// Every keyword `value` breaks, with where; empty when it is valid.
    public func violations(of value: JSONValue, against schema: JSONValue, at path: String = "$") -> [String] {
        switch schema {
        case .bool(true):
            return []
        case .bool(false):
            return ["\(path): no value is allowed here"]
        case .object(let keywords):
            return violations(of: value, against: keywords, at: path)
        default:
            return ["\(path): the schema is not a schema"]
        }
    }

    private func violations(of value: JSONValue, against keywords: [String: JSONValue], at path: String) -> [String] {
        var found: [String] = []
        if case .string(let reference)? = keywords["$ref"] {
            if let target = schema(at: reference) {
                found += violations(of: value, against: target, at: path)
            } else {
                found.append("\(path): \(reference) does not resolve")
            }
        }
        if case .string(let type)? = keywords["type"], !Self.isOfType(value, type) { found.append("\(path): not of type \(type)") }
        if case .array(let values)? = keywords["enum"], !values.contains(value) { found.append("\(path): \(value) is not one of \(values)") }
        if let constant = keywords["const"], constant != value { found.append("\(path): \(value) is not \(constant)") }
        switch value {
        case .object(let fields):
            found += objectViolations(fields, keywords, at: path)
        case .array(let items):
            if let schema = keywords["items"] {
                for (index, item) in items.enumerated() { found += violations(of: item, against: schema, at: "\(path)[\(index)]") }
            }
            if case .number(let least)? = keywords["minItems"], Double(items.count) < least { found.append("\(path): fewer than \(least) items") }
            if case .number(let most)? = keywords["maxItems"], Double(items.count) > most { found.append("\(path): more than \(most) items") }
        case .string(let text):
            let length = Double(text.unicodeScalars.count)
            if case .number(let least)? = keywords["minLength"], length < least { found.append("\(path): shorter than \(least)") }
            if case .number(let most)? = keywords["maxLength"], length > most { found.append("\(path): longer than \(most)") }
            if case .string(let pattern)? = keywords["pattern"] {
                let matches = (try? NSRegularExpression(pattern: pattern)).map {
                    $0.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                }
                if matches != true { found.append("\(path): \(text) does not match \(pattern)") }
            }
        case .number(let number):
            if case .number(let bound)? = keywords["minimum"], number < bound { found.append("\(path): less than \(bound)") }
            if case .number(let bound)? = keywords["maximum"], number > bound { found.append("\(path): more than \(bound)") }
            if case .number(let bound)? = keywords["exclusiveMinimum"], number <= bound { found.append("\(path): not more than \(bound)") }
            if case .number(let bound)? = keywords["exclusiveMaximum"], number >= bound { found.append("\(path): not less than \(bound)") }
        default:
            break
        }
        if let condition = keywords["if"] {
            let branch = violations(of: value, against: condition, at: path).isEmpty ? keywords["then"] : keywords["else"]
            if let branch { found += violations(of: value, against: branch, at: path) }
        }
        if case .array(let schemas)? = keywords["allOf"] {
            for schema in schemas { found += violations(of: value, against: schema, at: path) }
        }
        if case .array(let schemas)? = keywords["anyOf"], !schemas.contains(where: { violations(of: value, against: $0, at: path).isEmpty }) {
            found.append("\(path): matches none of anyOf")
        }
        if case .array(let schemas)? = keywords["oneOf"] {
            let matching = schemas.filter { violations(of: value, against: $0, at: path).isEmpty }.count
            if matching != 1 { found.append("\(path): matches \(matching) of oneOf, not exactly one") }
        }
        if let negated = keywords["not"], violations(of: value, against: negated, at: path).isEmpty {
            found.append("\(path): matches what `not` refuses")
        }
        return found
    }

    private func objectViolations(_ fields: [String: JSONValue], _ keywords: [String: JSONValue], at path: String) -> [String] {
        var found: [String] = []
        if case .array(let required)? = keywords["required"] {
            for case .string(let name) in required where fields[name] == nil { found.append("\(path).\(name) is required") }
        }
        var properties: [String: JSONValue] = [:]
        if case .object(let listed)? = keywords["properties"] { properties = listed }
        for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
            if let schema = properties[name] {
                found += violations(of: field, against: schema, at: "\(path).\(name)")
            } else if let additional = keywords["additionalProperties"] {
                found += violations(of: field, against: additional, at: "\(path).\(name)")
            }
        }
        return found
    }

    private static func isOfType(_ value: JSONValue, _ type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null), ("number", .number): true
        case ("integer", .number(let number)): number.rounded() == number
        default: false
        }
    }
}
