import Foundation
import SurgeTestSupport

// The pieces of the hardening fuzz test: a seeded random source, JSON written by hand (so it can be wrong on purpose),
// the public route table read from docs/openapi.json, and a generator of mutated requests over it.

extension SeededRandom {
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &self) < probability }
    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &self)] }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    mutating func uuid() -> String {
        let high = next()
        let low = next()
        let hex = String(format: "%016llx%016llx", high, low)
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-4" + String(c[13..<16]) + "-a" + String(c[17..<20]) + "-"
            + String(c[20..<32])
    }
}

/// JSON as text, including text that is not quite JSON: `raw` is written as given.
indirect enum FuzzJSON: Sendable {
    case object([(String, FuzzJSON)])
    case array([FuzzJSON])
    case string(String)
    case raw(String)
    case bool(Bool)
    case null

    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                Self.quote(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .string(let text): Self.quote(text, into: &out)
        case .raw(let text): out += text
        case .bool(let value): out += value ? "true" : "false"
        case .null: out += "null"
        }
    }

    static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// A JSON schema as far as the generator needs it.
indirect enum FuzzSchema: Sendable {
    case object([(String, FuzzSchema)], required: Set<String>)
    case array(FuzzSchema)
    case string(format: String?, values: [String]?)
    case integer
    case number
    case boolean
    case unknown

    init(_ json: Any?) {
        guard let json = json as? [String: Any] else {
            self = .unknown
            return
        }
        if let values = json["enum"] as? [String] {
            self = .string(format: nil, values: values)
            return
        }
        switch json["type"] as? String {
        case "object":
            let properties = (json["properties"] as? [String: Any]) ?? [:]
            self = .object(
                properties.keys.sorted().map { ($0, FuzzSchema(properties[$0])) }, required: Set((json["required"] as? [String]) ?? []))
        case "array": self = .array(FuzzSchema(json["items"]))
        case "string": self = .string(format: json["format"] as? String, values: nil)
        case "integer": self = .integer
        case "number": self = .number
        case "boolean": self = .boolean
        default: self = .unknown
        }
    }
}

/// One public operation from docs/openapi.json.
struct FuzzRoute: Sendable {
    var method: String
    var path: String
    var service: String
    var secured: Bool
    var query: [(String, FuzzSchema)]
    var body: FuzzSchema?
    var bodyTypes: [String]

    var pathParameters: [String] {
        path.split(separator: "/").compactMap { $0.hasPrefix("{") ? String($0.dropFirst().dropLast()) : nil }
    }

    static func load() throws -> [FuzzRoute] {
        let url = TestEnvironment.repositoryRoot.appendingPathComponent("docs/openapi.json")
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        let paths = document["paths"] as? [String: Any] ?? [:]
        var routes: [FuzzRoute] = []
        for path in paths.keys.sorted() {
            let operations = paths[path] as? [String: Any] ?? [:]
            for method in operations.keys.sorted() {
                guard let operation = operations[method] as? [String: Any] else { continue }
                let parameters = operation["parameters"] as? [[String: Any]] ?? []
                let content = (operation["requestBody"] as? [String: Any])?["content"] as? [String: Any] ?? [:]
                routes.append(
                    FuzzRoute(
                        method: method.uppercased(), path: path,
                        service: operation["x-surge-service"] as? String ?? "unknown",
                        secured: !((operation["security"] as? [Any])?.isEmpty ?? true),
                        query: parameters.filter { $0["in"] as? String == "query" }.compactMap { parameter in
                            (parameter["name"] as? String).map { ($0, FuzzSchema(parameter["schema"])) }
                        },
                        body: (content["application/json"] as? [String: Any]).map { FuzzSchema($0["schema"]) },
                        bodyTypes: content.keys.sorted()))
            }
        }
        return routes
    }
}

/// Where a fuzz request goes and how it is authenticated.
enum FuzzTarget: Sendable, CustomStringConvertible {
    case gateway
    /// Straight to progress, signed as the gateway signs, on behalf of this caller (nil: none).
    case progressSigned(caller: String?)
    /// Straight to progress without a signature: must be refused as an unauthenticated call.
    case progressUnsigned

    var description: String {
        switch self {
        case .gateway: "gateway"
        case .progressSigned(let caller): "progress(signed, caller \(caller ?? "none"))"
        case .progressUnsigned: "progress(unsigned)"
        }
    }
}

struct FuzzRequest: Sendable, CustomStringConvertible {
    var target: FuzzTarget
    var method: String
    /// Path and query, percent-encoded.
    var uri: String
    var headers: [(String, String)]
    var body: Data?
    /// What was done to it, for the failure report.
    var mutation: String

    var description: String {
        let shown = uri.count > 160 ? String(uri.prefix(160)) + "…(\(uri.count) chars)" : uri
        var text = "\(target) \(method) \(shown) [\(mutation)]"
        if let body {
            let preview = String(decoding: body.prefix(160), as: UTF8.self)
            text += " body(\(body.count) bytes): \(preview.debugDescription)"
        }
        return text
    }
}

/// The real things a fuzz request may name, so that some requests get past "not found" into the code behind.
struct FuzzFixtures: Sendable {
    var ids: [String: [String]]
    var userToken: String
    var otherToken: String
    /// A user the fuzz may delete (DELETE /v1/me goes out with this token only).
    var victimToken: String
    var userID: String
    var refreshToken: String
}

/// Makes mutated requests from the route table.
struct FuzzGenerator {
    var random: SeededRandom
    let routes: [FuzzRoute]
    let fixtures: FuzzFixtures

    static let outOfRangeDates = [
        "0001-01-01", "1969-12-31", "1970-01-01", "2201-01-01", "9999-12-31", "10000-01-01", "0000-00-00", "2026-02-30",
        "2026-13-01", "-0001-01-01", "2026-1-1", "20261116", "",
    ]
    static let outOfRangeInstants = [
        "0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "1970-01-01T00:00:00Z", "2201-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z", "10000-01-01T00:00:00Z", "+275760-09-13T00:00:00Z", "2026-11-16T25:00:00Z",
        "2026-11-16T10:00:00+25:00", "2026-11-16", "2026-11-16T10:00:00", "yesterday", "1e10", "",
    ]
    static let oddTimes = ["24:00", "23:59:60", "99:99", "-01:00", "7", "07:00:00.5", "", "noon"]
    static let numberTokens = [
        "0", "-0", "-1", "1.5", "1e308", "-1e308", "1e400", "-1e400", "5e-324", "9223372036854775807", "9223372036854775808",
        "-9223372036854775809", "18446744073709551616", "123456789012345678901234567890123456789", "2147483648", "-2147483649",
        "9007199254740993",
    ]
    /// Not JSON at all: the decoder must refuse them, not the handler trip over them.
    static let badNumberTokens = ["NaN", "Infinity", "-Infinity", "0x10", "01", "+1", ".5", "1.", "1e", "--1"]
    static let contentTypes = [
        "text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
        "application/json; charset=utf-16", "application/jsonx", "*/*", "application/merge-patch+json", "image/jpeg",
        "application/problem+json",
    ]
    /// Methods the HTTP parser knows; an unknown one is a parse error, sent as a raw-socket case instead.
    static let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "TRACE"]

    mutating func strangeString(limit: Int) -> String {
        switch random.int(0...11) {
        case 0: return "a\u{0}b"
        case 1: return "\u{0}"
        case 2: return String(repeating: "x", count: random.pick([256, 4097, 70_000].filter { $0 <= limit } + [256]))
        case 3: return "\u{202E}evil\u{200B}\u{FEFF}"
        case 4: return "😀👨‍👩‍👧‍👦" + String(repeating: "\u{0301}", count: 300)
        case 5: return ""
        case 6: return "   "
        case 7: return "'; DROP TABLE users; --"
        case 8: return "\u{1}\u{7}\u{1B}[31m\u{7F}"
        case 9: return "../../etc/passwd"
        case 10: return "%00%ff{{7*7}}${jndi:ldap://x}"
        default: return "line\nbreak\r\ttab"
        }
    }

    /// A plausible value for a field, by its name and schema.
    mutating func plausible(_ schema: FuzzSchema, name: String, depth: Int) -> FuzzJSON {
        switch schema {
        case .object(let properties, let required):
            var members: [(String, FuzzJSON)] = []
            for (key, property) in properties where required.contains(key) || random.chance(0.5) {
                members.append((key, value(property, name: key, depth: depth + 1)))
            }
            return .object(members)
        case .array(let items):
            return .array((0..<random.int(0...3)).map { _ in value(items, name: name, depth: depth + 1) })
        case .string(let format, let values):
            if let values { return .string(random.pick(values)) }
            switch format {
            case "uuid": return .string(id(for: name))
            case "date": return .string(random.pick(["2026-11-16", "2026-11-17", "2026-06-01"]))
            case "date-time": return .string(random.pick(["2026-11-16T10:00:00Z", "2026-11-16T10:00:00.123+01:00"]))
            case "time": return .string(random.pick(["09:00", "22:30"]))
            default: break
            }
            switch name {
            case "timeZone": return .string(random.pick(["Europe/Rome", "America/New_York", "UTC", "Asia/Kathmandu"]))
            case "email": return .string("fuzz-\(random.int(0...1_000_000))@example.com")
            case "password": return .string("correct horse battery staple")
            case "refreshToken": return .string(random.chance(0.3) ? fixtures.refreshToken : "rt_" + random.uuid())
            case "taskID": return .string(random.pick(["water", "diet", "read", "sketch"]))
            case "colour": return .string("#FF8800")
            case "unit": return .string("litres")
            case "code": return .string(random.pick(fixtures.ids["code"] ?? ["ABCDEFGH"]))
            case "provider": return .string("apple")
            case "idToken": return .string("eyJhbGciOiJub25lIn0.e30.")
            case "locale": return .string(random.pick(["en-GB", "it", "xx-YY"]))
            default: return .string("Fuzz \(random.int(0...999))")
            }
        case .integer:
            switch name {
            case "points", "priority", "series": return .raw(String(random.int(1...5)))
            case "durationDays": return .raw(String(random.int(1...90)))
            default: return .raw(String(random.int(0...40)))
            }
        case .number: return .raw(random.pick(["1", "0.5", "2.25", "10"]))
        case .boolean: return .bool(random.chance(0.5))
        case .unknown: return .object([])
        }
    }

    /// A value that is wrong for the field: the wrong type, out of range, far too long, with NUL in it.
    mutating func wrong(_ schema: FuzzSchema, name: String) -> FuzzJSON {
        if random.chance(0.25) {
            return random.pick([.string("x"), .raw("42"), .bool(true), .null, .array([]), .object([]), .raw("-1"), .array([.null])])
        }
        switch schema {
        case .string(let format, let values):
            switch format {
            case "date": return .string(random.pick(Self.outOfRangeDates))
            case "date-time": return .string(random.pick(Self.outOfRangeInstants))
            case "time": return .string(random.pick(Self.oddTimes))
            case "uuid": return .string(random.pick(["not-a-uuid", "", "00000000-0000-0000-0000-000000000000", random.uuid().uppercased()]))
            default:
                if values != nil, random.chance(0.5) { return .string(random.pick(["", "CURATED", "unknown", "null"])) }
                if name == "timeZone", random.chance(0.5) { return .string(random.pick(["Mars/Olympus", "UTC+25", "Etc/GMT+15", "europe/rome", "../../etc/localtime"])) }
                return .string(strangeString(limit: 70_000))
            }
        case .integer, .number:
            return .raw(random.pick(Self.numberTokens + (random.chance(0.2) ? Self.badNumberTokens : [])))
        case .array(let items):
            if random.chance(0.5) {
                return .array((0..<random.int(200...2000)).map { _ in plausible(items, name: name, depth: 9) })
            }
            return .array([.null, .raw("1"), .string("x")])
        case .object(let properties, _):
            // Every field wrong at once, or unknown fields only.
            if random.chance(0.5) { return .object([("unexpected", .string("field"))]) }
            return .object(properties.map { ($0.0, wrong($0.1, name: $0.0)) })
        case .boolean: return random.pick([.string("true"), .raw("1"), .null])
        case .unknown: return .raw("[]")
        }
    }

    mutating func value(_ schema: FuzzSchema, name: String, depth: Int) -> FuzzJSON {
        if depth > 0, random.chance(0.12) { return wrong(schema, name: name) }
        return plausible(schema, name: name, depth: depth)
    }

    /// A real id for a parameter or field of this name when there is one, else a random uuid.
    mutating func id(for name: String) -> String {
        let known = fixtures.ids[name] ?? (name.hasSuffix("IDs") ? fixtures.ids["userID"] : nil)
        if let known, !known.isEmpty, random.chance(0.7) { return random.pick(known) }
        return random.uuid()
    }

    static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default: out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    mutating func pathSegment(_ name: String) -> String {
        let roll = Double.random(in: 0..<1, using: &random)
        if roll < 0.6 { return Self.percentEncode(id(for: name)) }
        if roll < 0.8 { return random.uuid() }
        // Already encoded, on purpose: NUL, an encoded slash, invalid UTF-8, dot segments.
        if random.chance(0.3) { return random.pick(["%00", "%2F", "%2e%2e", "%C0%AE", "%FF%FE", "%25", "%20"]) }
        return Self.percentEncode(
            random.pick([
                "0", "-1", "not-a-uuid", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
                random.uuid().uppercased(), "a\u{0}b", String(repeating: "a", count: 3000), "😀", "1e400", "null",
                "' OR 1=1 --", "{{7*7}}",
            ]))
    }

    mutating func queryValue(_ name: String, _ schema: FuzzSchema) -> String {
        if random.chance(0.2) { return strangeString(limit: 4097) }
        switch name {
        case "limit": return random.pick(["-1", "0", "1", "20", "100", "101", "99999999999999999999", "1.5", "abc", "", "NaN"])
        case "cursor": return random.pick(["", "abc", "eyJ0IjoxfQ", String(repeating: "Q", count: 5000), "!!!!", "AAAAAAAAAAAAAAAAAAAAAA=="])
        case "weeks": return random.pick(["-1", "0", "1", "52", "53", "100000", "9223372036854775808"])
        case "month": return random.pick(["2026-11", "10000-01", "0000-00", "2026-13", "9999-12", "0001-01", "1969-12", "2201-01", "abc", "2026-11-16"])
        case "date": return random.pick(Self.outOfRangeDates)
        case "happenedAt": return random.pick(Self.outOfRangeInstants)
        case "minDays", "maxDays": return random.pick(["-1", "0", "75", "100000", "9223372036854775808", "x"])
        case "confirm": return random.pick(["true", "false", "yes", ""])
        default:
            if case .string(_, let values?) = schema, random.chance(0.6) { return random.pick(values) }
            if case .integer = schema { return random.pick(Self.numberTokens) }
            return random.pick(["x", "", "null", "🙂"])
        }
    }

    /// The body, its content type and a note of what was done to it.
    mutating func makeBody(for route: FuzzRoute) -> (Data?, String?, String) {
        if route.bodyTypes.contains(where: { $0.hasPrefix("image/") }) {
            switch random.int(0...4) {
            case 0: return (Data([0xFF, 0xD8, 0xFF, 0xE0] + (0..<random.int(0...4000)).map { _ in UInt8.random(in: 0...255, using: &random) }), "image/jpeg", "jpeg-ish bytes")
            case 1: return (Data(), "image/png", "empty image")
            case 2: return (Data("{\"not\":\"an image\"}".utf8), "application/json", "json to an upload")
            case 3: return (Data((0..<2000).map { _ in UInt8.random(in: 0...255, using: &random) }), random.pick(["image/heic", "image/webp", "image/gif"]), "random bytes")
            default: return (nil, nil, "no body")
            }
        }
        guard let schema = route.body else {
            if random.chance(0.1) { return (Data("{\"unexpected\":true}".utf8), "application/json", "body where none belongs") }
            return (nil, nil, "no body")
        }
        let shaped = plausible(schema, name: "", depth: 0).text
        let roll = random.int(0...99)
        switch roll {
        case 0..<50:
            return (Data(shaped.utf8), "application/json", "shaped")
        case 50..<60:
            let cut = random.int(0...max(0, shaped.utf8.count - 1))
            return (Data(shaped.utf8.prefix(cut)), "application/json", "truncated at \(cut)")
        case 60..<65:
            var bytes = Array(shaped.utf8)
            for _ in 0..<random.int(1...4) where !bytes.isEmpty {
                bytes[random.int(0...bytes.count - 1)] = random.pick(Array("{}[]\",:\\ \u{0}x".utf8))
            }
            return (Data(bytes), "application/json", "bytes flipped")
        case 65..<71:
            return (Data(random.pick(["[]", "\"x\"", "42", "null", "", "true", "{", "}", "{}", "{\"a\":}", "{'a':1}", "{\"a\":1,}", "/* */{}"]).utf8), "application/json", "wrong top level")
        case 71..<74:
            let depth = random.pick([64, 513, 1000, 100_000])
            let nested = random.chance(0.5)
                ? String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                : String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
            return (Data(nested.utf8), "application/json", "nested \(depth) deep")
        case 74..<77:
            // Every key twice, the second time with a wrong value.
            guard case .object(let members) = plausible(schema, name: "", depth: 0) else { return (Data(shaped.utf8), "application/json", "shaped") }
            let doubled = FuzzJSON.object(members + members.map { ($0.0, FuzzJSON.raw("-1")) })
            return (Data(doubled.text.utf8), "application/json", "duplicate keys")
        case 77..<84:
            let type = random.pick(Self.contentTypes)
            return (Data(shaped.utf8), type, "content-type \(type)")
        case 84..<87:
            var bytes = Array(shaped.utf8)
            if let quote = bytes.lastIndex(of: UInt8(ascii: "\"")), quote > 0 {
                bytes.insert(contentsOf: random.pick([[0xC0, 0xAF], [0xFF], [0xED, 0xA0, 0x80], [0x00]]), at: quote)
            }
            return (Data(bytes), "application/json", "invalid UTF-8")
        case 87..<89:
            return (Data([0xEF, 0xBB, 0xBF] + Array(shaped.utf8)), "application/json", "byte order mark")
        case 89..<91:
            // Larger than the gateway's MAX_REQUEST_BYTES (1 MiB by default).
            let big = "{\"name\":\"" + String(repeating: "x", count: 1_100_000) + "\"}"
            return (Data(big.utf8), "application/json", "1.1 MB")
        case 91..<94:
            return (Data(shaped.utf8), nil, "no content-type")
        default:
            // Every field wrong at once.
            return (Data(wrong(schema, name: "").text.utf8), "application/json", "all fields wrong")
        }
    }

    mutating func authorization(for route: FuzzRoute) -> (String?, String) {
        if route.method == "DELETE" && route.path == "/v1/me" {
            return random.chance(0.8) ? (fixtures.victimToken, "victim") : (nil, "anonymous")
        }
        let roll = random.int(0...99)
        if !route.secured { return roll < 85 ? (nil, "anonymous") : (fixtures.userToken, "user") }
        switch roll {
        case 0..<80: return (fixtures.userToken, "user")
        case 80..<86: return (fixtures.otherToken, "other user")
        case 86..<92: return (nil, "anonymous")
        case 92..<95: return (random.pick(["garbage", "", "a.b.c", String(repeating: "A", count: 9000)]), "garbage token")
        case 95..<98: return (String(fixtures.userToken.dropLast(3)) + "abc", "tampered token")
        default: return ("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiIxIn0.", "alg none")
        }
    }

    mutating func next(from pool: [FuzzRoute]? = nil) -> FuzzRequest {
        let route = random.pick(pool ?? routes)
        var path = route.path
        for name in route.pathParameters {
            path = path.replacingOccurrences(of: "{\(name)}", with: pathSegment(name))
        }
        var query: [String] = []
        for (name, schema) in route.query where random.chance(0.5) {
            query.append("\(name)=\(Self.percentEncode(queryValue(name, schema)))")
        }
        if random.chance(0.05) { query.append("unknown=\(Self.percentEncode(strangeString(limit: 300)))") }
        if random.chance(0.03), let first = query.first { query.append(first) }
        let uri = path + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))

        var method = route.method
        var notes: [String] = []
        if random.chance(0.05) {
            method = random.pick(Self.methods)
            notes.append("method \(method)")
        }
        var (body, contentType, bodyNote) = makeBody(for: route)
        notes.append(bodyNote)
        if method == "TRACE" || ((method == "GET" || method == "HEAD") && random.chance(0.7)) {
            // AsyncHTTPClient refuses to send a TRACE with a body.
            body = nil
            contentType = nil
        }
        var headers: [(String, String)] = []
        if let contentType { headers.append(("content-type", contentType)) }
        let (token, who) = authorization(for: route)
        notes.append(who)
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if random.chance(0.1) {
            headers.append(("Idempotency-Key", random.pick(["fuzz-\(random.uuid())", "has spaces", String(repeating: "k", count: 300), "", "fuzz-fixed"])))
            notes.append("idempotency key")
        }
        if random.chance(0.05) {
            headers.append(
                random.pick([
                    ("X-Request-ID", String(repeating: "r", count: 500)), ("traceparent", "00-zz-zz-01"),
                    ("X-Forwarded-For", "not-an-ip, 999.1.1.1"), ("Accept", "application/xml"), ("Accept-Encoding", "gzip;q=NaN"),
                    ("X-Surge-Caller", fixtures.userID), ("X-Surge-Signature", "v1;t=0;sig=x"),
                ]))
            notes.append("odd header")
        }
        return FuzzRequest(target: .gateway, method: method, uri: uri, headers: headers, body: body, mutation: notes.joined(separator: ", "))
    }
}
