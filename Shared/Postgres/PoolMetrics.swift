import Logging
import Metrics
import PostgresNIO
import Synchronization

/// What a PostgreSQL connection pool is doing, for `/metrics`: the connections it has open and its maximum, and, for
/// the transactions Surge runs (`PostgresClient.transaction`), how many hold a connection, how many wait for one and
/// how long they waited.
///
/// Hand-written because PostgresNIO keeps its pool's events to itself: its observability delegate is internal, its
/// lease and release callbacks are never called (1.x), and the only trace of a connection opening or closing is a
/// line on the client's background logger. `PoolMetrics.logger(observing:)` is that logger: it counts those lines and
/// passes every line on to the service's log handler at the service's own level, as before. A single statement on
/// the pool (`client.query`) leases and returns its connection inside PostgresNIO, unseen by the transaction figures.
/// `PoolMetricsTests` fails should PostgresNIO change the lines.
public final class PoolMetrics: Sendable {
    private let openConnections = Mutex(0)
    private let open: Gauge

    /// `pool` names the pool in the metrics' labels (a service may have several, e.g. the leaderboard's catch-up pool).
    public init(pool: String, maximumConnections: Int) {
        open = Gauge(label: "surge_db_pool_connections_open", dimensions: [("pool", pool)])
        transactionsWaiting = Gauge(label: "surge_db_pool_waiting", dimensions: [("pool", pool)])
        transactionsHolding = Gauge(label: "surge_db_pool_in_use", dimensions: [("pool", pool)])
        waitTime = Timer(label: "surge_db_pool_wait_seconds", dimensions: [("pool", pool)])
        Gauge(label: "surge_db_pool_max_connections", dimensions: [("pool", pool)]).record(maximumConnections)
        open.record(0)
        publish((0, 0))
    }

    /// The background logger to give the pool: `logger`, with the pool's lines about its connections counted.
    public func logger(observing logger: Logger) -> Logger {
        var observed = Logger(label: logger.label) { _ in PoolEventLogHandler(forwarded: logger.handler, metrics: self) }
        observed.logLevel = .debug
        return observed
    }

    /// The connections the pool has open or is opening now, as its lines told them.
    public var openNow: Int { openConnections.withLock { $0 } }

    fileprivate func observe(_ message: String) {
        let change: Int
        switch message {
        case "Creating new connection": change = 1
        case "Connection creation failed", "Connection closed": change = -1
        default: return
        }
        open.record(openConnections.withLock { count in
            count = max(0, count + change)
            return count
        })
    }

    // MARK: Transactions

    private let transactions = Mutex((waiting: 0, holding: 0))
    private let transactionsWaiting: Gauge
    private let transactionsHolding: Gauge
    private let waitTime: Timer

    /// Transactions waiting for a connection and transactions holding one now.
    var transactionsNow: (waiting: Int, holding: Int) { transactions.withLock { $0 } }

    /// A transaction asks for a connection: counted waiting until `leased`, or until `gaveUp` when none came.
    func waiting() -> ContinuousClock.Instant {
        publish(transactions.withLock { counts in
            counts.waiting += 1
            return counts
        })
        return .now
    }

    /// The transaction got its connection; records how long it waited.
    func leased(after start: ContinuousClock.Instant) {
        let waited = (ContinuousClock.now - start).components
        waitTime.recordNanoseconds(waited.seconds * 1_000_000_000 + waited.attoseconds / 1_000_000_000)
        publish(transactions.withLock { counts in
            counts.waiting -= 1
            counts.holding += 1
            return counts
        })
    }

    func gaveUp() {
        publish(transactions.withLock { counts in
            counts.waiting -= 1
            return counts
        })
    }

    func released() {
        publish(transactions.withLock { counts in
            counts.holding -= 1
            return counts
        })
    }

    private func publish(_ counts: (waiting: Int, holding: Int)) {
        transactionsWaiting.record(counts.waiting)
        transactionsHolding.record(counts.holding)
    }

    // MARK: Which client a pool's metrics belong to

    private static let byClient = Mutex<[ObjectIdentifier: PoolMetrics]>([:])

    func observe(_ client: PostgresClient) {
        Self.byClient.withLock { $0[ObjectIdentifier(client)] = self }
    }

    static func of(_ client: PostgresClient) -> PoolMetrics? {
        byClient.withLock { $0[ObjectIdentifier(client)] }
    }
}

/// Passes every line on to the service's handler at its level, and tells `PoolMetrics` the pool's lines.
private struct PoolEventLogHandler: LogHandler {
    var forwarded: any LogHandler
    let metrics: PoolMetrics

    var logLevel: Logger.Level {
        get { .debug }
        set {}
    }

    var metadata: Logger.Metadata {
        get { forwarded.metadata }
        set { forwarded.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { forwarded[metadataKey: key] }
        set { forwarded[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        metrics.observe(event.message.description)
        guard event.level >= forwarded.logLevel else { return }
        forwarded.log(event: event)
    }
}
