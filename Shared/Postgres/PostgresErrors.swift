import Synchronization
import PostgresNIO
import _ConnectionPoolModule

/// What went wrong in a query, seen through PostgresNIO's transaction wrapper.
extension Error {
    /// The error thrown inside a transaction, unwrapped from `PostgresTransactionError`.
    public var unwrappingTransaction: any Error {
        if let transaction = self as? PostgresTransactionError {
            return transaction.closureError ?? transaction.commitError ?? transaction.beginError ?? self
        }
        return self
    }

    /// The PostgreSQL SQLSTATE of a server error, if this is one.
    public var sqlState: String? {
        (unwrappingTransaction as? PSQLError)?.serverInfo?[.sqlState]
    }

    public var isUniqueViolation: Bool { sqlState == "23505" }

    /// The server refused the login itself (a wrong password, an unknown role, no such database, not allowed to
    /// connect): a configuration error, which waiting does not mend.
    public var isLoginRefused: Bool {
        guard let state = sqlState else { return false }
        return state.hasPrefix("28") || state == "3D000" || state == "42501"
    }

    /// The server's own message, for a line that names the cause without the whole error dump.
    public var serverMessage: String? {
        (unwrappingTransaction as? PSQLError)?.serverInfo?[.message]
    }

    /// The database could not be reached or the connection broke: retrying later may succeed, and the work in hand
    /// was not at fault.
    ///
    /// While the pool cannot connect, requests wait; after a minute of failed attempts its circuit breaker fails them
    /// all, and every new one at once, with `connectionCreationCircuitBreakerTripped` until a connection succeeds.
    public var isDatabaseUnavailable: Bool {
        let error = unwrappingTransaction
        if error is DatabaseConnectionLost { return true }
        if let error = error as? ConnectionPoolError {
            return error == .connectionCreationCircuitBreakerTripped || error == .poolShutdown
        }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed:
            return true
        case .server:
            // 08xxx connection exceptions, 57P01-57P03 admin shutdown / cannot connect now, 53300 too many connections
            guard let state = sqlState else { return false }
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300"].contains(state)
        default:
            return false
        }
    }
}

extension PostgresClient {
    /// A transaction whose errors reach the caller as thrown inside it (unique violations stay recognisable). What the
    /// body gathered with `BeforeCommit.current` is written when it returns; what it registered with
    /// `AfterCommit.current` runs once it has committed, or, for `ifRolledBack`, once it has failed. Inside a
    /// `SharedTransaction` of this client, the body runs in that one instead.
    ///
    /// Not PostgresNIO's `withTransaction`: on a connection the server has closed (a restart, `pg_terminate_backend`),
    /// PostgresNIO 1.33 writes the next statement into the torn-down channel and waits for its answer forever, so its
    /// `ROLLBACK` after a failed body, or its `COMMIT` after a body that outlived the connection, would never return
    /// and the lease would never go back to the pool. Here neither is sent on a closed connection.
    public func transaction<Result>(
        logger: Logger, isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        let shared = SharedTransaction.current.flatMap { $0.joins(self) ? $0 : nil }
        let afterCommit = shared?.afterCommit ?? AfterCommit()
        let beforeCommit = BeforeCommit()
        // Handed out of the task-local scope unchanged: `withValue` cannot pass a `sending` result through.
        nonisolated(unsafe) var result: Result?
        do {
            try await AfterCommit.$current.withValue(afterCommit) {
                try await BeforeCommit.$current.withValue(beforeCommit) {
                    if let shared {
                        try await shared.join(isolation: isolation) { connection in
                            result = try await body(connection)
                            try await beforeCommit.write(on: connection, logger: logger)
                        }
                    } else {
                        try await guardedTransaction(logger: logger, isolation: isolation) { connection in
                            result = try await body(connection)
                            try await beforeCommit.write(on: connection, logger: logger)
                        }
                    }
                }
            }
        } catch {
            if shared == nil { afterCommit.rolledBack() }
            throw error
        }
        if shared == nil { afterCommit.run() }
        return result!
    }

    private func guardedTransaction<Result>(
        logger: Logger, isolation: isolated (any Actor)?, _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        let metrics = PoolMetrics.of(self)
        let asked = metrics?.waiting()
        var leased = false
        defer { if leased { metrics?.released() } else { metrics?.gaveUp() } }
        return try await withConnection(isolation: isolation) { connection -> sending Result in
            leased = true
            if let metrics, let asked { metrics.leased(after: asked) }
            return try await connection.transaction(logger: logger) { try await body(connection) }
        }
    }
}

/// How a transaction begins.
public enum TransactionMode: String, Sendable {
    case readWrite = "BEGIN"
    /// Every statement reads the same snapshot, and nothing is written: a consistent read across statements.
    case snapshotReadOnly = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
}

extension PostgresConnection {
    /// A transaction on this connection: committed when `body` returns, rolled back when it throws. As with
    /// `PostgresClient.transaction`, neither is sent on a connection the server has closed.
    public func transaction<Result>(
        _ mode: TransactionMode = .readWrite, logger: Logger, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> sending Result
    ) async throws -> sending Result {
        // The pool can hand out a connection the server has just closed (a restart) before it has noticed; a
        // statement written to a closed channel never returns.
        try ensureOpen()
        try await query(PostgresQuery(unsafeSQL: mode.rawValue), logger: logger)
        let result: Result
        do {
            result = try await body()
            try ensureOpen()
        } catch {
            if !isClosed { _ = try? await query("ROLLBACK", logger: logger) }
            throw error
        }
        try await query("COMMIT", logger: logger)
        return result
    }
}

/// The server closed the connection between two statements; whatever the transaction did is rolled back.
public struct DatabaseConnectionLost: Error, CustomStringConvertible {
    public var description: String { "the database closed the connection" }
}

extension PostgresConnection {
    /// Throws `DatabaseConnectionLost` when the server has closed this connection, rather than letting the next
    /// statement wait forever (see `PostgresClient.transaction`). Worth calling after any long wait inside a transaction.
    public func ensureOpen() throws {
        if isClosed { throw DatabaseConnectionLost() }
    }

    /// The first statement on a connection just leased: `ensureOpen` cannot see a close its event loop has not yet
    /// handled (a restarting server under load), and PostgresNIO drops a statement written to the closed channel
    /// without ever answering it. This answers `DatabaseConnectionLost` as soon as the connection closes, whichever
    /// comes first (checked every 100 ms); a statement left unanswered then stays suspended, holding nothing of the pool's.
    public func queryUnlessClosed(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try ensureOpen()
        let answer = FirstAnswer<[PostgresRow]>()
        return try await withCheckedThrowingContinuation { continuation in
            answer.expect(continuation)
            // Polled rather than a callback on `closeFuture`, which would keep one per statement for the connection's life.
            Task {
                while answer.isPending {
                    try? await Task.sleep(for: .milliseconds(100))
                    if self.isClosed { answer.give(.failure(DatabaseConnectionLost())) }
                }
            }
            Task {
                do {
                    answer.give(.success(try await self.query(query, logger: logger).collect()))
                } catch {
                    answer.give(.failure(error))
                }
            }
        }
    }
}

/// Work that must wait until the transaction in progress has committed, such as telling the outbox relay that
/// events are there to publish: told earlier, the relay could look before they are visible.
public final class AfterCommit: Sendable {
    /// The transaction `PostgresClient.transaction` is running on this task, if any.
    @TaskLocal public static var current: AfterCommit?

    private let actions = Mutex<[@Sendable () -> Void]>([])
    private let undoActions = Mutex<[@Sendable () -> Void]>([])

    public func add(_ action: @escaping @Sendable () -> Void) {
        actions.withLock { $0.append(action) }
    }

    /// Undoes in memory what the transaction did there ahead of its commit, should it roll back instead: the undos
    /// run newest first.
    public func ifRolledBack(_ undo: @escaping @Sendable () -> Void) {
        undoActions.withLock { $0.append(undo) }
    }

    func run() {
        for action in actions.withLock({ $0 }) { action() }
    }

    func rolledBack() {
        for undo in undoActions.withLock({ $0 }).reversed() { undo() }
    }
}

/// A continuation resumed by whichever answer comes first; later ones are dropped.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Value, any Error>?>(nil)

    func expect(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    var isPending: Bool { continuation.withLock { $0 != nil } }

    func give(_ result: Result<Value, any Error>) {
        continuation.withLock { pending in
            pending?.resume(with: result)
            pending = nil
        }
    }
}
