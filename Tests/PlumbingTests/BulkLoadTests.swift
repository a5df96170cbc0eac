import Logging
import PostgresNIO
import SurgePostgres
import SurgeTestSupport
import Testing

@Suite("Bulk loads: COPY and indexes built after the load", .tags(.integration), .kind(.integration))
struct BulkLoadTests {
    let logger = Logger.test("bulk-load")

    static let table = """
        CREATE TABLE ledger (
            account text NOT NULL, entry uuid NOT NULL, note text, amount numeric NOT NULL,
            PRIMARY KEY (account, entry), CONSTRAINT ledger_note_unique UNIQUE (note)
        )
        """

    static func indexDefinitions(_ connection: PostgresConnection, logger: Logger) async throws -> [String] {
        try await connection.query(
            "SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = 'ledger'::regclass ORDER BY 1", logger: logger
        ).collect().map { try $0.decode(String.self) }
    }

    @Test("indexes and constraints come back as they were, with the rows loaded and their text escaped")
    func indexesRebuilt() async throws {
        try await withTestDatabase(services: ["identity"]) { database in
            let client = database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            try await PostgresClient.withRunning(client) { client in
                try await client.withConnection { connection in
                    try await connection.query(PostgresQuery(unsafeSQL: Self.table), logger: logger)
                    try await connection.query("CREATE INDEX ledger_amount ON ledger (amount) WHERE amount > 0", logger: logger)
                    try await connection.query("CREATE INDEX ledger_lower_note ON ledger (lower(note))", logger: logger)
                    let before = try await Self.indexDefinitions(connection, logger: logger)
                    #expect(before.count == 4)

                    let notes = ["tab\there", "line\nbreak", "back\\slash", "cr\r\nlf", nil]
                    let rows: [[String?]] = (0..<1_000).map { index in
                        ["account-\(index % 7)", "00000000-0000-0000-0000-\(String(index, radix: 16).leftPadded(to: 12))",
                         index < notes.count ? notes[index] : "note \(index)", "\(index - 500)"]
                    }
                    try await connection.query("BEGIN", logger: logger)
                    try await connection.withIndexesRebuilt(on: "ledger", logger: logger) {
                        #expect(try await Self.indexDefinitions(connection, logger: logger).isEmpty)
                        try await connection.copy(rows, into: "ledger", columns: ["account", "entry", "note", "amount"], logger: logger)
                    }
                    try await connection.query("COMMIT", logger: logger)

                    #expect(try await Self.indexDefinitions(connection, logger: logger) == before)
                    let stored = try await connection.query("SELECT note FROM ledger WHERE entry::text LIKE '%00000000000_' ORDER BY entry", logger: logger)
                        .collect().map { try $0.decode(String?.self) }
                    #expect(Array(stored.prefix(5)) == notes)
                    #expect(try await connection.query("SELECT count(*) FROM ledger", logger: logger).collect().first?.decode(Int.self) == 1_000)
                    // The constraints still hold after the load.
                    await #expect(throws: PSQLError.self) {
                        try await connection.query(
                            "INSERT INTO ledger VALUES ('account-0', '00000000-0000-0000-0000-000000000000', 'other', 1)", logger: logger)
                    }
                }
            }
        }
    }

    @Test("a load that breaks a constraint fails when the constraint is built, and the transaction rolls back")
    func duplicatesRefused() async throws {
        try await withTestDatabase(services: ["identity"]) { database in
            let client = database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            try await PostgresClient.withRunning(client) { client in
                try await client.withConnection { connection in
                    try await connection.query(PostgresQuery(unsafeSQL: Self.table), logger: logger)
                    let before = try await Self.indexDefinitions(connection, logger: logger)
                    let entry = "00000000-0000-0000-0000-000000000001"
                    try await connection.query("BEGIN", logger: logger)
                    await #expect(throws: PSQLError.self) {
                        try await connection.withIndexesRebuilt(on: "ledger", logger: logger) {
                            try await connection.copy([["a", entry, "x", "1"], ["a", entry, "y", "2"]], into: "ledger",
                                                      columns: ["account", "entry", "note", "amount"], logger: logger)
                        }
                    }
                    try await connection.query("ROLLBACK", logger: logger)
                    #expect(try await Self.indexDefinitions(connection, logger: logger) == before)
                    #expect(try await connection.query("SELECT count(*) FROM ledger", logger: logger).collect().first?.decode(Int.self) == 0)
                }
            }
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
