import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("CloudEvents envelope and Kafka binding", .tags(.unit), .kind(.unit))
struct CloudEventTests {
    let payload = UserRegistered(
        userID: UUID(), displayName: "Sarah", timeZone: "Europe/Rome", locale: "it-IT", kind: .guest,
        registeredAt: Date(timeIntervalSince1970: 1_790_000_000.25))

    @Test("a record survives the Kafka binding: headers, key and data")
    func roundTrip() throws {
        let event = CloudEvent(
            source: "/surge/identity", time: Date(timeIntervalSince1970: 1_790_000_000.5),
            trace: TraceContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", requestID: "req-1"),
            data: payload)
        let record = try EventRecord(event)
        let received = try EventRecord(kafkaKey: record.kafkaKey, value: record.data, headers: record.kafkaHeaders)
        #expect(received == record)
        let decoded = try received.decode(as: UserRegistered.self)
        #expect(decoded == event)
        #expect(decoded.partitionKey == payload.userID.key)
        let headers = Dictionary(uniqueKeysWithValues: record.kafkaHeaders.map { ($0.name, String(decoding: $0.value, as: UTF8.self)) })
        #expect(headers["ce_specversion"] == "1.0")
        #expect(headers["ce_type"] == "surge.identity.user.registered.v1")
        #expect(headers["ce_time"] == "2026-09-21T14:13:20.500Z")
        #expect(headers["ce_traceparent"] == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        #expect(headers["content-type"] == "application/json")
        #expect(String(decoding: record.kafkaKey, as: UTF8.self) == payload.userID.key)
    }

    @Test("timestamps keep milliseconds")
    func timestamps() throws {
        let date = Date(timeIntervalSince1970: 1_790_000_000.375)
        let text = Timestamp.format(date)
        #expect(text == "2026-09-21T14:13:20.375Z")
        let parsed = try #require(Timestamp.parse(text))
        #expect(parsed == date)
        #expect(Timestamp.parse("2026-09-21T14:13:20Z") == Date(timeIntervalSince1970: 1_790_000_000))
        #expect(Timestamp.parse("yesterday") == nil)
    }

    @Test("a record without required attributes is refused with the header it lacks")
    func missingHeaders() throws {
        let record = try EventRecord(CloudEvent(source: "/surge/identity", time: Date(), data: payload))
        let withoutType = record.kafkaHeaders.filter { $0.name != "ce_type" }
        #expect(throws: EventDecodingError.missingHeader("ce_type")) {
            try EventRecord(kafkaKey: nil, value: record.data, headers: withoutType)
        }
        #expect(throws: EventDecodingError.missingHeader("ce_specversion")) {
            try EventRecord(kafkaKey: nil, value: Data("garbage".utf8), headers: [])
        }
    }

    @Test("decoding as the wrong type or from bad data fails")
    func wrongType() throws {
        var record = try EventRecord(CloudEvent(source: "/surge/identity", time: Date(), data: payload))
        record.type = "surge.identity.something.else.v1"
        #expect(throws: EventDecodingError.self) { try record.decode(as: UserRegistered.self) }
        record.type = UserRegistered.eventType
        record.data = Data("{\"userID\": 1}".utf8)
        #expect(throws: DecodingError.self) { try record.decode(as: UserRegistered.self) }
    }

    @Test("base64url uses - and _ without padding, and reads what it wrote")
    func base64URL() {
        let bytes = Data([0xfb, 0xff, 0xbf, 0x00, 0x10])
        let text = Base64URL.encode(bytes)
        #expect(text == "-_-_ABA")
        #expect(Base64URL.decode(text) == bytes)
        #expect(Base64URL.decode("-_-_ABA=") == bytes)
        #expect(Base64URL.decode("") == Data())
        #expect(Base64URL.decode("not base64!") == nil)
        #expect(Base64URL.decode("+/+/ABA") == nil, "standard base64's alphabet is not base64url's")
        for length in 0...40 {
            let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 251) })
            let text = Base64URL.encode(data)
            #expect(text == data.base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: ""))
            #expect(Base64URL.decode(text) == data)
        }
    }
}
