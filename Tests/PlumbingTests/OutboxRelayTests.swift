import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeKafka
import SurgePostgres
@testable import SurgeMessaging
import SurgeTestSupport
import Testing

@Suite("Transactional outbox and relay", .tags(.integration), .kind(.integration))
struct OutboxRelayTests {
    @Test("events committed with the state change are published in order and marked published")
    func publishesInOrder() async throws {
        try await MessagingHarness.with { harness in
            let payloads = (0..<25).map { harness.registration("user-\($0)") }
            let ids = try await harness.commit(payloads)
            try await running([harness.relay()]) {
                try await waitUntil("outbox drained") { try await harness.unpublished() == 0 }
            }
            let received = try await harness.kafka.readAll(topic: Topic.identity.name, expecting: 25)
            let records = try received.map { try EventRecord(kafkaKey: $0.key, value: $0.value, headers: $0.headers.map { ($0.name, $0.value) }) }
            #expect(Set(records.map(\.id)) == Set(ids))
            let event = try records[0].decode(as: UserRegistered.self)
            #expect(event.source == "/surge/identity")
            #expect(payloads.contains { $0.userID == event.data.userID && $0.displayName == event.data.displayName })
        }
    }

    @Test("events written in one statement keep their order and their trace, absent fields stay null")
    func batchKeepsOrderAndTrace() async throws {
        try await MessagingHarness.with { harness in
            let traced = TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", requestID: "req-1")
            let records = try [
                harness.outbox.record(harness.registration("first"), at: Date(), trace: traced),
                harness.outbox.record(harness.registration("second"), at: Date()),
                harness.outbox.record(harness.registration("third"), at: Date(), trace: TraceContext(tracestate: "vendor=1")),
            ]
            try await harness.client.transaction(logger: harness.logger) { connection in
                try await harness.outbox.append(records, on: connection, logger: harness.logger)
            }
            let stored = try await harness.database.withAdmin { client in
                try await client.query(
                    "SELECT event_id, traceparent, tracestate, request_id, payload->>'displayName' FROM identity.outbox ORDER BY position",
                    logger: harness.logger
                ).collect().map { try $0.decode((UUID, String?, String?, String?, String).self) }
            }
            #expect(stored.map(\.0) == records.map(\.0.id))
            #expect(stored.map(\.4) == ["first", "second", "third"])
            #expect(stored[0].1 == traced.traceparent && stored[0].2 == nil && stored[0].3 == "req-1")
            #expect(stored[1].1 == nil && stored[1].2 == nil && stored[1].3 == nil)
            #expect(stored[2].1 == nil && stored[2].2 == "vendor=1" && stored[2].3 == nil)
        }
    }

    @Test("the relay publishes an event as soon as its transaction commits, without waiting for its poll")
    func wokenByCommit() async throws {
        try await MessagingHarness.with { harness in
            try await running([harness.relay(pollInterval: .seconds(600))]) {
                // Once the first event is out, the relay waits for its next poll, ten minutes away: only a commit can wake it.
                try await harness.commit([harness.registration("first")])
                try await waitUntil("first published", timeout: .seconds(10)) { try await harness.unpublished() == 0 }
                try await harness.commit([harness.registration("second")])
                try await waitUntil("second published without a poll", timeout: .seconds(10)) { try await harness.unpublished() == 0 }
            }
            #expect(try await harness.kafka.readAll(topic: Topic.identity.name, expecting: 2).count == 2)
        }
    }

    @Test("a rolled-back transaction leaves no event behind")
    func rollbackPublishesNothing() async throws {
        try await MessagingHarness.with { harness in
            struct Abort: Error {}
            await #expect(throws: Abort.self) {
                try await harness.client.transaction(logger: harness.logger) { connection in
                    try await harness.outbox.append(harness.registration("ghost"), on: connection, logger: harness.logger)
                    throw Abort()
                }
            }
            try await harness.commit([harness.registration("real")])
            try await running([harness.relay()]) {
                try await waitUntil("outbox drained") { try await harness.unpublished() == 0 }
            }
            let received = try await harness.kafka.readAll(topic: Topic.identity.name, expecting: 1)
            #expect(received.count == 1)
            #expect(try await harness.database.count("SELECT count(*) FROM identity.outbox") == 1)
        }
    }

    @Test("several relay replicas publish every event exactly once, each user's events in order")
    func replicasShareTheOutbox() async throws {
        try await MessagingHarness.with { harness in
            let users = (0..<5).map { _ in UUID() }
            var payloads: [UserRegistered] = []
            for round in 0..<20 {
                for user in users {
                    payloads.append(UserRegistered(userID: user, displayName: "\(user.key)-\(round)", timeZone: "UTC", locale: nil, kind: .guest, registeredAt: Date()))
                }
            }
            try await running([harness.relay(), harness.relay(), harness.relay()]) {
                for chunk in stride(from: 0, to: payloads.count, by: 10) {
                    try await harness.commit(Array(payloads[chunk..<min(chunk + 10, payloads.count)]))
                }
                try await waitUntil("outbox drained") { try await harness.unpublished() == 0 }
            }
            let received = try await harness.kafka.readAll(topic: Topic.identity.name, expecting: payloads.count)
            #expect(received.count == payloads.count)
            let log = received.sorted { ($0.partition, $0.offset) < ($1.partition, $1.offset) }
            let events = try log.map {
                try EventRecord(kafkaKey: $0.key, value: $0.value, headers: $0.headers.map { ($0.name, $0.value) }).decode(as: UserRegistered.self)
            }
            #expect(Set(events.map(\.id)).count == payloads.count)
            for user in users {
                // One user's events share a partition; their order in its log is the order consumers see.
                let rounds = events.filter { $0.data.userID == user }.map { Int($0.data.displayName.split(separator: "-").last!)! }
                #expect(rounds == Array(0..<20))
            }
        }
    }

    @Test("a relay holds the publishing lock only while it publishes: once the outbox is drained no connection keeps it")
    func lockReleasedWhenIdle() async throws {
        try await MessagingHarness.with { harness in
            let role = harness.database.role(for: "identity")
            try await running([harness.relay(pollInterval: .seconds(30))]) {
                for index in 0..<20 { try await harness.commit([harness.registration("spell-\(index)")]) }
                try await waitUntil("outbox drained") { try await harness.unpublished() == 0 }
                try await waitUntil("no advisory lock left") {
                    try await harness.database.count(
                        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND a.usename = \(role)"
                    ) == 0
                }
                // The next commit is published at once, by the same relay taking the lock again.
                try await harness.commit([harness.registration("after")])
                try await waitUntil("published again", timeout: .seconds(10)) { try await harness.unpublished() == 0 }
            }
            let received = try await harness.kafka.readAll(topic: Topic.identity.name, expecting: 21)
            #expect(Set(received.compactMap { $0.header("ce_id") }).count == 21)
        }
    }

    @Test("processed events are kept for the inbox retention, published outbox rows for the outbox retention, unpublished ones until published")
    func purgeRetentions() async throws {
        try await MessagingHarness.with { harness in
            try await harness.commit([harness.registration("old"), harness.registration("recent"), harness.registration("old, unpublished")])
            try await harness.database.withAdmin { admin in
                let logger = harness.logger
                try await admin.query(
                    "UPDATE identity.outbox SET created_at = now() - interval '8 days' WHERE payload->>'displayName' LIKE 'old%'", logger: logger)
                try await admin.query(
                    "UPDATE identity.outbox SET created_at = now() - interval '6 days' WHERE payload->>'displayName' = 'recent'", logger: logger)
                try await admin.query(
                    """
                    DELETE FROM identity.outbox_pending WHERE position IN (
                        SELECT position FROM identity.outbox WHERE payload->>'displayName' IN ('old', 'recent'))
                    """, logger: logger)
                try await admin.query(
                    """
                    INSERT INTO identity.processed_events (consumer, event_id, event_type, processed_at)
                    VALUES ('g', gen_random_uuid(), 't', now() - interval '8 days'), ('g', gen_random_uuid(), 't', now() - interval '31 days')
                    """, logger: logger)
            }
            try await harness.relay().purge()
            #expect(try await harness.database.count("SELECT count(*) FROM identity.outbox") == 2)
            #expect(try await harness.database.count("SELECT count(*) FROM identity.outbox WHERE payload->>'displayName' = 'old'") == 0)
            #expect(try await harness.database.count("SELECT count(*) FROM identity.outbox_pending") == 1)
            #expect(try await harness.database.count("SELECT count(*) FROM identity.processed_events WHERE processed_at > now() - interval '9 days'") == 1)
            #expect(try await harness.database.count("SELECT count(*) FROM identity.processed_events") == 1)
        }
    }

    @Test("events written while the broker is down are published after it returns, none lost")
    func brokerOutage() async throws {
        try await MessagingHarness.with { harness in
            try await running([harness.relay()]) {
                harness.kafka.cluster.setBrokersAvailable(false)
                for index in 0..<10 { try await harness.commit([harness.registration("during-\(index)")]) }
                try await Task.sleep(for: .seconds(2))
                #expect(try await harness.unpublished() > 0)
                harness.kafka.cluster.setBrokersAvailable(true)
                try await waitUntil("outbox drained", timeout: .seconds(60)) { try await harness.unpublished() == 0 }
            }
            let received = try await harness.kafka.readAll(topic: Topic.identity.name, expecting: 10)
            #expect(Set(received.compactMap { $0.header("ce_id") }).count == 10)
        }
    }
    @Test("a relay whose connection is killed while it waits for the broker publishes every event once both are back")
    func connectionKilledMidRound() async throws {
        try await MessagingHarness.with { harness in
            try await running([harness.relay()]) {
                harness.kafka.cluster.setBrokersAvailable(false)
                for index in 0..<10 { try await harness.commit([harness.registration("during-\(index)")]) }
                // The relay holds its batch lock in a transaction while the broker keeps it waiting: end that session.
                let role = harness.database.role(for: "identity")
                try await waitUntil("the relay waits for the broker inside its batch transaction", timeout: .seconds(20)) {
                    try await harness.database.count(
                        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND a.usename = \(role)"
                    ) == 1
                }
                let terminated = try await harness.database.count(
                    """
                    SELECT count(*) FROM (SELECT pg_terminate_backend(a.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                    WHERE l.locktype = 'advisory' AND a.usename = \(role)) AS ended
                    """)
                #expect(terminated == 1)
                harness.kafka.cluster.setBrokersAvailable(true)
                try await waitUntil("outbox drained", timeout: .seconds(60)) { try await harness.unpublished() == 0 }
            }
            let received = try await harness.kafka.readAll(topic: Topic.identity.name, expecting: 10)
            #expect(Set(received.compactMap { $0.header("ce_id") }).count == 10)
        }
    }

    @Test("upgrading an outbox: the events not yet published are listed as pending, the published ones are not")
    func pendingListUpgrade() async throws {
        try await withTestDatabase(services: ["identity"]) { database in
            let logger = Logger.test("outbox-upgrade")
            let client = database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            try await PostgresClient.withRunning(client) { client in
                let before = MigrationSet(component: "messaging", migrations: Array(MessagingMigrations.set.migrations.prefix(3)))
                try await Migrator.migrate([before], schema: "identity", client: client, logger: logger)
                try await client.query(
                    """
                    INSERT INTO outbox (event_id, topic, partition_key, type, source, subject, occurred_at, payload, published_at)
                    SELECT gen_random_uuid(), 't', 'k', 'e', 's', 'x', now(), '{}', CASE WHEN i % 2 = 0 THEN now() END
                    FROM generate_series(1, 6) AS i
                    """, logger: logger)
                try await Migrator.migrate([MessagingMigrations.set], schema: "identity", client: client, logger: logger)
                let pending = try await client.query("SELECT position FROM outbox_pending ORDER BY position", logger: logger)
                    .collect().map { try $0.decode(Int64.self) }
                #expect(pending == [1, 3, 5])
            }
        }
    }
}
