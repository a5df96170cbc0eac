import NIOCore
import PostgresNIO
import SurgeContracts

/// `LocalDate` is a PostgreSQL `date`: binary, days since 2000-01-01.
extension LocalDate: PostgresNonThrowingEncodable, PostgresDecodable {
    private static let postgresEpochDayNumber = 10_957

    public static var psqlType: PostgresDataType { .date }
    public static var psqlFormat: PostgresFormat { .binary }

    public func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        byteBuffer.writeInteger(Int32(dayNumber - Self.postgresEpochDayNumber))
    }

    public init<JSONDecoder: PostgresJSONDecoder>(
        from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat, context: PostgresDecodingContext<JSONDecoder>
    ) throws {
        guard type == .date, format == .binary, buffer.readableBytes == 4, let days = buffer.readInteger(as: Int32.self) else {
            throw PostgresDecodingError.Code.typeMismatch
        }
        self.init(dayNumber: Int(days) + Self.postgresEpochDayNumber)
    }
}

/// A `date[]`: a column of days passed in one parameter (`unnest`), for statements that write a batch at once.
extension LocalDate: PostgresArrayEncodable, PostgresArrayDecodable {
    public static var psqlArrayType: PostgresDataType { .dateArray }
}
