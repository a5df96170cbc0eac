import Synchronization
import PostgresNIO

/// One transaction that the whole of a request's work joins. While one is current (a task-local), every
/// `PostgresClient.transaction` on the same client runs its body on the shared connection, inside the shared
/// transaction, without a `BEGIN` or `COMMIT` of its own; what it registers with `AfterCommit` waits for the shared
/// commit. Its owner begins it, then commits (and calls `committed()`) or rolls back.
///
/// Shared/Runtime's `IdempotentRequestMiddleware` runs a keyed command in one, so that a command made of several
/// transactions (identity's sign-up: the account, then the session) and the record of its answer commit together or
/// not at all. Reads on other pooled connections do not see its writes before it commits.
public final class SharedTransaction: Sendable {
    @TaskLocal public static var current: SharedTransaction?

    public let connection: PostgresConnection
    private let client: ObjectIdentifier
    let afterCommit = AfterCommit()
    private let state = Mutex<(open: Bool, failed: Bool)>((true, false))

    public init(client: PostgresClient, connection: PostgresConnection) {
        self.client = ObjectIdentifier(client)
        self.connection = connection
    }

    /// Whether a body joined it and threw: the transaction may be aborted, and its work cannot be committed as the
    /// joined code believed it would be (each of its transactions was to stand or fall alone).
    public var failed: Bool { state.withLock { $0.failed } }

    /// Runs what the joined transactions registered with `AfterCommit`; call once it has committed.
    public func committed() {
        end()
        afterCommit.run()
    }

    /// Runs the undos the joined transactions registered with `AfterCommit.ifRolledBack`; call once it has rolled back.
    public func rolledBack() {
        end()
        afterCommit.rolledBack()
    }

    /// No transaction joins it any more (a task that outlives the request runs its own).
    public func end() {
        state.withLock { $0.open = false }
    }

    func joins(_ client: PostgresClient) -> Bool {
        ObjectIdentifier(client) == self.client && state.withLock { $0.open }
    }

    func join<Result>(isolation: isolated (any Actor)?, _ body: (PostgresConnection) async throws -> sending Result) async throws -> sending Result {
        do {
            try connection.ensureOpen()
            return try await body(connection)
        } catch {
            state.withLock { $0.failed = true }
            throw error
        }
    }
}
