import Foundation

/// The one JSON dialect Surge speaks, in two precisions. Both write UUIDs lower-case (RFC 4122 output; Codable alone
/// would write `uuidString`, which is upper-case) and accept either case.
///
/// - `apiEncoder()`: HTTP bodies, public and internal. Instants are whole seconds, `2026-09-21T14:13:20Z`, the form
///   swift-openapi-generator's default transcoder (and most others) decode; the fraction is truncated, never rounded
///   up, so a shown instant is never later than the real one.
/// - `encoder()`: Kafka event payloads, what services store as JSON, and the positions inside opaque page cursors.
///   Instants keep milliseconds (`2026-09-21T14:13:20.375Z`): consumers order and de-duplicate by them, and a cursor
///   must resume exactly after the last row it saw.
///
/// Decoding accepts both forms everywhere, so clients may send fractional seconds. HTTP bodies have sorted keys; event
/// payloads reach Kafka through the outbox's `jsonb` column, so their key order and spacing are PostgreSQL's, and no
/// reader may depend on either.
public enum SurgeJSON {
    /// Events, storage and cursors: instants with milliseconds.
    public static func encoder() -> JSONEncoder {
        SurgeJSONEncoder(instants: Timestamp.format)
    }

    /// HTTP responses and problem documents: instants in whole seconds.
    public static func apiEncoder() -> JSONEncoder {
        SurgeJSONEncoder(instants: Timestamp.formatWholeSeconds)
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = Timestamp.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an RFC 3339 timestamp, got \(text)")
            }
            guard Timestamp.isSupported(date) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: Timestamp.unsupportedMessage(text))
            }
            return date
        }
        return decoder
    }

    /// `value` as an event payload or stored JSON (instants with milliseconds), what `encoder()` writes.
    public static func encode(_ value: some Encodable) throws -> Data {
        Data(try SurgeJSONWriter(instants: .milliseconds).encode(value))
    }

    /// `value` as an HTTP body (whole-second instants).
    public static func apiEncode(_ value: some Encodable) throws -> Data {
        Data(try SurgeJSONWriter(instants: .wholeSeconds).encode(value))
    }

    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decoder().decode(type, from: data)
    }
}

/// RFC 3339 timestamps in UTC with millisecond precision (what PostgreSQL's `timestamptz` keeps is finer; clients
/// need no more).
public enum Timestamp {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    /// `2026-09-21T14:13:20.375Z`: events, storage, logs.
    public static func format(_ date: Date) -> String {
        withFraction.format(date)
    }

    /// `2026-09-21T14:13:20Z`, the fraction truncated: what the public API writes.
    public static func formatWholeSeconds(_ date: Date) -> String {
        withoutFraction.format(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
    }

    public static func parse(_ text: String) -> Date? {
        (try? withFraction.parse(text)) ?? (try? withoutFraction.parse(text))
    }

    /// The instants Surge accepts: UTC years 1970 to 2200, from 1970-01-01T00:00:00Z up to (not including)
    /// 2201-01-01T00:00:00Z, the same years as `LocalDate.supportedYears`. The decoder refuses the rest; `parse` alone
    /// does not, so a caller parsing a query parameter checks `isSupported` itself.
    public static let supportedRange = Date(timeIntervalSince1970: 0)..<Date(timeIntervalSince1970: 7_289_654_400)

    public static func isSupported(_ date: Date) -> Bool { supportedRange.contains(date) }

    /// The field message for a well-formed timestamp outside `supportedRange`.
    public static func unsupportedMessage(_ text: String) -> String {
        "expected a timestamp from 1970-01-01T00:00:00Z to before 2201-01-01T00:00:00Z, got \(text)"
    }
}
