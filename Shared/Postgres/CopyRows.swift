import Logging
import NIOCore
import PostgresNIO

extension PostgresConnection {
    /// Streams rows into `table` with `COPY … FROM STDIN` (text format): many times faster than inserts for the
    /// hundreds of thousands of rows a rebuild writes. Each value is a column's text form; nil is NULL.
    public func copy(_ rows: some Sequence<[String?]>, into table: String, columns: [String], logger: Logger) async throws {
        try await copyFrom(table: table, columns: columns, logger: logger) { writer in
            var buffer = ByteBuffer()
            for row in rows {
                for (index, value) in row.enumerated() {
                    if index > 0 { buffer.writeStaticString("\t") }
                    if let value { buffer.writeString(Self.escapedForCopy(value)) } else { buffer.writeStaticString("\\N") }
                }
                buffer.writeStaticString("\n")
                if buffer.readableBytes >= 1 << 20 {
                    try await writer.write(buffer)
                    buffer.clear()
                }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
        }
    }

    /// A value as `COPY`'s text format reads it: backslash, tab, newline and carriage return escaped.
    static func escapedForCopy(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") })
        else { return value }
        var escaped = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\t": escaped += "\\t"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
