import Logging
import PostgresNIO
import Synchronization

/// Writes a transaction gathers while its body runs and makes once, on its connection, when the body has returned
/// and before it commits: a consumer batch of score changes becomes one statement for the batch instead of one per
/// event. `PostgresClient.transaction` makes one current for its body (inside a `SharedTransaction`, for each joined
/// body). What runs under a savepoint writes its gathered rows before releasing it, and discards them when it rolls
/// back to it (`writeGathered(on:logger:)`, `discardGathered()`).
public final class BeforeCommit: Sendable {
    /// The transaction `PostgresClient.transaction` is running on this task, if any.
    @TaskLocal public static var current: BeforeCommit?

    /// In the order first used: each gatherer's writes keep their place relative to the others'.
    private let gatherers = Mutex<[(type: ObjectIdentifier, writes: any GatheredWrites)]>([])

    init() {}

    /// The transaction's gatherer of type `Writes`, made by `make` the first time it is asked for.
    public func gatherer<Writes: GatheredWrites>(_ make: () -> Writes) -> Writes {
        gatherers.withLock { gatherers in
            if let found = gatherers.first(where: { $0.type == ObjectIdentifier(Writes.self) })?.writes as? Writes { return found }
            let made = make()
            gatherers.append((ObjectIdentifier(Writes.self), made))
            return made
        }
    }

    /// The transaction's gatherer of type `Writes`, if anything asked for it.
    public func existing<Writes: GatheredWrites>(_ type: Writes.Type) -> Writes? {
        gatherers.withLock { $0.first(where: { $0.type == ObjectIdentifier(Writes.self) })?.writes as? Writes }
    }

    func write(on connection: PostgresConnection, logger: Logger) async throws {
        for gatherer in gatherers.withLock({ $0 }) { try await gatherer.writes.write(on: connection, logger: logger) }
    }

    /// Writes everything the current transaction has gathered so far: what runs under a savepoint writes its gathered
    /// rows before releasing it, so that a failure among them rolls back to it too.
    public static func writeGathered(on connection: PostgresConnection, logger: Logger) async throws {
        try await current?.write(on: connection, logger: logger)
    }

    /// Forgets what the current transaction has gathered so far: after rolling back to a savepoint, what its body
    /// gathered must not be written.
    public static func discardGathered() {
        current?.gatherers.withLock { $0.removeAll() }
    }
}

/// What a transaction gathers to write at once (see `BeforeCommit`).
public protocol GatheredWrites: AnyObject, Sendable {
    /// Writes what was gathered and forgets it. Called before commit, and by the owner whenever a later statement of
    /// the transaction must see the writes (it is then called again, for what gathers after).
    func write(on connection: PostgresConnection, logger: Logger) async throws
}

/// Rows of one kind a transaction gathers, written together by the closure it was made with: what most gatherers are.
public final class GatheredRows<Row: Sendable>: GatheredWrites {
    public typealias Write = @Sendable ([Row], PostgresConnection, Logger) async throws -> Void
    private let rows = Mutex<[Row]>([])
    private let writeRows: Write

    init(write: @escaping Write) {
        writeRows = write
    }

    func add(_ row: Row) {
        rows.withLock { $0.append(row) }
    }

    public func write(on connection: PostgresConnection, logger: Logger) async throws {
        let gathered = rows.withLock { rows in
            defer { rows.removeAll() }
            return rows
        }
        guard !gathered.isEmpty else { return }
        try await writeRows(gathered, connection, logger)
    }
}

extension BeforeCommit {
    /// Adds `row` to what the current transaction writes before it commits, with `write` (one call for every row of
    /// its kind); outside a transaction, writes it at once.
    public static func gather<Row: Sendable>(
        _ row: Row, on connection: PostgresConnection, logger: Logger, write: @escaping GatheredRows<Row>.Write
    ) async throws {
        guard let transaction = current else { return try await write([row], connection, logger) }
        transaction.gatherer { GatheredRows(write: write) }.add(row)
    }

    /// Writes the rows of kind `Row` the current transaction has gathered so far: before a statement of it that must
    /// see them.
    public static func writeGathered<Row: Sendable>(_ kind: Row.Type, on connection: PostgresConnection, logger: Logger) async throws {
        try await current?.existing(GatheredRows<Row>.self)?.write(on: connection, logger: logger)
    }
}
