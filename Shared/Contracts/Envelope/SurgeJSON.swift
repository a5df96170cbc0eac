import Foundation

/// The one JSON dialect Surge speaks on the wire and on Kafka: ISO 8601 timestamps with milliseconds. HTTP bodies
/// have sorted keys; event payloads reach Kafka through the outbox's `jsonb` column, so their key order and spacing
/// are PostgreSQL's, and no reader may depend on either.
public enum SurgeJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.format(date))
        }
        return encoder
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

    public static func encode(_ value: some Encodable) throws -> Data {
        try encoder().encode(value)
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

    public static func format(_ date: Date) -> String {
        withFraction.format(date)
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
