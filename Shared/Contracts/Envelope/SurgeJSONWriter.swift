import Foundation

/// Writes Surge's JSON dialect, byte for byte what `SurgeJSON.apiEncoder()` (whole-second instants) or
/// `SurgeJSON.encoder()` (milliseconds) write: sorted keys, no escaped slashes, lower-case UUIDs. Everything Surge
/// writes goes through it (`SurgeJSON.encode` and `apiEncode`): HTTP bodies, event payloads, stored JSON and what
/// it sends to providers. `JSONEncoder` remains only where a caller changes its options (page cursors keep instants
/// exactly; the event catalogue pretty-prints its examples).
///
/// Why it exists: encoding a response through `JSONEncoder` and the `LowercaseUUIDs` proxy was a third of the CPU a
/// leaderboard page costs its service (generic-metadata lookups and dynamic casts for every value of every nested
/// container). This encoder builds the same tree in one pass and sorts keys with the same order, compared as bytes when
/// the keys are ASCII. `SurgeJSONWriterTests` checks it against `JSONEncoder` on every response shape it could meet.
public struct SurgeJSONWriter: Sendable {
    /// How instants are written: whole seconds in HTTP bodies, milliseconds in events and stored JSON (`SurgeJSON`).
    public enum Instants: Sendable {
        case wholeSeconds, milliseconds

        func format(_ date: Date) -> String {
            switch self {
            case .wholeSeconds: Timestamp.formatWholeSeconds(date)
            case .milliseconds: Timestamp.format(date)
            }
        }
    }

    public let instants: Instants

    public init(instants: Instants) {
        self.instants = instants
    }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let root = try JSONTreeEncoder.node(for: value, codingPath: [], instants: instants)
        if case .unwritten = root {
            throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        var output: [UInt8] = []
        output.reserveCapacity(256)
        root.write(to: &output)
        return output
    }
}

/// A JSON value being built. Objects and arrays are classes, so a container handed out earlier still writes into
/// the tree its encoder belongs to.
enum JSONNode {
    case null
    case bool(Bool)
    /// A number's text as JSON writes it.
    case number(String)
    case string(String)
    case array(JSONArray)
    case object(JSONObject)
    /// What a super encoder writes, read when the tree is written.
    case later(JSONTreeEncoder)
    /// A value that asked for no container: an empty object, as `JSONEncoder` writes it (an error at the top level).
    case unwritten

    func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let text): output.append(contentsOf: text.utf8)
        case .string(let text): Self.writeString(text, to: &output)
        case .array(let array):
            output.append(UInt8(ascii: "["))
            for (index, item) in array.items.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                item.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .later(let encoder): (encoder.node ?? .unwritten).write(to: &output)
        case .unwritten: output.append(contentsOf: "{}".utf8)
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            object.sortFields()
            var first = true
            for (index, field) in object.fields.enumerated() {
                // A key written twice keeps its last value, as a dictionary would.
                if index + 1 < object.fields.count, object.fields[index + 1].key == field.key { continue }
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                Self.writeString(field.key, to: &output)
                output.append(UInt8(ascii: ":"))
                field.value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Quoted and escaped as `JSONEncoder` escapes with `.withoutEscapingSlashes`: quote, backslash and the C0
    /// controls; everything else as UTF-8.
    static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            output.append(contentsOf: text.utf8)
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

final class JSONArray {
    var items: [JSONNode] = []
}

final class JSONObject {
    var fields: [(key: String, value: JSONNode)] = []

    /// Into `JSONEncoder`'s `.sortedKeys` order on Linux (by UTF-8 bytes: "B" before "a", "a10" before "a9"), keys
    /// written twice in the order written. An insertion sort in place: objects have a handful of keys.
    func sortFields() {
        guard fields.count > 1 else { return }
        for index in 1..<fields.count {
            let field = fields[index]
            var slot = index
            while slot > 0, field.key.utf8.lexicographicallyPrecedes(fields[slot - 1].key.utf8) {
                fields[slot] = fields[slot - 1]
                slot -= 1
            }
            if slot != index { fields[slot] = field }
        }
    }
}

/// The `Encoder` a value writes itself through; `node` is what it wrote.
final class JSONTreeEncoder: Encoder {
    let codingPath: [any CodingKey]
    let instants: SurgeJSONWriter.Instants
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var node: JSONNode?

    init(codingPath: [any CodingKey], instants: SurgeJSONWriter.Instants) {
        self.codingPath = codingPath
        self.instants = instants
    }

    /// The node of any value: the types `JSONEncoder` writes in its own way first, then the value's own encoding.
    /// The coding path is built only when the value needs an encoder of its own (leaves never read it).
    static func node<T: Encodable>(for value: T, codingPath: @autoclosure () -> [any CodingKey], instants: SurgeJSONWriter.Instants) throws
        -> JSONNode
    {
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == UUID.self { return .string(unsafeBitCast(value, to: UUID.self).key) }
        if T.self == Date.self { return .string(instants.format(unsafeBitCast(value, to: Date.self))) }
        if T.self == Int.self { return .number(String(unsafeBitCast(value, to: Int.self))) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Double.self { return try number(unsafeBitCast(value, to: Double.self), codingPath: codingPath()) }
        if T.self == URL.self, let url = value as? URL { return .string(url.absoluteString) }
        if T.self == Data.self, let data = value as? Data { return .string(data.base64EncodedString()) }
        if T.self == Decimal.self, let decimal = value as? Decimal { return .number(decimal.description) }
        let encoder = JSONTreeEncoder(codingPath: codingPath(), instants: instants)
        try value.encode(to: encoder)
        return encoder.node ?? .unwritten
    }

    /// A floating-point number as `JSONEncoder` writes it (a whole number without ".0"); NaN and infinities throw.
    static func number<F: BinaryFloatingPoint & CustomStringConvertible>(_ value: F, codingPath: @autoclosure () -> [any CodingKey]) throws
        -> JSONNode
    {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: codingPath(), debugDescription: "Unable to encode \(value) directly in JSON."))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .number(text)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: JSONObject
        if case .object(let existing) = node {
            object = existing
        } else {
            object = JSONObject()
            node = .object(object)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath, instants: instants))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: JSONArray
        if case .array(let existing) = node {
            array = existing
        } else {
            array = JSONArray()
            node = .array(array)
        }
        return UnkeyedContainer(array: array, codingPath: codingPath, instants: instants)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }

    private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let object: JSONObject
        let codingPath: [any CodingKey]
        let instants: SurgeJSONWriter.Instants

        private func set(_ node: JSONNode, _ key: Key) { object.fields.append((key.stringValue, node)) }

        mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
        mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { set(try JSONTreeEncoder.number(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { set(try JSONTreeEncoder.number(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { set(.number(String(value)), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { set(.number(String(value)), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { set(.number(String(value)), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { set(.number(String(value)), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { set(.number(String(value)), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { set(.number(String(value)), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.number(String(value)), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.number(String(value)), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.number(String(value)), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.number(String(value)), key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            set(try JSONTreeEncoder.node(for: value, codingPath: codingPath + [key], instants: instants), key)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            let nested = JSONObject()
            set(.object(nested), key)
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(object: nested, codingPath: codingPath + [key], instants: instants))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let nested = JSONArray()
            set(.array(nested), key)
            return UnkeyedContainer(array: nested, codingPath: codingPath + [key], instants: instants)
        }

        mutating func superEncoder() -> any Encoder { superEncoder(named: "super") }
        mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key.stringValue) }

        /// An encoder whose value lands under `name`, whatever it turns out to be.
        private func superEncoder(named name: String) -> any Encoder {
            let encoder = JSONTreeEncoder(codingPath: codingPath, instants: instants)
            object.fields.append((name, .later(encoder)))
            return encoder
        }
    }

    private struct UnkeyedContainer: UnkeyedEncodingContainer {
        let array: JSONArray
        let codingPath: [any CodingKey]
        let instants: SurgeJSONWriter.Instants
        var count: Int { array.items.count }

        private var index: any CodingKey { IndexKey(intValue: array.items.count) }

        mutating func encodeNil() throws { array.items.append(.null) }
        mutating func encode(_ value: Bool) throws { array.items.append(.bool(value)) }
        mutating func encode(_ value: String) throws { array.items.append(.string(value)) }
        mutating func encode(_ value: Double) throws { array.items.append(try JSONTreeEncoder.number(value, codingPath: codingPath + [index])) }
        mutating func encode(_ value: Float) throws { array.items.append(try JSONTreeEncoder.number(value, codingPath: codingPath + [index])) }
        mutating func encode(_ value: Int) throws { array.items.append(.number(String(value))) }
        mutating func encode(_ value: Int8) throws { array.items.append(.number(String(value))) }
        mutating func encode(_ value: Int16) throws { array.items.append(.number(String(value))) }
        mutating func encode(_ value: Int32) throws { array.items.append(.number(String(value))) }
        mutating func encode(_ value: Int64) throws { array.items.append(.number(String(value))) }
        mutating func encode(_ value: UInt) throws { array.items.append(.number(String(value))) }
        mutating func encode(_ value: UInt8) throws { array.items.append(.number(String(value))) }
        mutating func encode(_ value: UInt16) throws { array.items.append(.number(String(value))) }
        mutating func encode(_ value: UInt32) throws { array.items.append(.number(String(value))) }
        mutating func encode(_ value: UInt64) throws { array.items.append(.number(String(value))) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            array.items.append(try JSONTreeEncoder.node(for: value, codingPath: codingPath + [index], instants: instants))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let nested = JSONObject()
            let path = codingPath + [index]
            array.items.append(.object(nested))
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(object: nested, codingPath: path, instants: instants))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let nested = JSONArray()
            let path = codingPath + [index]
            array.items.append(.array(nested))
            return UnkeyedContainer(array: nested, codingPath: path, instants: instants)
        }

        mutating func superEncoder() -> any Encoder {
            let encoder = JSONTreeEncoder(codingPath: codingPath + [index], instants: instants)
            array.items.append(.later(encoder))
            return encoder
        }
    }

    private struct SingleValueContainer: SingleValueEncodingContainer {
        let encoder: JSONTreeEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        func encodeNil() throws { encoder.node = .null }
        func encode(_ value: Bool) throws { encoder.node = .bool(value) }
        func encode(_ value: String) throws { encoder.node = .string(value) }
        func encode(_ value: Double) throws { encoder.node = try JSONTreeEncoder.number(value, codingPath: codingPath) }
        func encode(_ value: Float) throws { encoder.node = try JSONTreeEncoder.number(value, codingPath: codingPath) }
        func encode(_ value: Int) throws { encoder.node = .number(String(value)) }
        func encode(_ value: Int8) throws { encoder.node = .number(String(value)) }
        func encode(_ value: Int16) throws { encoder.node = .number(String(value)) }
        func encode(_ value: Int32) throws { encoder.node = .number(String(value)) }
        func encode(_ value: Int64) throws { encoder.node = .number(String(value)) }
        func encode(_ value: UInt) throws { encoder.node = .number(String(value)) }
        func encode(_ value: UInt8) throws { encoder.node = .number(String(value)) }
        func encode(_ value: UInt16) throws { encoder.node = .number(String(value)) }
        func encode(_ value: UInt32) throws { encoder.node = .number(String(value)) }
        func encode(_ value: UInt64) throws { encoder.node = .number(String(value)) }
        func encode<T: Encodable>(_ value: T) throws { encoder.node = try JSONTreeEncoder.node(for: value, codingPath: codingPath, instants: encoder.instants) }
    }

    private struct IndexKey: CodingKey {
        var stringValue: String { "Index \(intValue ?? 0)" }
        var intValue: Int?
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { nil }
    }
}
