import Foundation
@testable import SurgeContracts
import SurgeTestSupport
import Testing

/// `SurgeJSONWriter` must write exactly what Foundation's `JSONEncoder` with Surge's options writes, in both
/// precisions (`SurgeJSON.apiEncoder()` and `SurgeJSON.encoder()`): every case here is encoded by both and compared byte
/// for byte.
@Suite("Surge JSON writer: byte for byte what JSONEncoder writes, for every shape a body or event takes", .tags(.unit), .kind(.unit))
struct SurgeJSONWriterTests {
    static func expectSame<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (reference, instants) in [(SurgeJSON.apiEncoder(), SurgeJSONWriter.Instants.wholeSeconds), (SurgeJSON.encoder(), .milliseconds)] {
            let expected = try reference.encode(value)
            let written = try SurgeJSONWriter(instants: instants).encode(value)
            #expect(
                String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self), "\(instants)",
                sourceLocation: sourceLocation)
        }
    }

    enum Kind: String, Codable { case week, month, allTime = "all-time" }

    enum Shape: Codable {
        case circle(radius: Double)
        case label(String, id: UUID)
        case none
    }

    struct Nested: Codable {
        var id: UUID
        var at: Date
        var note: String?
    }

    struct Everything: Codable {
        var text = "plain"
        var escaped = "quote \" backslash \\ slash / tab \t newline \n return \r bell \u{07} nul \u{00} unit \u{1F} del \u{7F} line \u{2028} é 漢字 🏆"
        var int = -42
        var biggest = Int64.max
        var smallest = Int64.min
        var unsigned: UInt64 = .max
        var byte: UInt8 = 255
        var short: Int16 = -300
        var wholeDouble = 100.0
        var fraction = 0.1
        var negativeZero = -0.0
        var large = 1e21
        var tiny = 1e-7
        var precise = 123_456_789.125
        var float: Float = 0.3
        var yes = true
        var no = false
        var id = UUID(uuidString: "C4A11E00-0075-4000-8000-00000000ABCD")!
        var at = Date(timeIntervalSince1970: 1_790_000_000.875)
        var beforeEpochFraction = Date(timeIntervalSince1970: 86_400.999)
        var url = URL(string: "https://cdn.example.com/a/b?c=d&e=f")!
        var data = Data([0, 1, 2, 250, 251, 252, 253, 254, 255])
        var missing: String? = nil
        var present: String? = "here"
        var optionalID: UUID? = UUID(uuidString: "00000000-0000-4000-8000-0000000000FF")
        var nested = Nested(id: UUID(uuidString: "ABCDEF00-0000-4000-8000-000000000001")!, at: Date(timeIntervalSince1970: 0), note: nil)
        var list = [Nested(id: UUID(), at: Date(timeIntervalSince1970: 1_000_000_000.5), note: "x")]
        var optionals: [Int?] = [1, nil, 3]
        var ids = [UUID(), UUID()]
        var dates = [Date(timeIntervalSince1970: 1_234_567_890)]
        var matrix = [[1, 2], [], [3]]
        var empty: [String] = []
        var emptyObject: [String: Int] = [:]
        var counts = ["b": 1, "a": 2, "B": 3]
        var byNumber = [10: "ten", 9: "nine", 100: "hundred"]
        var byID = [UUID(uuidString: "00000000-0000-4000-8000-000000000001")!: "one"]
        var kinds: [Kind] = [.week, .allTime]
        var shapes: [Shape] = [.circle(radius: 2.5), .label("hi", id: UUID(uuidString: "00000000-0000-4000-8000-000000000002")!), .none]
        var nestedOptional: Nested?? = .some(nil)
    }

    @Test("every field kind: strings and their escapes, numbers, instants, ids, URLs, data, optionals, collections, enums")
    func everything() throws {
        try Self.expectSame(Everything())
    }

    @Test("keys in JSONEncoder's sorted order (by UTF-8 bytes on Linux): case, digits, punctuation, non-ASCII")
    func keyOrder() throws {
        let keys = [
            "b", "B", "a10", "a9", "A1", "a01", "a1", "topPercent", "topics", "_x", "x_", "a-b", "ab", "Z", "é", "e", "aB", "aa", "Aa",
            "item2", "item10", "item02", "ID", "id", "Id", "userID", "username", "userId", "1", "10", "9", "", " ", "a b", "a.b", "a~", "~",
            "Ωmega", "émile", "zz9", "zz10a", "zz10",
        ]
        try Self.expectSame(Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) }))
        for (a, b) in zip(keys, keys.dropFirst()) {
            try Self.expectSame([a: 1, b: 2])
        }
    }

    /// A type writing itself through every container the protocol offers.
    struct Handwritten: Encodable {
        enum Keys: String, CodingKey { case first, inner, list, parent }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("one", forKey: .first)
            var inner = container.nestedContainer(keyedBy: Keys.self, forKey: .inner)
            try inner.encodeNil(forKey: .first)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try list.encode(1.5)
            var deeper = list.nestedContainer(keyedBy: Keys.self)
            try deeper.encode(true, forKey: .first)
            var deepest = list.nestedUnkeyedContainer()
            try deepest.encode("x")
            try list.encodeNil()
            let parent = container.superEncoder(forKey: .parent)
            var parentContainer = parent.singleValueContainer()
            try parentContainer.encode(7)
        }
    }

    struct Silent: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    @Test("nested, unkeyed and super encoders, a value that writes nothing (refused at the top), top-level fragments")
    func containers() throws {
        try Self.expectSame(Handwritten())
        #expect(throws: EncodingError.self) { try SurgeJSONWriter(instants: .wholeSeconds).encode(Silent()) }
        #expect(throws: EncodingError.self) { try SurgeJSON.apiEncoder().encode(Silent()) }
        try Self.expectSame(["a": Silent()])
        try Self.expectSame("top-level string")
        try Self.expectSame(12.5)
        try Self.expectSame([UUID(), UUID()])
        try Self.expectSame(Optional<Int>.none)
    }

    @Test("NaN and infinity are refused, as JSONEncoder refuses them")
    func nonFinite() {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { try SurgeJSONWriter(instants: .milliseconds).encode(["score": value]) }
            #expect(throws: EncodingError.self) { try SurgeJSON.apiEncoder().encode(["score": value]) }
        }
    }
}
