import Logging
import PostgresNIO
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import SurgePostgres

@Suite("PostgreSQL pool metrics", .tags(.integration), .kind(.integration))
struct PoolMetricsTests {
    @Test("the pool's open connections are counted from PostgresNIO's own lines, which still reach the service's log only at its level; transactions are counted holding and waiting for the one connection", .timeLimit(.minutes(1)))
    func countsThePool() async throws {
        try await withTestDatabase(services: ["identity"]) { database in
            let lines = LockedValue<[String]>([])
            let logger = {
                var logger = Logger(label: "pool") { label in JSONLogHandler(label: label) { line in lines.withLock { $0.append(line) } } }
                logger.logLevel = .info
                return logger
            }()
            var configuration = database.configuration(for: "identity")
            configuration.maximumConnections = 1
            let metrics = PoolMetrics(pool: "test", maximumConnections: 1)
            let client = configuration.makeClient(schema: "identity", logger: logger, metrics: metrics)
            let run = Task { await client.run() }
            defer { run.cancel() }

            let (entered, release) = (AsyncStream<Void>.makeStream(), AsyncStream<Void>.makeStream())
            let holder = Task {
                try await client.transaction(logger: logger) { connection in
                    #expect(metrics.openNow == 1)
                    #expect(metrics.transactionsNow == (waiting: 0, holding: 1))
                    entered.continuation.yield()
                    for await _ in release.stream { break }
                }
            }
            for await _ in entered.stream { break }
            let waiter = Task { try await client.transaction(logger: logger) { connection in try await connection.query("SELECT 1", logger: logger) } }
            try await waitUntil("the second transaction waits for the connection", timeout: .seconds(10)) { metrics.transactionsNow == (waiting: 1, holding: 1) }
            release.continuation.yield()
            try await holder.value
            _ = try await waiter.value
            #expect(metrics.transactionsNow == (waiting: 0, holding: 0))
            #expect(metrics.openNow == 1)
            #expect(!lines.value.contains { $0.contains("Creating new connection") })
            run.cancel()
            await run.value
            #expect(metrics.openNow == 0)
        }
    }
}
