import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("JSON wire format: whole-second instants over HTTP, milliseconds in events, lower-case UUIDs", .tags(.unit), .kind(.unit))
struct JSONWireFormatTests {
    static let id = UUID(uuidString: "C4A11E00-0075-4000-8000-00000000ABCD")!
    static let instant = Date(timeIntervalSince1970: 1_790_000_000.875)

    struct Nested: Codable, Equatable {
        var id: UUID
        var at: Date
    }

    struct Shape: Codable, Equatable {
        var id: UUID
        var optional: UUID?
        var absent: UUID?
        var list: [UUID]
        var byName: [String: UUID]
        var nested: [Nested]
        var at: Date
        var label: String
        var count: Int
        var ratio: Double
    }

    static let shape = Shape(
        id: id, optional: id, absent: nil, list: [id, id], byName: ["a": id], nested: [Nested(id: id, at: instant)], at: instant,
        label: "C4A11E00-0075-4000-8000-00000000ABCD", count: 3, ratio: 0.1)

    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("HTTP bodies write instants as yyyy-MM-ddTHH:mm:ssZ, truncated, and every UUID lower-case at any depth")
    func apiEncoding() throws {
        let data = try SurgeJSON.apiEncode(Self.shape)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""at":"2026-09-21T14:13:20Z""#))
        #expect(!text.contains(".875"))
        let lower = "c4a11e00-0075-4000-8000-00000000abcd"
        let json = try Self.object(data)
        #expect(json["id"] as? String == lower)
        #expect(json["optional"] as? String == lower)
        #expect(json["absent"] == nil)
        #expect(json["list"] as? [String] == [lower, lower])
        #expect(json["byName"] as? [String: String] == ["a": lower])
        #expect((json["nested"] as? [[String: Any]])?.first?["id"] as? String == lower)
        #expect((json["nested"] as? [[String: Any]])?.first?["at"] as? String == "2026-09-21T14:13:20Z")
        // Only values typed UUID change: text a user wrote is sent back as written.
        #expect(json["label"] as? String == "C4A11E00-0075-4000-8000-00000000ABCD")
        #expect(json["count"] as? Int == 3)
        #expect(text.contains(#""ratio":0.1"#))
        #expect(text.hasPrefix(#"{"absent"#) == false && text.hasPrefix(#"{"at""#), "keys are sorted")
        #expect(String(decoding: try SurgeJSON.apiEncode(Self.id), as: UTF8.self) == "\"\(lower)\"")
        #expect(String(decoding: try SurgeJSON.apiEncode(["x": Date(timeIntervalSince1970: 0)]), as: UTF8.self) == #"{"x":"1970-01-01T00:00:00Z"}"#)
    }

    @Test("what the generator's default transcoder reads (ISO 8601 without fraction) reads every instant the API writes")
    func generatorDefaultDecodes() throws {
        // swift-openapi-runtime's ISO8601DateTranscoder: ISO8601DateFormatter with its default options.
        let formatter = ISO8601DateFormatter()
        for seconds in [0, 1_790_000_000.999, 1_790_000_000.001, 7_289_654_399.5] {
            let text = Timestamp.formatWholeSeconds(Date(timeIntervalSince1970: seconds))
            let parsed = try #require(formatter.date(from: text), "\(text)")
            #expect(parsed.timeIntervalSince1970 == seconds.rounded(.down))
        }
        #expect(formatter.date(from: Timestamp.format(Self.instant)) == nil, "the millisecond form is the one it refuses")
    }

    @Test("events, stored JSON and cursors keep milliseconds; UUIDs are lower-case there too")
    func eventEncoding() throws {
        let text = String(decoding: try SurgeJSON.encode(Self.shape), as: UTF8.self)
        #expect(text.contains(#""at":"2026-09-21T14:13:20.875Z""#))
        #expect(text.contains(#""id":"c4a11e00-0075-4000-8000-00000000abcd""#))
        #expect(try SurgeJSON.decode(Shape.self, from: try SurgeJSON.encode(Self.shape)) == Self.shape)
        let event = UserRegistered(
            userID: Self.id, displayName: "Sarah", timeZone: "Europe/Rome", locale: "it-IT", kind: .guest, registeredAt: Self.instant)
        let payload = String(decoding: try EventRecord(CloudEvent(source: "/surge/identity", time: Self.instant, data: event)).data, as: UTF8.self)
        #expect(payload.contains("c4a11e00-0075-4000-8000-00000000abcd"))
        #expect(!payload.contains("C4A11E00"))
        #expect(payload.contains("2026-09-21T14:13:20.875Z"))
    }

    @Test("decoding accepts fractional and whole seconds, and UUIDs in either case")
    func decoding() throws {
        let whole = #"{"id":"C4A11E00-0075-4000-8000-00000000ABCD","at":"2026-09-21T14:13:20Z"}"#
        let fractional = #"{"id":"c4a11e00-0075-4000-8000-00000000abcd","at":"2026-09-21T14:13:20.5Z"}"#
        #expect(try SurgeJSON.decode(Nested.self, from: Data(whole.utf8)) == Nested(id: Self.id, at: Date(timeIntervalSince1970: 1_790_000_000)))
        #expect(try SurgeJSON.decode(Nested.self, from: Data(fractional.utf8)) == Nested(id: Self.id, at: Date(timeIntervalSince1970: 1_790_000_000.5)))
    }
}
