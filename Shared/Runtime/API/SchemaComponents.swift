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
        case .cased(let inner, _): try collect(inner, use)
        case .array(let items): try collect(items, use)
        case .map(let values): try collect(values, use)
        case .object(let properties): for property in properties { try collect(property.schema, use) }
        case .string, .integer, .number, .boolean, .enumeration: break
        }
    }

    /// Gives every collected schema its name; `preferred` names some outright.
    mutating func assignNames(preferred: [String: String] = [:]) throws {
        names = try Self.shortNames(for: Set(schemas.keys).subtracting(preferred.keys)).merging(preferred) { $1 }
        let all = names.keys.map { [names[$0]!] + (hasRequestVariant($0) || hasKnownList($0) ? [requestName(of: $0)] : []) }.joined()
        let taken = Dictionary(grouping: all) { $0 }.filter { $0.value.count > 1 }
        guard taken.isEmpty else { throw Mismatch(description: "schema names used twice: \(taken.keys.sorted())") }
    }

    func name(of id: String) -> String { names[id] ?? id }

    /// Whether a schema that requests and responses both use gets a second, request-only form: a list that may grow
    /// (responses must accept values they do not know; requests take only the listed ones), or an object (a request
    /// refuses fields it does not list; a response may gain fields).
    func hasRequestVariant(_ id: String) -> Bool {
        guard uses[id] == [.request, .response] else { return false }
        switch schemas[id] {
        case .enumeration(_, true): return true
        case .object(let properties), .cased(.object(let properties), _): return !properties.isEmpty
        default: return false
        }
    }

    /// Whether a list that may grow is in responses: its values of this version are then a schema of their own
    /// (`KnownAccountKind`), which the open list refers to, so that no generated client makes an anonymous type of them.
    func hasKnownList(_ id: String) -> Bool {
        guard case .enumeration(_, true) = schemas[id] else { return false }
        return uses[id, default: []].contains(.response)
    }

    /// The name of the request form: `KnownChallengeKind` for a list (the values this version knows, which the open
    /// `ChallengeKind` of responses refers to), `CadenceInput` for an object.
    func requestName(of id: String) -> String {
        if case .enumeration = schemas[id] { return "Known" + name(of: id) }
        return name(of: id) + "Input"
    }

    /// `schema` as JSON, named schemas as references: in a request, to the request form where there is one.
    func reference(_ schema: JSONSchema, in use: Use) -> [String: Any] {
        let rendered = schema.rendered { id, _ in
            ["$ref": "#/components/schemas/" + (use == .request && hasRequestVariant(id) ? requestName(of: id) : name(of: id))]
        }
        return use == .request ? Self.refusingNUL(rendered) : rendered
    }

    /// `object` (a rendered request schema) with every free text, one with no pattern, format or list of its own,
    /// stating that NUL (U+0000) is refused, as the server refuses it in any request text (400 `invalid-characters`).
    static func refusingNUL(_ object: [String: Any]) -> [String: Any] {
        var object = object
        if object["type"] as? String == "string", object["enum"] == nil, object["format"] == nil, object["pattern"] == nil {
            object["pattern"] = JSONSchema.Refinement.textPattern()
        }
        if let properties = object["properties"] as? [String: [String: Any]] { object["properties"] = properties.mapValues(refusingNUL) }
        for key in ["items", "additionalProperties"] {
            if let nested = object[key] as? [String: Any] { object[key] = refusingNUL(nested) }
        }
        if let variants = object["anyOf"] as? [[String: Any]] { object["anyOf"] = variants.map(refusingNUL) }
        return object
    }

    /// The `components/schemas` of the document. Objects requests use refuse fields they do not list, as the server's
    /// strict decoder does; objects responses use stay open to fields later versions add. Lists requests use are closed
    /// (the server refuses values it does not know); lists responses use stay open when they may grow. A schema both
    /// use, where the two differ, is listed twice: the response form under its name, the request form beside it.
    func rendered() -> [String: Any] {
        var rendered: [String: Any] = [:]
        for (id, schema) in schemas {
            let use = uses[id] ?? []
            if use == [.request] {
                rendered[name(of: id)] = requestForm(schema)
                continue
            }
            if hasRequestVariant(id) { rendered[requestName(of: id)] = requestForm(schema) }
            // The cases state what requests must satisfy; a response form stays open as a response's fields do.
            var object = reference(schema.withoutCases, in: .response)
            if hasKnownList(id) {
                rendered[requestName(of: id)] = requestForm(schema)
                object = [
                    "anyOf": [["$ref": "#/components/schemas/" + requestName(of: id)], ["type": "string"]],
                    "description": "An open list: later versions may add values to \(requestName(of: id)), so a client must accept one "
                        + "it does not know." + (hasRequestVariant(id) ? " Requests take only the values of \(requestName(of: id))." : ""),
                ]
            }
            rendered[name(of: id)] = object
        }
        return rendered
    }

    /// The form requests use: lists closed, objects closed to unlisted fields, named parts in their request forms.
    private func requestForm(_ schema: JSONSchema) -> [String: Any] {
        switch schema {
        case .enumeration(let cases, _):
            return JSONSchema.enumeration(cases).rendered { _, _ in [:] }
        case .object(let properties) where !properties.isEmpty, .cased(.object(let properties), _) where !properties.isEmpty:
            var object = reference(schema, in: .request)
            object["additionalProperties"] = false
            return object
        default:
            return reference(schema, in: .request)
        }
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

extension JSONSchema {
    fileprivate var withoutCases: JSONSchema {
        if case .cased(let inner, _) = self { inner } else { self }
    }
}
