import Foundation
import SurgeContracts

/// Checks a JSON value against the keywords the generated event schemas use (`type`, `format`, `enum`,
/// `properties`, `required`, `items`), as a consumer's validator would. A field the schema does not list is a
/// violation too, so an example cannot show what the documentation leaves out.
enum SchemaConformance {
    static func violations(of value: JSONValue, against schema: JSONValue, at path: String = "$") -> [String] {
        guard case .object(let keywords) = schema, case .string(let type)? = keywords["type"] else {
            return ["\(path): the schema names no type"]
        }
        switch (type, value) {
        case ("object", .object(let fields)):
            var properties: [String: JSONValue] = [:]
            if case .object(let listed)? = keywords["properties"] { properties = listed }
            var found: [String] = []
            if case .array(let required)? = keywords["required"] {
                for case .string(let name) in required where fields[name] == nil { found.append("\(path).\(name) is missing") }
            }
            for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
                if let property = properties[name] {
                    found += violations(of: field, against: property, at: "\(path).\(name)")
                } else {
                    found.append("\(path).\(name) is not in the schema")
                }
            }
            return found
        case ("array", .array(let items)):
            guard let itemSchema = keywords["items"] else { return ["\(path): the schema has no items"] }
            return items.enumerated().flatMap { index, item in violations(of: item, against: itemSchema, at: "\(path)[\(index)]") }
        case ("string", .string(let text)):
            var found: [String] = []
            if case .array(let cases)? = keywords["enum"], !cases.contains(.string(text)) {
                found.append("\(path): \(text) is not one of the listed values")
            }
            if case .string(let format)? = keywords["format"], !conforms(text, to: format) {
                found.append("\(path): \(text) is not a valid \(format)")
            }
            return found
        case ("integer", .number(let number)) where number.rounded() == number:
            return []
        case ("number", .number), ("boolean", .bool):
            return []
        default:
            return ["\(path): \(value) is not of type \(type)"]
        }
    }

    /// The formats the event schemas use, read as Surge writes them (UUIDs lower-case).
    static func conforms(_ text: String, to format: String) -> Bool {
        switch format {
        case "uuid": UUID(uuidString: text) != nil && text == text.lowercased()
        case "date-time": Timestamp.parse(text) != nil
        case "date": LocalDate(text) != nil
        default: false
        }
    }
}
