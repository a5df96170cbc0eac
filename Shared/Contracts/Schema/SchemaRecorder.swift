import Foundation

/// Decodes a type from nothing, recording the shape the type asks for. Each decode returns a placeholder value so
/// decoding can continue into nested types.
enum SchemaRecorder {
    static func describe<T: Decodable>(_ type: T.Type) throws -> (T, JSONSchema) {
        if let described = type as? any JSONSchemaDescribing.Type {
            return (described.schemaPlaceholder as! T, .named(String(reflecting: type), described.jsonSchema))
        }
        if let enumType = type as? any JSONSchemaEnum.Type {
            return (enumType.firstCase as! T, .of(enumType))
        }
        if let map = type as? any StringKeyedMap.Type {
            return (map.empty as! T, .map(try map.valueSchema()))
        }
        switch type {
        case is String.Type: return ("" as! T, .string())
        case is Bool.Type: return (false as! T, .boolean)
        case is Date.Type: return (Date(timeIntervalSince1970: 0) as! T, .instant)
        case is UUID.Type: return (UUID() as! T, .string(format: "uuid"))
        case is URL.Type: return (URL(string: "https://example.com")! as! T, .string(format: "uri"))
        case is Double.Type: return (0.0 as! T, .number)
        case is Float.Type: return (Float(0) as! T, .number)
        case is Decimal.Type: return (Decimal(0) as! T, .number)
        case is Int.Type: return (Int(0) as! T, .integer)
        case is Int8.Type: return (Int8(0) as! T, .integer)
        case is Int16.Type: return (Int16(0) as! T, .integer)
        case is Int32.Type: return (Int32(0) as! T, .integer)
        case is Int64.Type: return (Int64(0) as! T, .integer)
        case is UInt.Type: return (UInt(0) as! T, .integer)
        case is UInt8.Type: return (UInt8(0) as! T, .integer)
        case is UInt16.Type: return (UInt16(0) as! T, .integer)
        case is UInt32.Type: return (UInt32(0) as! T, .integer)
        case is UInt64.Type: return (UInt64(0) as! T, .integer)
        default:
            let decoder = RecordingDecoder()
            let value = try T(from: decoder)
            guard case .object(var properties) = decoder.schema else { return (value, decoder.schema) }
            let refinements = (type as? any JSONSchemaRefined.Type)?.fieldRefinements ?? [:]
            for (name, refinement) in refinements {
                guard let index = properties.firstIndex(where: { $0.name == name }) else {
                    throw DecodingError.keyNotFound(
                        SchemaKey(name), .init(codingPath: [], debugDescription: "\(type) refines \(name), which it does not decode"))
                }
                properties[index].schema = .refined(properties[index].schema, refinement)
            }
            let cases = (type as? any JSONSchemaCased.Type)?.fieldCases ?? []
            return (value, .named(String(reflecting: type), cases.isEmpty ? .object(properties) : .cased(.object(properties), cases)))
        }
    }
}

private struct SchemaKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private protocol StringKeyedMap {
    static var empty: Self { get }
    static func valueSchema() throws -> JSONSchema
}

extension Dictionary: StringKeyedMap where Key == String, Value: Decodable {
    static var empty: Self { [:] }
    static func valueSchema() throws -> JSONSchema { try SchemaRecorder.describe(Value.self).1 }
}

private func unsupported(_ codingPath: [any CodingKey]) -> DecodingError {
    .dataCorrupted(.init(codingPath: codingPath, debugDescription: "nested containers are not described; use a nested type"))
}

/// The decoder handed to types without a known schema. Keyed use makes an object; unkeyed use makes an array.
private final class RecordingDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    var properties: [JSONSchema.Property] = []
    var items: JSONSchema?
    var single: JSONSchema?
    var isArray = false

    var schema: JSONSchema {
        if let single { return single }
        if isArray { return .array(items ?? .object([])) }
        return .object(properties)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RecordingKeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        isArray = true
        return RecordingUnkeyedContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        RecordingSingleValueContainer(decoder: self)
    }

    func record(_ key: some CodingKey, _ schema: JSONSchema, required: Bool) {
        properties.removeAll { $0.name == key.stringValue }
        properties.append(.init(name: key.stringValue, schema: schema, required: required))
    }
}

private struct RecordingKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RecordingDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { false }

    private func field<T: Decodable>(_ type: T.Type, _ key: Key, required: Bool) throws -> T {
        let (value, schema) = try SchemaRecorder.describe(type)
        decoder.record(key, schema, required: required)
        return value
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try field(type, key, required: true) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try field(type, key, required: false) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try field(type, key, required: true) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try field(type, key, required: false) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try field(type, key, required: true) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try field(type, key, required: false) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try field(type, key, required: true) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try field(type, key, required: false) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try field(type, key, required: true) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try field(type, key, required: false) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try field(type, key, required: true) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try field(type, key, required: false) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try field(type, key, required: true) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try field(type, key, required: false) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try field(type, key, required: true) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try field(type, key, required: false) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try field(type, key, required: true) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try field(type, key, required: false) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try field(type, key, required: true) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try field(type, key, required: false) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try field(type, key, required: true) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try field(type, key, required: false) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try field(type, key, required: true) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try field(type, key, required: false) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try field(type, key, required: true) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try field(type, key, required: false) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try field(type, key, required: true) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try field(type, key, required: false) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try field(type, key, required: true) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try field(type, key, required: false) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw unsupported(codingPath)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw unsupported(codingPath) }
    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
}

private struct RecordingUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: RecordingDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { 1 }
    var currentIndex = 0
    var isAtEnd: Bool { currentIndex > 0 }

    mutating func decodeNil() throws -> Bool { false }

    private mutating func element<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, schema) = try SchemaRecorder.describe(type)
        decoder.items = schema
        currentIndex += 1
        return value
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try element(type) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try element(type) }
    mutating func decode(_ type: String.Type) throws -> String { try element(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try element(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try element(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try element(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try element(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try element(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try element(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try element(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try element(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try element(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try element(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try element(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try element(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw unsupported(codingPath)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw unsupported(codingPath) }
    mutating func superDecoder() throws -> any Decoder { decoder }
}

private struct RecordingSingleValueContainer: SingleValueDecodingContainer {
    let decoder: RecordingDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { false }

    private func value<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, schema) = try SchemaRecorder.describe(type)
        decoder.single = schema
        return value
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try value(type) }
    func decode(_ type: Bool.Type) throws -> Bool { try value(type) }
    func decode(_ type: String.Type) throws -> String { try value(type) }
    func decode(_ type: Double.Type) throws -> Double { try value(type) }
    func decode(_ type: Float.Type) throws -> Float { try value(type) }
    func decode(_ type: Int.Type) throws -> Int { try value(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try value(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try value(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try value(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try value(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try value(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try value(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try value(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try value(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try value(type) }
}
