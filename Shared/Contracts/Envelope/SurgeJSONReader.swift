import Foundation

/// Reads Surge's JSON dialect into `Decodable` values, as `SurgeJSON.decoder()` (`JSONDecoder` with RFC 3339
/// instants) does: the same values from the same text, and a `DecodingError` for what it refuses (a missing key, a
/// wrong type, a malformed document or timestamp). Event payloads and stored JSON are read with it.
///
/// Why it exists: `JSONDecoder` was a third of the CPU of a leaderboard rebuild and the largest part of every
/// consumer's decoding, most of it in its generic container machinery and Foundation's UUID and date parsing. This
/// parses the document into a small tree once and decodes UUIDs and instants by hand (`UUID(text:)`, `Timestamp`).
/// Request bodies keep `JSONDecoder` (`StrictJSONDecoder`), whose errors name the fields of a 422.
public struct SurgeJSONReader: Sendable {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let root = try data.withUnsafeBytes { bytes in
            var parser = JSONTreeParser(bytes.bindMemory(to: UInt8.self))
            return try parser.document()
        }
        return try JSONTreeDecoder.value(T.self, from: root, codingPath: [])
    }
}

/// A parsed JSON value; a number keeps its text until the type it is read as is known.
indirect enum JSONTree {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONTree])
    case object([(key: String, value: JSONTree)])

    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }
}

struct JSONTreeParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0
    private static let maxDepth = 512

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func document() throws -> JSONTree {
        let value = try self.value()
        skipWhitespace()
        guard position == bytes.count else { throw corrupted("Unexpected character after the top-level value at offset \(position).") }
        return value
    }

    private func corrupted(_ message: String) -> DecodingError {
        DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "The given data was not valid JSON. \(message)"))
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func value() throws -> JSONTree {
        skipWhitespace()
        guard position < bytes.count else { throw corrupted("Unexpected end of data.") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw corrupted("Unexpected character at offset \(position).")
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONTree) throws -> JSONTree {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count, memcmp(bytes.baseAddress! + position, word.utf8Start, count) == 0 else {
            throw corrupted("Invalid literal at offset \(position).")
        }
        position += count
        return value
    }

    private mutating func nest() throws {
        depth += 1
        guard depth <= Self.maxDepth else { throw corrupted("Too many nested arrays or dictionaries.") }
    }

    private mutating func object() throws -> JSONTree {
        try nest()
        defer { depth -= 1 }
        position += 1
        var fields: [(key: String, value: JSONTree)] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(fields)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw corrupted("Expected a key at offset \(position).") }
            let key = try string()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw corrupted("Expected ':' at offset \(position).") }
            position += 1
            fields.append((key, try value()))
            skipWhitespace()
            guard position < bytes.count else { throw corrupted("Unexpected end of data.") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(fields)
            } else {
                throw corrupted("Expected ',' or '}' at offset \(position).")
            }
        }
    }

    private mutating func array() throws -> JSONTree {
        try nest()
        defer { depth -= 1 }
        position += 1
        var elements: [JSONTree] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            elements.append(try value())
            skipWhitespace()
            guard position < bytes.count else { throw corrupted("Unexpected end of data.") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            } else {
                throw corrupted("Expected ',' or ']' at offset \(position).")
            }
        }
    }

    /// A string starting at the opening quote; UTF-8 is validated, escapes and surrogate pairs decoded.
    private mutating func string() throws -> String {
        position += 1
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = try utf8(start..<position)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw corrupted("Unescaped control character in a string at offset \(position).") }
            position += 1
        }
        var text = try utf8(start..<position)
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return text
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): text.append("\"")
                case UInt8(ascii: "\\"): text.append("\\")
                case UInt8(ascii: "/"): text.append("/")
                case UInt8(ascii: "b"): text.append("\u{08}")
                case UInt8(ascii: "f"): text.append("\u{0C}")
                case UInt8(ascii: "n"): text.append("\n")
                case UInt8(ascii: "r"): text.append("\r")
                case UInt8(ascii: "t"): text.append("\t")
                case UInt8(ascii: "u"): text.unicodeScalars.append(try escapedScalar())
                default: throw corrupted("Invalid escape in a string at offset \(position - 1).")
                }
            default:
                guard byte >= 0x20 else { throw corrupted("Unescaped control character in a string at offset \(position).") }
                let start = position
                while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\"), bytes[position] >= 0x20 {
                    position += 1
                }
                text += try utf8(start..<position)
            }
        }
        throw corrupted("Unterminated string.")
    }

    private func utf8(_ range: Range<Int>) throws -> String {
        let text = UnsafeBufferPointer(rebasing: bytes[range])
        // ASCII needs no validation; `String(validating:as:)` is generic and costs a metadata lookup per string.
        if !text.contains(where: { $0 >= 0x80 }) { return String(decoding: text, as: UTF8.self) }
        guard let text = String(validating: text, as: UTF8.self) else {
            throw corrupted("Invalid UTF-8 in a string at offset \(range.lowerBound).")
        }
        return text
    }

    /// After `\u`: four hex digits, and the low half of a surrogate pair after a high one.
    private mutating func escapedScalar() throws -> Unicode.Scalar {
        let first = try hexQuad()
        if (0xD800...0xDBFF).contains(first) {
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                throw corrupted("Unpaired surrogate in a string at offset \(position).")
            }
            position += 2
            let second = try hexQuad()
            guard (0xDC00...0xDFFF).contains(second), let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)) else {
                throw corrupted("Invalid surrogate pair in a string at offset \(position).")
            }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw corrupted("Unpaired surrogate in a string at offset \(position).") }
        return scalar
    }

    private mutating func hexQuad() throws -> UInt32 {
        guard position + 4 <= bytes.count else { throw corrupted("Unexpected end of data.") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = HexDigit.value(bytes[position]) else { throw corrupted("Invalid \\u escape at offset \(position).") }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// A number as JSON writes it: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    private mutating func number() throws -> JSONTree {
        let start = position
        func digits() -> Int {
            let first = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            return position - first
        }
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        let integerStart = position
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw corrupted("Invalid number at offset \(start).")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw corrupted("Invalid number at offset \(start).") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw corrupted("Invalid number at offset \(start).") }
        }
        return .number(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
    }
}

/// Decodes a `JSONTree`: one per value being decoded, and its own single-value container.
struct JSONTreeDecoder: Decoder, SingleValueDecodingContainer {
    let tree: JSONTree
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func value<T: Decodable>(_ type: T.Type, from tree: JSONTree, codingPath: @autoclosure () -> [any CodingKey]) throws -> T {
        if T.self == String.self { return unsafeBitCast(try string(tree, codingPath()), to: T.self) }
        if T.self == UUID.self {
            let text = try string(tree, codingPath())
            guard let uuid = UUID(text: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Attempted to decode UUID from invalid UUID string."))
            }
            return unsafeBitCast(uuid, to: T.self)
        }
        if T.self == Date.self { return unsafeBitCast(try date(tree, codingPath()), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try integer(tree, Int.self, codingPath()), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(tree, codingPath()), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try floating(tree, Double.self, codingPath()), to: T.self) }
        if T.self == URL.self {
            let text = try string(tree, codingPath())
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Invalid URL string."))
            }
            return url as! T
        }
        if T.self == Data.self {
            let text = try string(tree, codingPath())
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Encountered Data is not valid Base64."))
            }
            return data as! T
        }
        if T.self == Decimal.self {
            guard case .number(let text) = tree, let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw mismatch(Decimal.self, tree, codingPath())
            }
            return decimal as! T
        }
        return try T(from: JSONTreeDecoder(tree: tree, codingPath: codingPath()))
    }

    static func mismatch(_ type: Any.Type, _ tree: JSONTree, _ codingPath: [any CodingKey]) -> DecodingError {
        if case .null = tree {
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "Cannot get \(type) -- found null value instead"))
        }
        return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Expected to decode \(type) but found \(tree.kind) instead."))
    }

    static func string(_ tree: JSONTree, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> String {
        guard case .string(let text) = tree else { throw mismatch(String.self, tree, codingPath()) }
        return text
    }

    static func bool(_ tree: JSONTree, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let value) = tree else { throw mismatch(Bool.self, tree, codingPath()) }
        return value
    }

    static func date(_ tree: JSONTree, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Date {
        let text = try string(tree, codingPath())
        guard let date = Timestamp.parse(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "expected an RFC 3339 timestamp, got \(text)"))
        }
        guard Timestamp.isSupported(date) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: Timestamp.unsupportedMessage(text)))
        }
        return date
    }

    /// An integer written as one, or as a number with an integral value (`1.0`, `1e3`), that fits the type.
    static func integer<I: FixedWidthInteger>(_ tree: JSONTree, _ type: I.Type, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> I {
        guard case .number(let text) = tree else { throw mismatch(I.self, tree, codingPath()) }
        if let value = I(text) { return value }
        if let double = Double(text), let value = I(exactly: double) { return value }
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Number \(text) is not representable in Swift."))
    }

    static func floating<F: BinaryFloatingPoint & LosslessStringConvertible>(_ tree: JSONTree, _ type: F.Type, _ codingPath: @autoclosure () -> [any CodingKey])
        throws -> F
    {
        guard case .number(let text) = tree else { throw mismatch(F.self, tree, codingPath()) }
        guard let value = F(text), value.isFinite else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath(), debugDescription: "Number \(text) is not representable in Swift."))
        }
        return value
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let fields) = tree else {
            throw Self.mismatch([String: Any].self, tree, codingPath)
        }
        return KeyedDecodingContainer(JSONTreeKeyedContainer<Key>(fields: fields, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = tree else { throw Self.mismatch([Any].self, tree, codingPath) }
        return JSONTreeUnkeyedContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool {
        if case .null = tree { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try Self.bool(tree, codingPath) }
    func decode(_ type: String.Type) throws -> String { try Self.string(tree, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try Self.floating(tree, type, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try Self.floating(tree, type, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try Self.integer(tree, type, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try Self.integer(tree, type, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try Self.integer(tree, type, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try Self.integer(tree, type, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try Self.integer(tree, type, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try Self.integer(tree, type, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try Self.integer(tree, type, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try Self.integer(tree, type, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try Self.integer(tree, type, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try Self.integer(tree, type, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try Self.value(type, from: tree, codingPath: codingPath) }
}

/// A key that is not one of the type's own: an array index in a coding path, or `super`.
private struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}

struct JSONTreeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [(key: String, value: JSONTree)]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { fields.compactMap { Key(stringValue: $0.key) } }

    func contains(_ key: Key) -> Bool { field(key) != nil }

    private func field(_ key: Key) -> JSONTree? {
        let name = key.stringValue
        return fields.first { $0.key == name }?.value
    }

    private func tree(_ key: Key) throws -> JSONTree {
        guard let tree = field(key) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return tree
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try tree(key) { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try JSONTreeDecoder.bool(tree(key), path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try JSONTreeDecoder.string(tree(key), path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try JSONTreeDecoder.floating(tree(key), type, path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try JSONTreeDecoder.floating(tree(key), type, path(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try JSONTreeDecoder.integer(tree(key), type, path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try JSONTreeDecoder.integer(tree(key), type, path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try JSONTreeDecoder.integer(tree(key), type, path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try JSONTreeDecoder.integer(tree(key), type, path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try JSONTreeDecoder.integer(tree(key), type, path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try JSONTreeDecoder.integer(tree(key), type, path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try JSONTreeDecoder.integer(tree(key), type, path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try JSONTreeDecoder.integer(tree(key), type, path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try JSONTreeDecoder.integer(tree(key), type, path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try JSONTreeDecoder.integer(tree(key), type, path(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try JSONTreeDecoder.value(type, from: tree(key), codingPath: path(key))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let tree = field(key) else { return nil }
        if case .null = tree { return nil }
        return try JSONTreeDecoder.value(type, from: tree, codingPath: path(key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONTreeDecoder(tree: tree(key), codingPath: path(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONTreeDecoder(tree: tree(key), codingPath: path(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let key = IndexKey(stringValue: "super")
        return JSONTreeDecoder(tree: fields.first { $0.key == "super" }?.value ?? .null, codingPath: codingPath + [key])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONTreeDecoder(tree: field(key) ?? .null, codingPath: path(key))
    }
}

struct JSONTreeUnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONTree]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [JSONTree], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var path: [any CodingKey] { codingPath + [IndexKey(intValue: currentIndex)] }

    private mutating func next<T>(_ type: T.Type, _ read: (JSONTree, [any CodingKey]) throws -> T) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "Unkeyed container is at end."))
        }
        let value = try read(elements[currentIndex], path)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw DecodingError.valueNotFound(Any?.self, .init(codingPath: path, debugDescription: "Unkeyed container is at end.")) }
        guard case .null = elements[currentIndex] else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try JSONTreeDecoder.bool($0, $1) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try JSONTreeDecoder.string($0, $1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try JSONTreeDecoder.floating($0, type, $1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try JSONTreeDecoder.floating($0, type, $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try JSONTreeDecoder.integer($0, type, $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try JSONTreeDecoder.integer($0, type, $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try JSONTreeDecoder.integer($0, type, $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try JSONTreeDecoder.integer($0, type, $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try JSONTreeDecoder.integer($0, type, $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try JSONTreeDecoder.integer($0, type, $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try JSONTreeDecoder.integer($0, type, $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try JSONTreeDecoder.integer($0, type, $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try JSONTreeDecoder.integer($0, type, $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try JSONTreeDecoder.integer($0, type, $1) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) { try JSONTreeDecoder.value(type, from: $0, codingPath: $1) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { try JSONTreeDecoder(tree: $0, codingPath: $1).container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try JSONTreeDecoder(tree: $0, codingPath: $1).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { JSONTreeDecoder(tree: $0, codingPath: $1) }
    }
}
