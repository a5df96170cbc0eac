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
/// payloads reach Kafka as encoded here (the outbox keeps them as `json` text), but no reader may depend on their key
/// order or spacing.
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

    /// An event payload or stored JSON: what `decoder()` reads, read by `SurgeJSONReader`.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try SurgeJSONReader().decode(type, from: data)
    }
}

/// RFC 3339 timestamps in UTC with millisecond precision (what PostgreSQL's `timestamptz` keeps is finer; clients
/// need no more).
///
/// The two forms Surge writes (`…:20Z` and `…:20.375Z`, years 1000 to 9999) are formatted and parsed by hand, to the
/// same bits as `Date.ISO8601FormatStyle` (whose Calendar round trips cost more than the rest of an event's decoding);
/// other RFC 3339 text goes to the format style once its fields are checked: the style rolls a leap second
/// (`23:59:60`), `24:00`, a 60th minute or a 30 February over into the next minute, day or month, and reads offsets
/// without their colon, where Surge refuses them all (its clocks have no leap seconds).
public enum Timestamp {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    /// `2026-09-21T14:13:20.375Z`: events, storage, logs. Written as the format style writes the next representable
    /// instant up: what `parse` read from `….375Z` is the nearest `Double`, often a hair below .375, and a plain
    /// truncation would write it back as `….374Z` (a stored or relayed instant would lose a millisecond at each pass).
    public static func format(_ date: Date) -> String {
        let nudged = Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.nextUp)
        return fastFormat(nudged, milliseconds: true) ?? withFraction.format(nudged)
    }

    /// `2026-09-21T14:13:20Z`, the fraction truncated: what the public API writes.
    public static func formatWholeSeconds(_ date: Date) -> String {
        let whole = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        return fastFormat(whole, milliseconds: false) ?? withoutFraction.format(whole)
    }

    public static func parse(_ text: String) -> Date? {
        var text = text
        if let date = text.withUTF8({ fastParse($0) }) { return date }
        guard text.withUTF8({ isWellFormed($0) }) else { return nil }
        return (try? withFraction.parse(text)) ?? (try? withoutFraction.parse(text))
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` naming a real date (a year of four digits or more: what is out of
    /// range is the caller's to refuse, naming its field), hours 00-23, minutes and seconds 00-59.
    private static func isWellFormed(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        func isDigit(_ index: Int) -> Bool { index < text.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[index]) }
        func number(_ start: Int, _ digits: Int) -> Int? {
            guard (start..<start + digits).allSatisfy(isDigit) else { return nil }
            return (start..<start + digits).reduce(0) { $0 * 10 + Int(text[$1] - UInt8(ascii: "0")) }
        }
        func separator(_ index: Int, _ character: Unicode.Scalar) -> Bool { index < text.count && text[index] == UInt8(ascii: character) }
        var yearDigits = 0
        while isDigit(yearDigits) { yearDigits += 1 }
        guard (4...9).contains(yearDigits), let year = number(0, yearDigits) else { return false }
        let shift = yearDigits - 4
        guard separator(4 + shift, "-"), separator(7 + shift, "-"), separator(10 + shift, "T"), separator(13 + shift, ":"),
            separator(16 + shift, ":"), let month = number(5 + shift, 2), let day = number(8 + shift, 2),
            let hour = number(11 + shift, 2), let minute = number(14 + shift, 2), let second = number(17 + shift, 2),
            hour < 24, minute < 60, second < 60, (1...12).contains(month), day >= 1
        else { return false }
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let daysInMonth = month == 2 ? (isLeap ? 29 : 28) : [4, 6, 9, 11].contains(month) ? 30 : 31
        guard day <= daysInMonth else { return false }
        var index = 19 + shift
        if separator(index, ".") {
            index += 1
            guard isDigit(index) else { return false }
            while isDigit(index) { index += 1 }
        }
        if separator(index, "Z") { return index == text.count - 1 }
        guard separator(index, "+") || separator(index, "-"), text.count == index + 6, separator(index + 3, ":"),
            let offsetHours = number(index + 1, 2), let offsetMinutes = number(index + 4, 2)
        else { return false }
        return offsetHours < 24 && offsetMinutes < 60
    }

    /// Seconds from 1970 to 2001, Foundation's reference date.
    private static let referenceOffset = 978_307_200
    /// Within about 48 days of the reference date the format style's sum of seconds and fraction can differ from the
    /// correctly rounded one in the last bit (measured: never beyond 2^22 s): those instants go to the format style.
    private static let nearReference = 1 << 23

    /// The instant's fields as the format style computes them: whole seconds since the reference date, rounded down,
    /// and the milliseconds of what remains, truncated. Nil outside years 1000-9999.
    private static func fastFormat(_ date: Date, milliseconds: Bool) -> String? {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 2.5e11, abs(interval) >= Double(nearReference) else { return nil }
        let wholeSeconds = interval.rounded(.down)
        var millisecond = Int((interval - wholeSeconds) * 1000)
        millisecond = min(max(millisecond, 0), 999)
        let seconds = Int(wholeSeconds) + referenceOffset
        let (dayNumber, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let day = secondOfDay < 0 ? dayNumber - 1 : dayNumber
        let second = secondOfDay < 0 ? secondOfDay + 86_400 : secondOfDay
        let date = LocalDate(dayNumber: day)
        guard (1000...9999).contains(date.year), date.dayNumber == day else { return nil }
        return String(unsafeUninitializedCapacity: 24) { text in
            var position = 0
            func put(_ value: Int, digits: Int) {
                var value = value
                for index in stride(from: digits - 1, through: 0, by: -1) {
                    text[position + index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                position += digits
            }
            func put(_ character: Unicode.Scalar) {
                text[position] = UInt8(ascii: character)
                position += 1
            }
            put(date.year, digits: 4)
            put("-")
            put(date.month, digits: 2)
            put("-")
            put(date.day, digits: 2)
            put("T")
            put(second / 3600, digits: 2)
            put(":")
            put(second / 60 % 60, digits: 2)
            put(":")
            put(second % 60, digits: 2)
            if milliseconds {
                put(".")
                put(millisecond, digits: 3)
            }
            put("Z")
            return position
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.sssZ` with a valid date and time; nil for anything else (which
    /// the format style then reads, or refuses).
    private static func fastParse(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        guard text.count == 20 || text.count == 24 else { return nil }
        func number(_ start: Int, _ digits: Int) -> Int? {
            var value = 0
            for index in start..<start + digits {
                let digit = Int(text[index]) - Int(UInt8(ascii: "0"))
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        func separator(_ index: Int, _ character: Unicode.Scalar) -> Bool { text[index] == UInt8(ascii: character) }
        guard separator(4, "-"), separator(7, "-"), separator(10, "T"), separator(13, ":"), separator(16, ":"), separator(text.count - 1, "Z"),
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            year >= 1000, hour < 24, minute < 60, second < 60,
            let date = LocalDate(year: year, month: month, day: day)
        else { return nil }
        var millisecond = 0
        if text.count == 24 {
            guard separator(19, "."), let fraction = number(20, 3) else { return nil }
            millisecond = fraction
        }
        let seconds = date.dayNumber * 86_400 + hour * 3600 + minute * 60 + second - referenceOffset
        guard abs(seconds) >= nearReference else { return nil }
        return Date(timeIntervalSinceReferenceDate: Double(seconds) + Double(millisecond) / 1000)
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
