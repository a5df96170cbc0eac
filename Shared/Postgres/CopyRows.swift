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
                buffer.writeCopyRow(row)
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
        let special: (UInt8) -> Bool = { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
        guard value.utf8.withContiguousStorageIfAvailable({ $0.contains(where: special) }) ?? value.utf8.contains(where: special) else { return value }
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

extension ByteBuffer {
    /// One row of `COPY`'s text format: the values escaped, tab-separated, nil as `\N`, then a newline.
    public mutating func writeCopyRow(_ row: [String?]) {
        for (index, value) in row.enumerated() {
            if index > 0 { writeStaticString("\t") }
            if let value { writeString(PostgresConnection.escapedForCopy(value)) } else { writeStaticString("\\N") }
        }
        writeStaticString("\n")
    }
}

extension PostgresConnection {
    /// Runs `load` (a bulk load into the emptied `table`, inside the caller's transaction) with the table's indexes
    /// dropped, then builds them again as PostgreSQL itself defined them: one sort per index instead of one insertion
    /// per row and index. The table is locked against every other session until the transaction ends.
    public func withIndexesRebuilt(on table: String, logger: Logger, _ load: () async throws -> Void) async throws {
        let constraints = try await query(
            """
            SELECT quote_ident(conname), pg_get_constraintdef(oid) FROM pg_constraint
            WHERE conrelid = \(table)::regclass AND contype IN ('p', 'u') ORDER BY conname
            """, logger: logger
        ).collect().map { try $0.decode((String, String).self) }
        let indexes = try await query(
            """
            SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index
            WHERE indrelid = \(table)::regclass AND NOT EXISTS (SELECT FROM pg_constraint WHERE conindid = indexrelid)
            ORDER BY 1
            """, logger: logger
        ).collect().map { try $0.decode((String, String).self) }
        for (name, _) in constraints { try await query(PostgresQuery(unsafeSQL: "ALTER TABLE \(table) DROP CONSTRAINT \(name)"), logger: logger) }
        for (name, _) in indexes { try await query(PostgresQuery(unsafeSQL: "DROP INDEX \(name)"), logger: logger) }
        try await load()
        for (name, definition) in constraints {
            try await query(PostgresQuery(unsafeSQL: "ALTER TABLE \(table) ADD CONSTRAINT \(name) \(definition)"), logger: logger)
        }
        for (_, definition) in indexes { try await query(PostgresQuery(unsafeSQL: definition), logger: logger) }
    }
}
