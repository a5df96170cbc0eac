import Logging
import PostgresNIO
import Synchronization

/// Writes a transaction gathers while its body runs and makes once, on its connection, when the body has returned
/// and before it commits: a consumer batch of score changes becomes one statement for the batch instead of one per
/// event. `PostgresClient.transaction` makes one current for its body (inside a `SharedTransaction`, for each joined
/// body). The writes are not made per savepoint: what gathers must not run under one it may roll back to.
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
}

/// What a transaction gathers to write at once (see `BeforeCommit`).
public protocol GatheredWrites: AnyObject, Sendable {
    /// Writes what was gathered and forgets it. Called before commit, and by the owner whenever a later statement of
    /// the transaction must see the writes (it is then called again, for what gathers after).
    func write(on connection: PostgresConnection, logger: Logger) async throws
}
