import Foundation
import SurgeContracts

/// The named schemas of an OpenAPI document: every struct and enum the operations' types are made of, listed once
/// under a short name and referred to by `$ref` everywhere else, so one Swift type is one generated type.
struct SchemaComponents {
    enum Use: Hashable { case request, response }

    struct Mismatch: Error, CustomStringConvertible {
        var description: String
    }

    private var schemas: [String: JSONSchema] = [:]
    private var uses: [String: Set<Use>] = [:]
    private var names: [String: String] = [:]

    /// Records the named schemas inside `schema` and how they are used.
    mutating func collect(_ schema: JSONSchema, _ use: Use) throws {
        switch schema {
        case .named(let id, let inner):
            if let known = schemas[id], known != inner { throw Mismatch(description: "\(id) has two different schemas") }
            schemas[id] = inner
            if uses[id, default: []].insert(use).inserted { try collect(inner, use) }
        case .refined(let inner, let refinement): try collect(refinement.schema ?? inner, use)
        case .array(let items): try collect(items, use)
        case .map(let values): try collect(values, use)
        case .object(let properties): for property in properties { try collect(property.schema, use) }
        case .string, .integer, .number, .boolean, .enumeration: break
        }
    }

    /// Gives every collected schema its name; `preferred` names some outright.
    mutating func assignNames(preferred: [String: String] = [:]) throws {
        names = try Self.shortNames(for: Set(schemas.keys).subtracting(preferred.keys)).merging(preferred) { $1 }
        let taken = Dictionary(grouping: names.keys) { names[$0]! }.filter { $0.value.count > 1 }
        guard taken.isEmpty else { throw Mismatch(description: "schema names used twice: \(taken.keys.sorted())") }
    }

    func name(of id: String) -> String { names[id] ?? id }

    /// `schema` as JSON, named schemas as references.
    func reference(_ schema: JSONSchema) -> [String: Any] {
        schema.rendered { id, _ in ["$ref": "#/components/schemas/" + name(of: id)] }
    }

    /// The `components/schemas` of the document. Objects only requests use refuse fields they do not list, as the
    /// server's strict decoder does; objects responses use stay open to fields later versions add. Lists only requests
    /// use are closed (the server refuses values it does not know); lists responses use stay open when they may grow.
    func rendered() -> [String: Any] {
        var rendered: [String: Any] = [:]
        for (id, schema) in schemas {
            let use = uses[id] ?? []
            var schema = schema
            if use == [.request], case .enumeration(let cases, true) = schema { schema = .enumeration(cases) }
            var object = reference(schema)
            switch schema {
            case .object(let properties) where !properties.isEmpty && use == [.request]:
                object["additionalProperties"] = false
            case .object(let properties) where !properties.isEmpty && use.contains(.request):
                object["description"] = "Sent in requests too: there, a field not listed here is refused (422 `validation`)."
            case .enumeration(_, true):
                object["description"] = "An open list: later versions may add values, so a client must accept one it does not know."
            default:
                break
            }
            rendered[name(of: id)] = object
        }
        return rendered
    }

    // MARK: Names

    /// Short, unique names for qualified Swift type names: the type's own name (`AttemptView`), generic arguments
    /// first (`Page<PublicProfile>` is `PublicProfilePage`), enclosing types (and at last the module) prefixed only
    /// where two names would otherwise clash (`CheckInsControllerTaskRequest`).
    static func shortNames(for ids: Set<String>) throws -> [String: String] {
        var depth = Dictionary(uniqueKeysWithValues: ids.map { ($0, 1) })
        while true {
            let byName = Dictionary(grouping: ids) { shortName($0, depth: depth[$0]!) }
            let clashing = byName.values.filter { $0.count > 1 }.joined()
            let deepenable = clashing.filter { depth[$0]! < path($0).count }
            if clashing.isEmpty { return Dictionary(uniqueKeysWithValues: byName.map { ($0.value[0], $0.key) }) }
            guard !deepenable.isEmpty else { throw Mismatch(description: "cannot name \(clashing.sorted()) apart") }
            for id in deepenable { depth[id]! += 1 }
        }
    }

    static func shortName(_ id: String, depth: Int) -> String {
        path(id).suffix(depth).map { component in
            guard let open = component.firstIndex(of: "<"), component.hasSuffix(">") else { return component }
            let arguments = split(String(component[component.index(after: open)..<component.index(before: component.endIndex)]), at: ",")
            return arguments.map { shortName($0.trimmingCharacters(in: .whitespaces), depth: 1) }.joined() + component[..<open]
        }.joined().filter { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    /// `Module.Outer.Inner<Argument>` as its components, without the unnamed contexts of private types.
    static func path(_ id: String) -> [String] {
        split(id, at: ".").filter { !$0.hasPrefix("(") }
    }

    /// Splits at `separator` outside angle brackets and parentheses.
    private static func split(_ text: String, at separator: Character) -> [String] {
        var parts: [String] = []
        var current = ""
        var nesting = 0
        for character in text {
            if character == "<" || character == "(" { nesting += 1 }
            if character == ">" || character == ")" { nesting -= 1 }
            if character == separator && nesting == 0 {
                parts.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        return parts
    }
}
