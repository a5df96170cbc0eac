import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgePostgres
import SurgeTestSupport
import Testing
import _ConnectionPoolModule

@Suite("Database outages", .tags(.integration), .kind(.integration))
struct DatabaseAvailabilityTests {
    let logger = Logger.test("database-availability")

    @Test("a client that cannot connect fails with errors that count as the database being unavailable", .timeLimit(.minutes(3)))
    func unreachableClient() async throws {
        let nowhere = DatabaseConfiguration(host: "127.0.0.1", port: 1, username: "nobody", password: "x", database: "nowhere")
        let client = nowhere.makeClient(logger: logger)
        let run = Task { await client.run() }
        // The pool keeps requests waiting while it retries; after a minute its circuit breaker fails them.
        let tripped = await #expect(throws: ConnectionPoolError.self) { try await client.query("SELECT 1", logger: logger) }
        #expect(tripped == .connectionCreationCircuitBreakerTripped)
        #expect(tripped?.isDatabaseUnavailable == true)
        let fastFailure = await #expect(throws: ConnectionPoolError.self) {
            try await client.transaction(logger: logger) { connection in try await connection.query("SELECT 1", logger: logger) }
        }
        #expect(fastFailure?.isDatabaseUnavailable == true)
        run.cancel()
        await run.value
        let closed = await #expect(throws: ConnectionPoolError.self) { try await client.query("SELECT 1", logger: logger) }
        #expect(closed == .poolShutdown)
        #expect(closed?.isDatabaseUnavailable == true)
    }

    @Test("a transaction whose connection the server ends fails at once, commit or rollback, and the pool serves the next one", .timeLimit(.minutes(1)))
    func serverEndsTheTransactionsConnection() async throws {
        struct BodyFailed: Error {}
        try await withTestDatabase(services: ["identity"]) { database in
            let logger = self.logger
            let client = database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            let run = Task { await client.run() }
            defer { run.cancel() }
            /// Ends the connection's server session and waits until the client has seen it closed.
            func terminate(_ connection: PostgresConnection) async throws {
                let pid = try await connection.query("SELECT pg_backend_pid()", logger: logger).collect().first!.decode(Int32.self)
                #expect(try await database.count("SELECT count(*) FROM (SELECT pg_terminate_backend(\(pid))) AS ended") == 1)
                try await waitUntil("the client sees the connection closed", timeout: .seconds(10)) { connection.isClosed }
            }
            // Before the fix, PostgresNIO's COMMIT (here) or ROLLBACK (below) on the dead connection never returned.
            let lost = await #expect(throws: DatabaseConnectionLost.self) {
                try await client.transaction(logger: logger) { connection in try await terminate(connection) }
            }
            #expect(lost?.isDatabaseUnavailable == true)
            // The pool may hand out a connection ended just before, until it has noticed: that transaction fails before
            // its body runs (`DatabaseConnectionLost`, counted as an outage, so callers retry), and is tried again here.
            var bodyError: (any Error)?
            try await waitUntil("a transaction whose body ran, on a live connection", timeout: .seconds(10)) {
                var entered = false
                do {
                    try await client.transaction(logger: logger) { connection in
                        entered = true
                        try await terminate(connection)
                        throw BodyFailed()
                    }
                } catch is DatabaseConnectionLost where !entered {
                    return false
                } catch {
                    bodyError = error
                }
                return true
            }
            #expect(bodyError is BodyFailed, "\(String(describing: bodyError))")
            var answer: Int?
            try await waitUntil("the pool serves the next transaction", timeout: .seconds(10)) {
                do {
                    answer = try await client.transaction(logger: logger) { connection in
                        try await connection.query("SELECT 1", logger: logger).collect().first!.decode(Int.self)
                    }
                    return true
                } catch is DatabaseConnectionLost {
                    return false
                }
            }
            #expect(answer == 1)
        }
    }

    @Test("a statement on a connection the server has just ended fails instead of waiting forever, noticed or not", .timeLimit(.minutes(1)))
    func firstStatementOnAnEndedConnection() async throws {
        try await withTestDatabase(services: ["identity"]) { database in
            let logger = self.logger
            let client = database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            let run = Task { await client.run() }
            defer { run.cancel() }
            var rounds = 0
            while rounds < 5 {
                // The pool may lend again a connection ended in an earlier round before it has noticed: such a round is
                // not counted (the test's time limit bounds the loop).
                let ended = try await client.withConnection { connection async throws -> Bool in
                    guard let pid = try? await connection.queryUnlessClosed("SELECT pg_backend_pid()", logger: logger).first?.decode(Int32.self)
                    else { return false }
                    // Ended from another session, and asked again at once: the client may or may not have seen it yet.
                    #expect(try await database.count("SELECT count(*) FROM (SELECT pg_terminate_backend(\(pid))) AS ended") == 1)
                    await #expect(throws: (any Error).self) { try await connection.queryUnlessClosed("SELECT 1", logger: logger) }
                    return true
                }
                if ended { rounds += 1 }
            }
        }
    }

    @Test("while the database refuses the consumer, its event waits instead of being dead-lettered, then applies once", .timeLimit(.minutes(4)))
    func consumerWaitsOutAnOutage() async throws {
        try await MessagingHarness.with { harness in
            let role = harness.database.role(for: "identity")
            try await setLogin(role, allowed: false, database: harness.database)
            let log = CapturedLog()
            let consumer = try harness.consumer(maxAttempts: 3, logger: log.logger)
            let record = try EventRecord(CloudEvent(source: "/surge/identity", time: Date(), data: harness.registration("patient")))
            _ = try await harness.producer.send(KafkaRecord(publishing: record, to: Topic.identity.name))
            try await running([consumer]) {
                // Counted as handler failures, these would have dead-lettered the event after three.
                try await waitUntil("more unavailable attempts than the consumer may fail", timeout: .seconds(150)) {
                    log.count { $0 == "Database unavailable; will retry event" } > 3
                }
                try await setLogin(role, allowed: true, database: harness.database)
                try await waitUntil("event applied after the outage", timeout: .seconds(120)) { try await harness.applied("patient") == 1 }
            }
            #expect(log.count { $0 == "Event dead-lettered" } == 0)
        }
    }

    /// Refuses or allows the role's logins; refusing also ends its open sessions, so the pool must reconnect.
    private func setLogin(_ role: String, allowed: Bool, database: TestDatabase) async throws {
        let logger = self.logger
        try await database.withAdmin { admin in
            try await admin.query(PostgresQuery(unsafeSQL: "ALTER ROLE \"\(role)\" \(allowed ? "LOGIN" : "NOLOGIN")"), logger: logger)
            if !allowed {
                try await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = \(role)", logger: logger)
            }
        }
    }
}
