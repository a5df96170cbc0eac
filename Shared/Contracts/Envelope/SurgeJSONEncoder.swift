import Foundation

/// `JSONEncoder` with Surge's two wire rules: instants as `instants` formats them, and UUIDs lower-case.
///
/// Codable encodes a UUID as its `uuidString`, which is upper-case, and `JSONEncoder` has no strategy for UUIDs. So the
/// value is encoded through `LowercaseUUIDs`, a thin proxy around the encoder `JSONEncoder` hands out: every UUID met at
/// any depth (a field, an array element, a dictionary value, an optional) is written as `uuidString.lowercased()`;
/// everything else goes to `JSONEncoder` unchanged, so numbers, dates, key order and escaping are exactly its own. Only
/// values typed `UUID` change: a string that happens to look like a UUID (a display name) is left as it is.
final class SurgeJSONEncoder: JSONEncoder, @unchecked Sendable {
    init(instants: @escaping @Sendable (Date) -> String) {
        super.init()
        outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(instants(date))
        }
    }

    override func encode<T: Encodable>(_ value: T) throws -> Data {
        try super.encode(LowercaseUUIDs(value: value))
    }
}

/// Encodes `value` with every UUID in it lower-case.
struct LowercaseUUIDs<Value: Encodable>: Encodable {
    let value: Value

    func encode(to encoder: any Encoder) throws {
        if Value.self == UUID.self {
            var container = encoder.singleValueContainer()
            try container.encode(unsafeBitCast(value, to: UUID.self).uuidString.lowercased())
        } else if LowercaseUUIDEncoder.isLeaf(Value.self) {
            // Dates, data, URLs and numbers go to the real encoder, which applies its strategies to them.
            var container = encoder.singleValueContainer()
            try container.encode(value)
        } else {
            try value.encode(to: LowercaseUUIDEncoder(base: encoder))
        }
    }
}

/// The proxy encoder: hands out containers that wrap `base`'s.
private struct LowercaseUUIDEncoder: Encoder {
    let base: any Encoder

    /// Values that hold no UUID and that `JSONEncoder` treats specially or writes directly.
    /// Decided on the static type (metatype identity, a pointer comparison): a dynamic cast per value, ten of them for
    /// every nested struct, was most of the cost of encoding a response.
    static func isLeaf<T: Encodable>(_: T.Type) -> Bool {
        T.self == String.self || T.self == Int.self || T.self == Bool.self || T.self == Double.self || T.self == Date.self
            || T.self == Data.self || T.self == URL.self || T.self == Decimal.self || T.self == Int64.self || T.self == Float.self
    }

    /// What a container writes for a generic value: the UUID lower-case, a leaf as is, anything else through the proxy.
    static func wrap<T: Encodable>(_ value: T) -> any Encodable {
        if T.self == UUID.self { return unsafeBitCast(value, to: UUID.self).uuidString.lowercased() }
        if isLeaf(T.self) { return value }
        return LowercaseUUIDs(value: value)
    }

    var codingPath: [any CodingKey] { base.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { base.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedProxy(base: base.container(keyedBy: type)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedProxy(base: base.unkeyedContainer())
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueProxy(base: base.singleValueContainer())
    }
}

private struct KeyedProxy<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var base: KeyedEncodingContainer<Key>

    var codingPath: [any CodingKey] { base.codingPath }

    mutating func encodeNil(forKey key: Key) throws { try base.encodeNil(forKey: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try base.encode(value, forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try base.encode(value, forKey: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try base.encode(LowercaseUUIDEncoder.wrap(value), forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedProxy<NestedKey>(base: base.nestedContainer(keyedBy: keyType, forKey: key)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        UnkeyedProxy(base: base.nestedUnkeyedContainer(forKey: key))
    }

    mutating func superEncoder() -> any Encoder { LowercaseUUIDEncoder(base: base.superEncoder()) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { LowercaseUUIDEncoder(base: base.superEncoder(forKey: key)) }
}

private struct UnkeyedProxy: UnkeyedEncodingContainer {
    var base: any UnkeyedEncodingContainer

    var codingPath: [any CodingKey] { base.codingPath }
    var count: Int { base.count }

    mutating func encodeNil() throws { try base.encodeNil() }
    mutating func encode(_ value: Bool) throws { try base.encode(value) }
    mutating func encode(_ value: String) throws { try base.encode(value) }
    mutating func encode(_ value: Double) throws { try base.encode(value) }
    mutating func encode(_ value: Float) throws { try base.encode(value) }
    mutating func encode(_ value: Int) throws { try base.encode(value) }
    mutating func encode(_ value: Int8) throws { try base.encode(value) }
    mutating func encode(_ value: Int16) throws { try base.encode(value) }
    mutating func encode(_ value: Int32) throws { try base.encode(value) }
    mutating func encode(_ value: Int64) throws { try base.encode(value) }
    mutating func encode(_ value: UInt) throws { try base.encode(value) }
    mutating func encode(_ value: UInt8) throws { try base.encode(value) }
    mutating func encode(_ value: UInt16) throws { try base.encode(value) }
    mutating func encode(_ value: UInt32) throws { try base.encode(value) }
    mutating func encode(_ value: UInt64) throws { try base.encode(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try base.encode(LowercaseUUIDEncoder.wrap(value))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedProxy<NestedKey>(base: base.nestedContainer(keyedBy: keyType)))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedProxy(base: base.nestedUnkeyedContainer())
    }

    mutating func superEncoder() -> any Encoder { LowercaseUUIDEncoder(base: base.superEncoder()) }
}

private struct SingleValueProxy: SingleValueEncodingContainer {
    var base: any SingleValueEncodingContainer

    var codingPath: [any CodingKey] { base.codingPath }

    mutating func encodeNil() throws { try base.encodeNil() }
    mutating func encode(_ value: Bool) throws { try base.encode(value) }
    mutating func encode(_ value: String) throws { try base.encode(value) }
    mutating func encode(_ value: Double) throws { try base.encode(value) }
    mutating func encode(_ value: Float) throws { try base.encode(value) }
    mutating func encode(_ value: Int) throws { try base.encode(value) }
    mutating func encode(_ value: Int8) throws { try base.encode(value) }
    mutating func encode(_ value: Int16) throws { try base.encode(value) }
    mutating func encode(_ value: Int32) throws { try base.encode(value) }
    mutating func encode(_ value: Int64) throws { try base.encode(value) }
    mutating func encode(_ value: UInt) throws { try base.encode(value) }
    mutating func encode(_ value: UInt8) throws { try base.encode(value) }
    mutating func encode(_ value: UInt16) throws { try base.encode(value) }
    mutating func encode(_ value: UInt32) throws { try base.encode(value) }
    mutating func encode(_ value: UInt64) throws { try base.encode(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try base.encode(LowercaseUUIDEncoder.wrap(value))
    }
}
