import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

/// Surge's JSON accepts dates and instants in the years 1970 to 2200 only; the rest is a decoding error (a field error
/// on HTTP, a dead letter on Kafka), never a value that reaches calendar arithmetic.
@Suite("Date bounds on the wire", .tags(.unit), .kind(.unit))
struct DateBoundsTests {
    struct Day: Codable, Equatable { var day: LocalDate }
    struct Moment: Codable, Equatable { var at: Date }

    func day(_ text: String) -> LocalDate? { try? SurgeJSON.decode(Day.self, from: Data(#"{"day":"\#(text)"}"#.utf8)).day }
    func moment(_ text: String) -> Date? { try? SurgeJSON.decode(Moment.self, from: Data(#"{"at":"\#(text)"}"#.utf8)).at }

    @Test("dates decode from 1970-01-01 to 2200-12-31 only", arguments: [
        ("1969-12-31", false), ("1970-01-01", true), ("2026-11-21", true), ("2200-12-31", true), ("2201-01-01", false),
        ("9999-12-31", false), ("10000-01-01", false), ("0001-01-01", false),
    ])
    func dates(_ text: String, _ accepted: Bool) {
        #expect((day(text) != nil) == accepted, "\(text)")
        if accepted { #expect(day(text)?.description == text) }
    }

    @Test("instants decode from 1970-01-01T00:00:00Z to before 2201-01-01T00:00:00Z only", arguments: [
        ("1969-12-31T23:59:59.999Z", false), ("1969-12-31T00:00:00Z", false), ("1970-01-01T00:00:00Z", true), ("2026-11-21T10:00:00.5Z", true),
        ("2200-12-31T23:59:59.999Z", true), ("2200-12-31T00:00:00Z", true), ("2201-01-01T00:00:00Z", false), ("9999-12-31T23:59:59Z", false),
        ("10000-01-01T00:00:00Z", false), ("0001-01-01T00:00:00Z", false),
        // The bound is on the instant, in UTC: 2201-01-01T00:30+01:00 is still 2200, 1970-01-01T00:30+01:00 is still 1969.
        ("2201-01-01T00:30:00+01:00", true), ("1969-12-31T23:30:00-01:00", true), ("1970-01-01T00:30:00+01:00", false),
    ])
    func instants(_ text: String, _ accepted: Bool) {
        #expect((moment(text) != nil) == accepted, "\(text)")
    }

    @Test("a refused date or instant is a data-corrupted error at its field, saying what is accepted")
    func errorsNameTheField() throws {
        do {
            _ = try SurgeJSON.decode(Day.self, from: Data(#"{"day":"9999-12-31"}"#.utf8))
            Issue.record("decoded")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map(\.stringValue) == ["day"])
            #expect(context.debugDescription == "expected a date from 1970-01-01 to 2200-12-31, got 9999-12-31")
        }
        do {
            _ = try SurgeJSON.decode(Moment.self, from: Data(#"{"at":"10000-01-01T00:00:00Z"}"#.utf8))
            Issue.record("decoded")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map(\.stringValue) == ["at"])
            #expect(context.debugDescription.contains("1970-01-01T00:00:00Z"))
        }
    }

    @Test("encoding is not bounded: what the arithmetic saturates to can still be written")
    func encoding() throws {
        let data = try SurgeJSON.encode(Day(day: .latest))
        #expect(String(decoding: data, as: UTF8.self) == #"{"day":"9999-12-31"}"#)
    }

    @Test("an event carrying a date out of range does not decode, so the consumer dead-letters it instead of crashing")
    func eventsOutOfRange() throws {
        let payload = UserRegistered(
            userID: UUID(), displayName: "Sarah", timeZone: "Europe/Rome", locale: "it-IT", kind: .guest,
            registeredAt: Date(timeIntervalSince1970: 1_790_000_000.25))
        var record = try EventRecord(CloudEvent(source: "/surge/identity", time: Date(), data: payload))
        #expect(throws: Never.self) { try record.decode(as: UserRegistered.self) }
        let text = String(decoding: record.data, as: UTF8.self)
        #expect(text.contains("2026-09-21T14:13:20.250Z"))
        record.data = Data(text.replacingOccurrences(of: "2026-09-21T14:13:20.250Z", with: "10000-01-01T00:00:00Z").utf8)
        #expect(throws: (any Error).self) { try record.decode(as: UserRegistered.self) }
    }
}
