import Foundation
import Logging
import PostgresNIO
import SurgeContracts
@testable import SurgeMessaging
import SurgeTestSupport
import Testing

@Suite("Rebuild replay: chunks under one savepoint, a failing record skipped alone", .tags(.integration), .kind(.integration))
struct EventHistoryTests {
    @Test("every record applied once in order, duplicates and unreadable records counted, a failing one skipped without its chunk")
    func replayInChunks() async throws {
        try await MessagingHarness.with { harness in
            var handlers = EventHandlers()
            handlers.on(UserRegistered.self) { event, connection, logger in
                try await connection.query("INSERT INTO effect_log (key) VALUES (\(event.data.displayName))", logger: logger)
                if event.data.displayName == "fails" { _ = try await connection.query("SELECT 1 / 0", logger: logger).collect() }
            }
            let names = (0..<25).map { "user \($0)" }
            var records: [EventRecord?] = try names.map { try EventRecord(CloudEvent(source: "/surge/identity", time: Date(), data: harness.registration($0))) }
            let failing = try EventRecord(CloudEvent(source: "/surge/identity", time: Date(), data: harness.registration("fails")))
            records.insert(failing, at: 13)
            records.insert(nil, at: 5)
            records.insert(records[2], at: 21)
            records.append(records[24])

            let replayed = try await harness.client.withConnection { connection in
                try await connection.query("BEGIN", logger: harness.logger)
                let replayed = try await EventHistory.replay(
                    records, through: handlers, group: "surge-test", on: connection, logger: harness.logger, chunkSize: 10)
                try await connection.query("COMMIT", logger: harness.logger)
                return replayed
            }

            #expect(replayed.events == 29)
            #expect(replayed.applied == 25)
            #expect(replayed.duplicates == 2)
            #expect(replayed.skipped == 2, "the unreadable record and the failing one")
            let applied = try await harness.client.query("SELECT key FROM effect_log ORDER BY position", logger: harness.logger)
                .collect().map { try $0.decode(String.self) }
            #expect(applied == names, "each once, in order; nothing of the failing record stays")
            let processed = try await harness.client.query(
                "SELECT event_id FROM processed_events WHERE consumer = 'surge-test'", logger: harness.logger
            ).collect().map { try $0.decode(UUID.self) }
            #expect(Set(processed) == Set(records.compactMap { $0?.id }).subtracting([failing.id]))
            #expect(processed.count == 25)
        }
    }
}
