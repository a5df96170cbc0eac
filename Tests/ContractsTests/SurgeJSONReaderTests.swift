import Foundation
@testable import SurgeContracts
import SurgeTestSupport
import Testing

/// `SurgeJSONReader` must read what `SurgeJSON.decoder()` (`JSONDecoder`) reads, to the same values, and refuse
/// what it refuses: every case here is decoded by both.
@Suite("Surge JSON reader: the values JSONDecoder reads, and its refusals", .tags(.unit), .kind(.unit))
struct SurgeJSONReaderTests {
    typealias Everything = SurgeJSONWriterTests.Everything

    /// Decodes `json` with both; both succeed with values that encode to the same bytes, or both throw.
    static func expectSame<T: Codable>(_ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let data = Data(json.utf8)
        let expected = Result { try SurgeJSON.decoder().decode(type, from: data) }
        let read = Result { try SurgeJSONReader().decode(type, from: data) }
        switch (expected, read) {
        case (.success(let expected), .success(let read)):
            #expect(try SurgeJSON.encode(read) == SurgeJSON.encode(expected), "\(json)", sourceLocation: sourceLocation)
        case (.failure, .failure):
            break
        case (.success, .failure(let error)):
            Issue.record("the reader refused what JSONDecoder reads: \(json): \(error)", sourceLocation: sourceLocation)
        case (.failure(let error), .success):
            Issue.record("the reader read what JSONDecoder refuses: \(json) (\(error))", sourceLocation: sourceLocation)
        }
    }

    @Test("every field kind, as Surge writes it and as JSONEncoder writes it")
    func everything() throws {
        for json in [try SurgeJSON.encode(Everything()), try SurgeJSON.apiEncode(Everything()), try JSONEncoder().encode(Everything())] {
            try Self.expectSame(Everything.self, String(decoding: json, as: UTF8.self))
        }
    }

    @Test("every event type's example payload reads to the same event")
    func catalogueExamples() throws {
        for payload in EventCatalogue.all {
            try Self.roundTrip(payload)
        }
    }

    static func roundTrip<Payload: EventPayload>(_ payload: Payload.Type) throws {
        let data = try SurgeJSON.encode(Payload.example.data)
        #expect(try SurgeJSONReader().decode(Payload.self, from: data) == SurgeJSON.decoder().decode(Payload.self, from: data), "\(Payload.eventType)")
    }

    struct Numbers: Codable {
        var int: Int
        var small: Int8
        var unsigned: UInt16
        var double: Double
        var float: Float
    }

    @Test("numbers: integral values written with a fraction or exponent, out-of-range and non-integral values, precision", arguments: [
        #"{"int":1,"small":-128,"unsigned":65535,"double":0.1,"float":0.3}"#,
        #"{"int":1.0,"small":1e2,"unsigned":2E3,"double":-0,"float":1e-45}"#,
        #"{"int":1.5,"small":1,"unsigned":1,"double":1,"float":1}"#,
        #"{"int":1,"small":128,"unsigned":1,"double":1,"float":1}"#,
        #"{"int":1,"small":1,"unsigned":-1,"double":1,"float":1}"#,
        #"{"int":9223372036854775807,"small":1,"unsigned":1,"double":1.7976931348623157e308,"float":1}"#,
        #"{"int":9223372036854775808,"small":1,"unsigned":1,"double":1,"float":1}"#,
        #"{"int":1,"small":1,"unsigned":1,"double":1e400,"float":1}"#,
        #"{"int":1,"small":1,"unsigned":1,"double":123456789012345678901234567890,"float":1}"#,
        #"{"int":01,"small":1,"unsigned":1,"double":1,"float":1}"#,
        #"{"int":1,"small":1,"unsigned":1,"double":.5,"float":1}"#,
        #"{"int":1,"small":1,"unsigned":1,"double":1.,"float":1}"#,
        #"{"int":+1,"small":1,"unsigned":1,"double":1,"float":1}"#,
        #"{"int":"1","small":1,"unsigned":1,"double":1,"float":1}"#,
        #"{"int":null,"small":1,"unsigned":1,"double":1,"float":1}"#,
        #"{"small":1,"unsigned":1,"double":1,"float":1}"#,
    ])
    func numbers(json: String) throws {
        try Self.expectSame(Numbers.self, json)
    }

    struct Texts: Codable {
        var text: String
        var id: UUID?
        var at: Date?
        var url: URL?
        var data: Data?
    }

    @Test("strings, escapes, ids, instants, URLs and data, and what is wrong with them", arguments: [
        #"{"text":"a\"b\\c\/d\b\f\n\r\t\u00e9\u6f22\ud83c\udfc6"}"#,
        #"{"text":"caf\u00C9 \u0000 end"}"#,
        #"{"text":"plain é 漢字 🏆", "id":"C4A11E00-0075-4000-8000-00000000ABCD", "at":"2026-09-21T14:13:20.375Z"}"#,
        #"{"text":"x", "at":"2026-09-21T16:13:20+02:00", "url":"https://cdn.example.com/a?b=c", "data":"AAEC+vv8/f7/"}"#,
        #"{"text":"x", "at":"2026-09-21T14:13:20Z"}"#,
        #"{"text":"x", "at":"1969-12-31T23:59:59Z"}"#,
        #"{"text":"x", "at":"2201-01-01T00:00:00Z"}"#,
        #"{"text":"x", "at":"yesterday"}"#,
        #"{"text":"x", "id":"not-a-uuid"}"#,
        #"{"text":"x", "id":null, "at":null, "url":null, "data":null}"#,
        #"{"text":"x", "data":"not base64!"}"#,
        #"{"text":"\ud83c"}"#,
        #"{"text":"\udfc6"}"#,
        #"{"text":"\u12"}"#,
        #"{"text":"\x"}"#,
        "{\"text\":\"tab\there\"}",
        "{\"text\":\"new\nline\"}",
        #"{"text":"unterminated}"#,
        #"{"text":1}"#,
        #"{"text":"x","text":"y"}"#,
    ])
    func texts(json: String) throws {
        try Self.expectSame(Texts.self, json)
    }

    @Test("documents that are not JSON, or not the expected shape, are refused by both", arguments: [
        "", " ", "{", "}", "[]", "null", "{\"text\":\"x\"} extra", "{text:\"x\"}", "{\"text\" \"x\"}",
        "{\"text\":\"x\"}\n", " {\"text\":\"x\"} ", "{\"text\":\"x\"  ,  \"id\" : null }", "[{\"text\":\"x\"}]", "{\"text\":tru}",
    ])
    func documents(json: String) throws {
        try Self.expectSame(Texts.self, json)
    }

    @Test("a trailing comma, which JSONDecoder lets through, is refused: it is not JSON")
    func trailingComma() {
        #expect(throws: DecodingError.self) { try SurgeJSONReader().decode(Texts.self, from: Data(#"{"text":"x",}"#.utf8)) }
        #expect(throws: DecodingError.self) { try SurgeJSONReader().decode([Int].self, from: Data("[1,]".utf8)) }
    }

    @Test("invalid UTF-8 in a string is refused")
    func invalidUTF8() {
        var bytes = Array(#"{"text":"ab"}"#.utf8)
        bytes.insert(0xFF, at: 10)
        #expect(throws: DecodingError.self) { try SurgeJSONReader().decode(Texts.self, from: Data(bytes)) }
        #expect(throws: (any Error).self) { try SurgeJSON.decoder().decode(Texts.self, from: Data(bytes)) }
    }

    @Test("nesting deeper than 512 is refused, not a stack overflow")
    func deepNesting() {
        let json = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: DecodingError.self) { try SurgeJSONReader().decode([JSONValue].self, from: Data(json.utf8)) }
    }

    @Test("a missing key and a wrong type are named in the error's coding path")
    func errorPaths() throws {
        let json = Data(#"{"list":[{"id":"00000000-0000-4000-8000-000000000001","at":"2026-01-01T00:00:00Z","note":7}]}"#.utf8)
        struct Holder: Codable { var list: [SurgeJSONWriterTests.Nested] }
        do {
            _ = try SurgeJSONReader().decode(Holder.self, from: json)
            Issue.record("decoded a number as a string")
        } catch let DecodingError.typeMismatch(_, context) {
            #expect(context.codingPath.map(\.stringValue) == ["list", "Index 0", "note"])
        }
    }
}

@Suite("Timestamps", .tags(.unit), .kind(.unit))
struct TimestampRoundTripTests {
    @Test("a millisecond timestamp Surge wrote reads back to the same text, for every millisecond of a second")
    func everyMillisecond() throws {
        for second in ["2026-11-29T16:31:40", "2001-03-01T00:00:00", "2099-12-31T23:59:59", "1970-01-01T00:00:01"] {
            let failing = try (0..<1000).filter { millisecond in
                let text = second + "." + String(format: "%03d", millisecond) + "Z"
                return Timestamp.format(try #require(Timestamp.parse(text))) != text
            }
            #expect(failing.isEmpty, "\(second): \(failing.count) of 1000 read back as another millisecond, e.g. \(failing.prefix(3))")
        }
    }
}
