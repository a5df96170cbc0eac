import Foundation
import SurgeAPICatalogue
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

/// What a client generated from docs/openapi.json depends on: named schemas referred to everywhere, open lists where
/// values may be added, the wire details (headers, limits, media types) in the schema, and every problem type the code
/// can answer documented.
@Suite("OpenAPI document for generated clients", .tags(.unit), .kind(.unit))
struct OpenAPIDocumentTests {
    static let root = PublicAPITests.root
    let document: [String: Any]
    let schemas: [String: [String: Any]]
    let operations: [(id: String, method: String, path: String, operation: [String: Any])]

    init() throws {
        let data = try OpenAPIGenerator.document(PublicAPICatalogue.operations)
        document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let components = try #require(document["components"] as? [String: Any])
        schemas = try #require(components["schemas"] as? [String: [String: Any]])
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        operations = paths.flatMap { path, methods in
            methods.map { method, operation in (operation["operationId"] as? String ?? "?", method, path, operation) }
        }.sorted { $0.id < $1.id }
    }

    // MARK: Named schemas

    /// Every object with properties in `node`, by where it is, with its sorted property names.
    static func objectShapes(in node: Any, at path: String = "") -> [(path: String, shape: [String])] {
        switch node {
        case let object as [String: Any]:
            var found: [(String, [String])] = []
            if let properties = object["properties"] as? [String: Any], !properties.isEmpty { found.append((path, properties.keys.sorted())) }
            return found + object.sorted { $0.key < $1.key }.flatMap { objectShapes(in: $0.value, at: path + "/" + $0.key) }
        case let array as [Any]:
            return array.enumerated().flatMap { objectShapes(in: $0.element, at: "\(path)[\($0.offset)]") }
        default:
            return []
        }
    }

    @Test("each struct is one named schema, referred to by $ref: no named shape is repeated inline, and inline objects stay rare")
    func namedSchemasAreNotInlined() throws {
        let named = Dictionary(
            schemas.compactMap { name, schema in (schema["properties"] as? [String: Any]).map { ($0.keys.sorted(), name) } }
        ) { first, _ in first }
        // The `if`/`then`/`else` cases of a named object constrain its own fields: they are not shapes of their own.
        let inline = Self.objectShapes(in: document).filter { path, _ in
            let components = path.split(separator: "/")
            return !(path.hasPrefix("/components/schemas/") && (components.count == 3 || ["if", "then", "else"].contains(components[3])))
        }
        for (path, shape) in inline {
            #expect(named[shape] == nil, "\(path) repeats the shape of \(named[shape] ?? "") inline: refer to it with $ref")
        }
        #expect(Set(inline.map(\.shape)).count <= 2, "inline object shapes: \(inline.map(\.path))")
        #expect(schemas.count >= 80, "only \(schemas.count) named schemas")
        for name in ["AttemptView", "AttemptStatus", "Account", "Tokens", "ChallengeDefinition", "Problem", "PublicProfile"] {
            #expect(schemas[name] != nil, "no schema named \(name)")
        }
    }

    @Test("every $ref resolves, and every named schema is used")
    func referencesResolve() throws {
        func refs(in node: Any) -> [String] {
            switch node {
            case let object as [String: Any]:
                let own = (object["$ref"] as? String).map { [$0] } ?? []
                return own + object.values.flatMap(refs)
            case let array as [Any]: return array.flatMap(refs)
            default: return []
            }
        }
        let prefix = "#/components/schemas/"
        let references = Set(refs(in: document).filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) })
        #expect(references.subtracting(schemas.keys).isEmpty, "dangling: \(references.subtracting(schemas.keys).sorted())")
        #expect(Set(schemas.keys).subtracting(references).isEmpty, "unused: \(Set(schemas.keys).subtracting(references).sorted())")
    }

    @Test("an attempt is the same schema wherever it appears; its status is the same list as the query filter's")
    func sameTypeSameSchema() throws {
        let attempt = try #require(schemas["AttemptResponse"]?["properties"] as? [String: [String: String]])
        #expect(attempt["attempt"]?["$ref"] == "#/components/schemas/AttemptView")
        for id in ["getAttempt", "setTaskDone", "abandonAttempt", "removeLog", "startAttempt", "restartAttempt"] {
            let operation = try #require(operations.first { $0.id == id }?.operation)
            #expect(Self.successSchema(operation)?["$ref"] as? String == "#/components/schemas/AttemptResponse", "\(id)")
        }
        let view = try #require(schemas["AttemptView"]?["properties"] as? [String: [String: Any]])
        #expect(view["status"]?["$ref"] as? String == "#/components/schemas/AttemptStatus")
        let list = try #require(operations.first { $0.id == "listAttempts" }?.operation["parameters"] as? [[String: Any]])
        let status = try #require(list.first { $0["name"] as? String == "status" }?["schema"] as? [String: Any])
        // The filter takes the known values only; the response's open list is those values or any other string: one
        // generated enum, `KnownAttemptStatus`, in both.
        #expect(status["$ref"] as? String == "#/components/schemas/KnownAttemptStatus")
        let open = try #require(schemas["AttemptStatus"]?["anyOf"] as? [[String: Any]])
        #expect(open.first?["$ref"] as? String == "#/components/schemas/KnownAttemptStatus")
    }

    static func successSchema(_ operation: [String: Any]) -> [String: Any]? {
        let responses = operation["responses"] as? [String: [String: Any]] ?? [:]
        let success = responses.first { $0.key.hasPrefix("2") }?.value
        return ((success?["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"] as? [String: Any]
    }

    // MARK: Enums

    @Test("lists responses carry are open unless fixed by nature; lists only requests use are closed")
    func enumsOpenWhereTheyMayGrow() throws {
        let open = Set(schemas.filter { $0.value["anyOf"] != nil }.keys)
        let closed = Set(schemas.filter { $0.value["enum"] != nil }.keys)
        for name in ["ChallengeKind", "TaskKind", "AttemptStatus", "CalendarDayStatus", "AccountKind", "PointsReason", "GroupRole"] {
            #expect(open.contains(name), "\(name) should be open")
        }
        #expect(closed.isSuperset(of: ["Weekday", "BrowseSort", "SocialProvider"]), "closed: \(closed.sorted())")
        for name in open {
            let variants = try #require(schemas[name]?["anyOf"] as? [[String: Any]])
            let known = (variants.first?["$ref"] as? String).flatMap { schemas[String($0.split(separator: "/").last!)] } ?? variants.first
            #expect(variants.count == 2 && known?["enum"] != nil && variants[1]["type"] as? String == "string" && variants[1]["enum"] == nil)
        }
    }

    @Test("requests never take an open list or an object open to unlisted fields: schemas both use have a request form")
    func requestsUseClosedForms() throws {
        func referenced(from node: Any, into names: inout Set<String>) {
            switch node {
            case let object as [String: Any]:
                if let ref = object["$ref"] as? String, ref.hasPrefix("#/components/schemas/") {
                    let name = String(ref.split(separator: "/").last!)
                    if names.insert(name).inserted, let schema = schemas[name] { referenced(from: schema, into: &names) }
                }
                for value in object.values { referenced(from: value, into: &names) }
            case let array as [Any]: for value in array { referenced(from: value, into: &names) }
            default: break
            }
        }
        var requested: Set<String> = []
        for (_, _, _, operation) in operations {
            referenced(from: operation["parameters"] ?? [], into: &requested)
            referenced(from: operation["requestBody"] ?? [:], into: &requested)
        }
        #expect(requested.contains("KnownChallengeKind") && requested.contains("CadenceInput"), "\(requested.sorted())")
        for name in requested {
            let schema = try #require(schemas[name])
            #expect(schema["anyOf"] == nil, "requests take \(name), an open list")
            if let properties = schema["properties"] as? [String: Any], !properties.isEmpty {
                #expect(schema["additionalProperties"] as? Bool == false, "requests take \(name), open to unlisted fields")
            }
        }
    }

    // MARK: Wire details

    @Test("every response declares X-Request-ID; 429 and 503 declare Retry-After, 429 the rate-limit headers too")
    func responseHeaders() throws {
        let components = try #require(document["components"] as? [String: Any])
        let shared = try #require(components["responses"] as? [String: [String: Any]])
        for (id, _, _, operation) in operations {
            let responses = try #require(operation["responses"] as? [String: [String: Any]])
            for (code, response) in responses {
                let resolved = (response["$ref"] as? String).flatMap { shared[String($0.split(separator: "/").last!)] } ?? response
                let headers = resolved["headers"] as? [String: Any] ?? [:]
                #expect(headers["X-Request-ID"] != nil, "\(id) \(code)")
                if code == "429" || code == "503" { #expect(headers["Retry-After"] != nil, "\(id) \(code)") }
                if code == "429" { #expect(headers["RateLimit-Remaining"] != nil && headers["RateLimit-Reset"] != nil, "\(id) \(code)") }
            }
            #expect(responses["429"] != nil && responses["503"] != nil, "\(id)")
        }
        let servers = try #require(document["servers"] as? [[String: Any]])
        #expect((servers.first?["url"] as? String)?.hasPrefix("http") == true)
    }

    @Test("path parameters: exactly the ones the code parses as UUIDs are uuid; taskID is a slug")
    func pathParameters() throws {
        var parsedAsUUID: Set<String> = []
        for file in try Self.sources() {
            parsedAsUUID.formUnion(file.text.matches(of: /uuidParameter\("([A-Za-z]+)"/).map { String($0.output.1) })
            parsedAsUUID.formUnion(file.text.matches(of: /parameters\.get\("([A-Za-z]+)"\)[^\n]*UUID/).map { String($0.output.1) })
        }
        for (id, _, _, operation) in operations {
            for parameter in operation["parameters"] as? [[String: Any]] ?? [] where parameter["in"] as? String == "path" {
                let name = try #require(parameter["name"] as? String)
                let format = (parameter["schema"] as? [String: Any])?["format"] as? String
                #expect((format == "uuid") == parsedAsUUID.contains(name), "\(id): {\(name)} is \(format ?? "no format")")
            }
        }
        let task = try #require(APIOperation.pathParameters["taskID"]?.schema.plain)
        #expect(task == .string())
        #expect(operations.contains { $0.path.contains("{taskID}") })
    }

    @Test("query limits are keywords, not prose")
    func queryLimits() throws {
        let list = try #require(operations.first { $0.id == "listFriends" }?.operation["parameters"] as? [[String: Any]])
        let limit = try #require(list.first { $0["name"] as? String == "limit" }?["schema"] as? [String: Any])
        #expect(limit["minimum"] as? Int == 1 && limit["maximum"] as? Int == 100 && limit["default"] as? Int == 20)
        let calendar = try #require(operations.first { $0.id == "attemptCalendar" }?.operation["parameters"] as? [[String: Any]])
        let month = try #require(calendar.first { $0["name"] as? String == "month" }?["schema"] as? [String: Any])
        let pattern = try Regex(try #require(month["pattern"] as? String))
        #expect("2026-03".wholeMatch(of: pattern) != nil && "2026-13".wholeMatch(of: pattern) == nil && "1969-12".wholeMatch(of: pattern) == nil)
        let time = try #require(schemas["LocalTime"])
        #expect(time["format"] == nil)
        let hhmm = try Regex(try #require(time["pattern"] as? String))
        #expect("18:00".wholeMatch(of: hhmm) != nil && "18:00:00".wholeMatch(of: hhmm) == nil && "24:00".wholeMatch(of: hhmm) == nil)
    }

    @Test("every object lists its required properties, and request-only objects refuse unknown fields as the server does")
    func requestBodiesAreStrict() throws {
        for operation in PublicAPICatalogue.operations {
            guard let type = operation.requestType else { continue }
            #expect(throws: Problem.self, "\(operation.id) accepts an unknown field") {
                try StrictJSONDecoder.decode(type, from: Data(#"{"surpriseField": 1}"#.utf8))
            }
            let detailed = try JSONSchema.detailed(from: type)
            guard case .named(let id, let shape) = detailed, let properties = Self.properties(of: shape) else {
                Issue.record("\(operation.id)'s body is not a named object")
                continue
            }
            let name = id.split(separator: ".").last.map(String.init) ?? id
            let schema = try #require(schemas[name], "\(name)")
            #expect(schema["additionalProperties"] as? Bool == false, "\(name) does not say it refuses unknown fields")
            #expect(Set(schema["required"] as? [String] ?? []) == Set(properties.filter(\.required).map(\.name)), "\(name)")
        }
    }

    static func properties(of shape: JSONSchema) -> [JSONSchema.Property]? {
        switch shape {
        case .object(let properties), .cased(.object(let properties), _): properties
        default: nil
        }
    }

    @Test("request objects state what their fields ask of one another, by cases of one field's value, as the server validates")
    func requestCases() throws {
        func cases(_ name: String) throws -> [(condition: [String: Any], then: Any)] {
            var chain: [(condition: [String: Any], then: Any)] = []
            var node: [String: Any]? = try #require(schemas[name], "\(name)")
            while let current = node, let condition = current["if"] as? [String: Any] {
                chain.append((condition, current["then"] as Any))
                node = current["else"] as? [String: Any]
            }
            return chain
        }
        func selected(_ chain: [(condition: [String: Any], then: Any)], _ field: String, _ value: String) -> [String: Any]? {
            chain.first { entry in
                let property = (entry.condition["properties"] as? [String: [String: Any]])?[field]
                return property?["const"] as? String == value || (property?["enum"] as? [String])?.contains(value) == true
            }?.then as? [String: Any]
        }
        let draft = try cases("ChallengeDraft")
        #expect(try #require(selected(draft, "kind", "chore"))["required"] as? [String] == ["groupID", "chore"])
        #expect((try #require(selected(draft, "kind", "habit"))["properties"] as? [String: Any])?["groupID"] as? Bool == false)
        #expect(draft.first { ($0.condition["properties"] as? [String: [String: Any]])?["kind"]?["const"] as? String == "curated" }?.then as? Bool == false)
        let competition = try #require(selected(draft, "kind", "competition"))
        #expect(competition["if"] != nil && competition["else"] != nil, "a competition's groupID depends on its visibility")
        let task = try cases("TaskDraft")
        #expect((try #require(selected(task, "kind", "checkbox"))["properties"] as? [String: Any])?["target"] as? Bool == false)
        #expect(try #require(selected(task, "kind", "quantity"))["required"] as? [String] == ["unit"])
        #expect(try #require(selected(try cases("CadenceInput"), "kind", "weekdays"))["required"] as? [String] == ["weekdays"])
        #expect(schemas["Cadence"]?["if"] == nil, "responses stay open; the cases are what requests must satisfy")
        #expect((schemas["CadenceInput"]?["properties"] as? [String: [String: Any]])?["weekdays"]?["uniqueItems"] as? Bool == true)
    }

    @Test("request fields state the limits the server enforces")
    func requestFieldLimits() throws {
        func field(_ schema: String, _ name: String) throws -> [String: Any] {
            try #require((schemas[schema]?["properties"] as? [String: [String: Any]])?[name], "\(schema).\(name)")
        }
        #expect(try field("RegisterRequest", "displayName")["maxLength"] as? Int == 50)
        #expect(try field("RegisterRequest", "password")["minLength"] as? Int == 10)
        #expect(try field("TrainingPlanRequest", "daysPerWeek")["maximum"] as? Int == 7)
        #expect(try field("InviteCreationRequest", "expiresInHours")["default"] as? Int == 72)
        #expect(try field("ChallengeDraft", "tasks")["maxItems"] as? Int == 20)
        #expect(try field("TaskDraft", "taskID")["pattern"] as? String == "^[a-z0-9-]{1,40}$")
        #expect(try field("HabitDetailsInput", "priority")["maximum"] as? Int == 5)
        #expect(try field("LogRequest", "quantity")["exclusiveMinimum"] as? Int == 0)
        let date = try Regex(try #require(schemas["LocalDate"]?["pattern"] as? String))
        #expect("2026-03-14".wholeMatch(of: date) != nil && "0001-01-01".wholeMatch(of: date) == nil && "2201-01-01".wholeMatch(of: date) == nil)
    }

    @Test("a webhook URL's schema takes what the server takes: public address literals too, the rule named as a format")
    func webhookURLMatchesTheServer() throws {
        let url = try #require((schemas["CreateWebhookRequest"]?["properties"] as? [String: [String: Any]])?["url"])
        #expect(url["format"] as? String == "webhook-url")
        #expect(url["maxLength"] as? Int == 2048)
        if let pattern = url["pattern"] as? String {
            let regex = try Regex(pattern)
            for taken in ["https://8.8.8.8/hooks/surge", "https://[2001:4860:4860::8888]/surge", "https://hooks.example.com/surge"] {
                #expect(taken.wholeMatch(of: regex) != nil, "\(taken)")
            }
        }
    }

    @Test("ending a session is described as the server does it: its access tokens are refused, not left to expire")
    func endSessionDescription() throws {
        let operation = try #require(operations.first { $0.id == "endSession" }?.operation)
        let text = (operation["summary"] as? String ?? "") + (operation["description"] as? String ?? "")
        #expect(!text.contains("lives out"))
        #expect(text.contains("access tokens"))
    }

    @Test("GET /v1/photos/{photoID} declares the image types it serves; uploads declare the ones they take")
    func photoMediaTypes() throws {
        let get = try #require(operations.first { $0.id == "getPhoto" }?.operation)
        let ok = try #require((get["responses"] as? [String: [String: Any]])?["200"]?["content"] as? [String: Any])
        #expect(Set(ok.keys) == ["image/jpeg", "image/png", "image/heic", "image/webp"])
        let upload = try #require(operations.first { $0.id == "attachPhoto" }?.operation["requestBody"] as? [String: Any])
        #expect(Set((upload["content"] as? [String: Any] ?? [:]).keys) == Set(ok.keys))
    }

    @Test("idempotent operations declare Idempotency-Key with its rule, and the 422 and 409 a bad or busy key gets")
    func idempotencyKey() throws {
        for operation in PublicAPICatalogue.operations where operation.idempotent {
            let described = try #require(operations.first { $0.id == operation.id }?.operation)
            let parameters = described["parameters"] as? [[String: Any]] ?? []
            let key = try #require(parameters.first { $0["name"] as? String == "Idempotency-Key" }?["schema"] as? [String: Any])
            #expect(key["maxLength"] as? Int == 255 && key["pattern"] != nil)
            let responses = described["responses"] as? [String: Any] ?? [:]
            #expect(responses["422"] != nil && responses["409"] != nil, "\(operation.id)")
            let types = described["x-problem-types"] as? [String] ?? []
            #expect(Set(types).isSuperset(of: ["validation", "idempotency-key-reused", "idempotency-key-in-progress"]), "\(operation.id)")
        }
    }

    // MARK: Problems

    @Test("every operation has a description and lists its problem types, each with a documented status")
    func operationsListTheirProblems() throws {
        let known = Dictionary(uniqueKeysWithValues: ProblemType.all.map { ($0.slug, $0) })
        for (id, _, _, operation) in operations {
            let description = operation["description"] as? String ?? ""
            #expect(description.count > 40, "\(id) has no description")
            let types = try #require(operation["x-problem-types"] as? [String], "\(id)")
            let responses = operation["responses"] as? [String: Any] ?? [:]
            for slug in types {
                let type = try #require(known[slug], "\(id) lists unknown \(slug)")
                #expect(responses[String(type.status.code)] != nil, "\(id) answers \(slug) with an undeclared \(type.status.code)")
                #expect(description.contains("`\(slug)`"), "\(id)'s description leaves out \(slug)")
            }
        }
        let problem = try #require((schemas["Problem"]?["properties"] as? [String: [String: Any]])?["type"]?["description"] as? String)
        for type in ProblemType.all { #expect(problem.contains("`\(type.slug)`"), "the Problem schema leaves out \(type.slug)") }
    }

    @Test("every problem slug the code uses is documented, and every documented one is used")
    func problemSlugsAreDocumented() throws {
        var used: [String: String] = [:]
        for file in try Self.sources() {
            for match in file.text.matches(of: /(?:slug:|\.conflict\()\s*"([a-z0-9-]+)"/) { used[String(match.output.1)] = file.path }
        }
        let documented = Set(ProblemType.all.map(\.slug))
        for (slug, path) in used.sorted(by: { $0.key < $1.key }) where !documented.contains(slug) {
            Issue.record("\(path) answers problem type \(slug), which ProblemType.all does not document")
        }
        #expect(documented.subtracting(used.keys).isEmpty, "documented but never answered: \(documented.subtracting(used.keys).sorted())")
        #expect(used.count > 30)
    }

    /// The Swift sources of the services and shared modules.
    static func sources() throws -> [(path: String, text: String)] {
        var files: [(String, String)] = []
        for directory in ["Services", "Shared"] {
            let base = root.appendingPathComponent(directory)
            let enumerator = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                guard url.pathExtension == "swift", !url.path.contains("/Generated/") else { continue }
                files.append((url.path.replacingOccurrences(of: root.path + "/", with: ""), try String(contentsOf: url, encoding: .utf8)))
            }
        }
        return files
    }
}

/// The conventions a newcomer's client relies on, checked on the whole document: every list is a schema of its own, an
/// id is `<thing>ID`, and every page of a list is asked for and answered the same way.
@Suite("OpenAPI document: conventions", .tags(.unit), .kind(.unit))
struct OpenAPIConventionTests {
    let document: OpenAPIDocumentTests

    init() throws {
        document = try OpenAPIDocumentTests()
    }

    /// Every `enum` in `node` below the top of a component schema, by where it is. The `if`/`then`/`else` cases of a
    /// request object state which values of a field call for which others: constraints, not types of their own.
    static func inlineEnums(in node: Any, at path: String) -> [String] {
        switch node {
        case let object as [String: Any]:
            let isCase = path.split(separator: "/").contains { ["if", "then", "else"].contains($0) }
            let here = object["enum"] != nil && path.split(separator: "/").count > 3 && !isCase ? [path] : []
            return here + object.sorted { $0.key < $1.key }.flatMap { inlineEnums(in: $0.value, at: path + "/" + $0.key) }
        case let array as [Any]:
            return array.enumerated().flatMap { inlineEnums(in: $0.element, at: "\(path)[\($0.offset)]") }
        default:
            return []
        }
    }

    @Test("no list of values is written inline in a schema: each is a schema of its own (a generated client names it)")
    func noInlineEnums() {
        let found = document.schemas.flatMap { name, schema in Self.inlineEnums(in: schema, at: "/components/schemas/\(name)") }
        #expect(found.isEmpty, "inline enums: \(found.sorted())")
    }

    /// The fields named `id` in 2026-11, before the rule: renaming them would break every client (a sign-up's `user.id`
    /// among them), so they stay until a major version; no other may join them.
    static let bareIDs: Set<String> = [
        "Account.id", "BoardInfo.id", "ChallengeBadge.id", "ChallengeBadgeInput.id", "Description.id", "FriendRequest.id",
        "GroupSummary.id", "PublicProfile.id",
    ]

    @Test("an identifier field is <thing>ID (userID, groupID), never Id or _id; the bare ids of earlier versions are the only exceptions")
    func identifiers() {
        var bare: Set<String> = []
        for (name, schema) in document.schemas {
            for property in (schema["properties"] as? [String: Any] ?? [:]).keys {
                if property == "id" {
                    bare.insert("\(name).\(property)")
                    continue
                }
                #expect(!property.hasSuffix("Id") && !property.hasSuffix("_id"), "\(name).\(property): name it <thing>ID")
            }
        }
        #expect(bare.subtracting(Self.bareIDs).isEmpty, "new bare `id` fields: \(bare.subtracting(Self.bareIDs).sorted())")
        for operation in document.operations {
            for parameter in operation.operation["parameters"] as? [[String: Any]] ?? [] {
                let name = parameter["name"] as? String ?? ""
                #expect(name != "id" && !name.hasSuffix("Id"), "\(operation.id): parameter \(name)")
            }
        }
    }

    @Test("every list is paged the same way: limit and cursor in, items and nextCursor out")
    func pagination() throws {
        var lists = 0
        for operation in document.operations where operation.method == "get" {
            let success = (operation.operation["responses"] as? [String: Any])?["200"] as? [String: Any]
            let content = (success?["content"] as? [String: Any])?["application/json"] as? [String: Any]
            guard let reference = (content?["schema"] as? [String: Any])?["$ref"] as? String else { continue }
            let name = String(reference.split(separator: "/").last ?? "")
            let parameters = Set((operation.operation["parameters"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
            let properties = document.schemas[name]?["properties"] as? [String: Any] ?? [:]
            // A board's window around the caller, or among friends, is one view and takes no cursor.
            guard parameters.contains("cursor") else { continue }
            lists += 1
            #expect(parameters.contains("limit"), "\(operation.id): limit beside cursor")
            #expect((properties["items"] as? [String: Any])?["type"] as? String == "array", "\(operation.id): \(name).items")
            #expect(properties["nextCursor"] != nil, "\(operation.id): \(name).nextCursor")
        }
        #expect(lists >= 15, "only \(lists) paged lists found")
    }
}
