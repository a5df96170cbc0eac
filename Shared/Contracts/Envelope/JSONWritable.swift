import Foundation

/// A value that writes its own JSON: the bytes `SurgeJSONWriter` writes for it through `Encodable` (keys in the same
/// sorted order, the same numbers, instants, escapes and omitted nils), without building a tree. For the few responses
/// read so often that the `Encodable` machinery costs more than the answer (a leaderboard page spent a fifth of its
/// service's CPU in it). Each conformance has a test comparing its bytes with `SurgeJSONWriter.encode`'s.
public protocol JSONWritable: Encodable {
    /// Writes the value, keys in `JSONEncoder`'s `.sortedKeys` order (by UTF-8 bytes).
    func write(to json: inout JSONBytes) throws
}

/// JSON written straight to bytes. Every key and value is preceded by the comma it needs, so objects and arrays nest
/// without bookkeeping by the caller.
public struct JSONBytes {
    public private(set) var bytes: [UInt8] = []
    let instants: SurgeJSONWriter.Instants
    private var needsComma = false

    init(instants: SurgeJSONWriter.Instants) {
        self.instants = instants
        // A leaderboard page of 20 is about 3 KiB: one allocation rather than growing three times.
        bytes.reserveCapacity(4096)
    }

    public mutating func object(_ body: (inout JSONBytes) throws -> Void) rethrows {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        try body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func array<Items: Sequence>(_ items: Items) throws where Items.Element: JSONWritable {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for item in items { try item.write(to: &self) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A key of plain ASCII letters (nothing to escape).
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func value(_ text: String) {
        separate()
        JSONNode.writeString(text, to: &bytes)
        needsComma = true
    }

    public mutating func value(_ number: Int) {
        raw(String(number))
    }

    /// NaN and infinities throw, as `JSONEncoder` does.
    public mutating func value(_ number: Double) throws {
        // A whole number below 10^15 is written as the integer it is, as `description` writes it less its ".0" (from
        // 2^53 on, `description` switches to exponents); -0 keeps its sign.
        if number.magnitude < 1e15, number.rounded(.towardZero) == number, !(number == 0 && number.sign == .minus) {
            return raw(String(Int64(number)))
        }
        guard case .number(let text) = try JSONTreeEncoder.number(number, codingPath: []) else { return }
        raw(text)
    }

    public mutating func value(_ flag: Bool) {
        raw(flag ? "true" : "false")
    }

    /// Lower-case, as `UUID.key` writes it, without formatting a string first: the 38 bytes (quotes included) are
    /// formed on the stack and appended at once.
    public mutating func value(_ id: UUID) {
        separate()
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 38) { text in
            var position = 0
            func put(_ byte: UInt8) {
                text[position] = byte
                position += 1
            }
            put(UInt8(ascii: "\""))
            withUnsafeBytes(of: id.uuid) { raw in
                for (offset, byte) in raw.enumerated() {
                    if offset == 4 || offset == 6 || offset == 8 || offset == 10 { put(UInt8(ascii: "-")) }
                    put(Self.hexDigits[Int(byte >> 4)])
                    put(Self.hexDigits[Int(byte & 0x0F)])
                }
            }
            put(UInt8(ascii: "\""))
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<position]))
        }
        needsComma = true
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    public mutating func value(_ instant: Date) {
        value(instants.format(instant))
    }

    public mutating func field(_ name: StaticString, _ text: String?) {
        guard let text else { return }
        key(name)
        value(text)
    }

    public mutating func field(_ name: StaticString, _ number: Int?) {
        guard let number else { return }
        key(name)
        value(number)
    }

    public mutating func field(_ name: StaticString, _ number: Double) throws {
        key(name)
        try value(number)
    }

    public mutating func field(_ name: StaticString, _ flag: Bool) {
        key(name)
        value(flag)
    }

    public mutating func field(_ name: StaticString, _ id: UUID) {
        key(name)
        value(id)
    }

    public mutating func field(_ name: StaticString, _ instant: Date?) {
        guard let instant else { return }
        key(name)
        value(instant)
    }

    public mutating func field(_ name: StaticString, _ nested: (some JSONWritable)?) throws {
        guard let nested else { return }
        key(name)
        try nested.write(to: &self)
    }

    public mutating func field<Items: Sequence>(_ name: StaticString, _ items: Items) throws where Items.Element: JSONWritable {
        key(name)
        try array(items)
    }

    private mutating func raw(_ text: String) {
        separate()
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }
}

extension SurgeJSONWriter {
    /// The value's JSON as it writes itself.
    public func write(_ value: some JSONWritable) throws -> [UInt8] {
        var json = JSONBytes(instants: instants)
        try value.write(to: &json)
        return json.bytes
    }
}
