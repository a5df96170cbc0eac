import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("JSON Schema derived from Codable types", .tags(.unit), .kind(.unit))
struct JSONSchemaTests {
    enum Colour: String, Codable, JSONSchemaEnum { case red, green }

    struct Inner: Codable { var amount: Double }

    struct Day: Codable, JSONSchemaDescribing {
        var text: String
        static let jsonSchema = JSONSchema.string(format: "date")
        static let schemaPlaceholder = Day(text: "2026-01-01")
        init(text: String) { self.text = text }
        init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            guard text.count == 10 else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "bad day")) }
            self.text = text
        }
    }

    struct Sample: Codable {
        var id: UUID
        var name: String
        var nickname: String?
        var count: Int
        var ratio: Double
        var active: Bool
        var at: Date
        var colour: Colour
        var tags: [String]
        var inner: Inner
        var inners: [Inner]?
        var totals: [String: Int]
        var day: Day
    }

    @Test("fields, optionality, formats, enums, arrays, maps and nested objects")
    func derivesEverything() throws {
        let schema = try JSONSchema.derived(from: Sample.self)
        guard case .object(let properties) = schema else { Issue.record("not an object"); return }
        let byName = Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0) })
        #expect(byName["id"]?.schema == .string(format: "uuid"))
        #expect(byName["name"]?.required == true)
        #expect(byName["nickname"]?.required == false)
        #expect(byName["count"]?.schema == .integer)
        #expect(byName["ratio"]?.schema == .number)
        #expect(byName["active"]?.schema == .boolean)
        #expect(byName["at"]?.schema == .string(format: "date-time"))
        #expect(byName["colour"]?.schema == .enumeration(["red", "green"]))
        #expect(byName["tags"]?.schema == .array(.string()))
        #expect(byName["inner"]?.schema == .object([.init(name: "amount", schema: .number, required: true)]))
        #expect(byName["inners"]?.schema == .array(.object([.init(name: "amount", schema: .number, required: true)])))
        #expect(byName["inners"]?.required == false)
        #expect(byName["totals"]?.schema == .map(.integer))
        #expect(byName["day"]?.schema == .string(format: "date"))
        #expect(properties.count == 13)
    }

    @Test("the JSON form lists required fields sorted")
    func jsonForm() throws {
        let object = try JSONSchema.derived(from: Inner.self).jsonObject
        #expect(object["type"] as? String == "object")
        #expect(object["required"] as? [String] == ["amount"])
    }

    struct Shape: Codable, JSONSchemaCased {
        var kind: String
        var radius: Double?
        var width: Double?

        static let fieldCases: [JSONSchema.Case] = [
            .init(when: "kind", is: ["circle"], required: ["radius"], absent: ["width"]),
            .init(when: "kind", is: ["square", "box"], byDefault: true, absent: ["radius"], allowed: ["width": [1, 2]]),
        ]
    }

    @Test("cases of a field's value render as one if/then/else chain; the plain shape leaves them out")
    func cases() throws {
        let detailed = try JSONSchema.detailed(from: Shape.self)
        guard case .named(_, .cased(.object(let properties), let cases)) = detailed else {
            Issue.record("not a cased object: \(detailed)")
            return
        }
        #expect(properties.map(\.name).sorted() == ["kind", "radius", "width"] && cases.count == 2)
        let rendered = detailed.jsonObject
        let circle = try #require(rendered["if"] as? [String: Any])
        #expect((circle["properties"] as? [String: [String: String]])?["kind"]?["const"] == "circle")
        #expect(circle["required"] as? [String] == ["kind"])
        let then = try #require(rendered["then"] as? [String: Any])
        #expect(then["required"] as? [String] == ["radius"] && (then["properties"] as? [String: Bool])?["width"] == false)
        let otherwise = try #require(rendered["else"] as? [String: Any])
        let square = try #require(otherwise["if"] as? [String: Any])
        #expect((square["properties"] as? [String: [String: [String]]])?["kind"]?["enum"] == ["square", "box"])
        #expect(square["required"] == nil, "a case that is also the default applies when the field is absent")
        let width = ((otherwise["then"] as? [String: Any])?["properties"] as? [String: Any])?["width"] as? [String: [Int]]
        #expect(width?["enum"] == [1, 2])
        #expect(otherwise["else"] == nil)
        #expect(try JSONSchema.derived(from: Shape.self).jsonObject["if"] == nil)
    }

    @Test("a case may ask for exactly one of two fields, constrain fields inside object fields and array elements, and hold cases of each element")
    func casesReachInside() throws {
        let quantity = JSONSchema.Case(when: "kind", is: ["quantity"], exactlyOne: ["target", "fromGoal"])
        let weekly = JSONSchema.Case(
            when: "kind", is: ["weekly"], absent: ["rule.window"], allowed: ["badges[].rule.kind": ["streak"], "rule.kind": ["a", "b"]],
            each: ["tasks": [quantity]])
        let rendered = JSONSchema.cased(.object([]), [weekly]).jsonObject
        let then = try #require(rendered["then"] as? [String: Any])
        let properties = try #require(then["properties"] as? [String: Any])
        let rule = try #require((properties["rule"] as? [String: Any])?["properties"] as? [String: Any])
        #expect(rule["window"] as? Bool == false && (rule["kind"] as? [String: [String]])?["enum"] == ["a", "b"])
        let badge = try #require(((properties["badges"] as? [String: Any])?["items"] as? [String: Any])?["properties"] as? [String: Any])
        #expect((((badge["rule"] as? [String: Any])?["properties"] as? [String: Any])?["kind"] as? [String: [String]])?["enum"] == ["streak"])
        let task = try #require((properties["tasks"] as? [String: Any])?["items"] as? [String: Any])
        #expect(((task["if"] as? [String: Any])?["properties"] as? [String: [String: String]])?["kind"]?["const"] == "quantity")
        let oneOf = try #require((task["then"] as? [String: Any])?["oneOf"] as? [[String: [String]]])
        #expect(oneOf == [["required": ["target"]], ["required": ["fromGoal"]]])
    }
}
