import Foundation
import Logging
import PostgresNIO
import SurgeContracts

/// A service's event types with their effect written once over its store (`Store`), visited by both paths that apply
/// them: the incremental consumer (`ConsumerRoutes`, each event in its inbox transaction on the PostgreSQL store) and
/// the rebuild (`ReplayRoutes`, history replayed on a store in memory, written to PostgreSQL once at the end).
public protocol EventRoutes {
    associatedtype Store
    /// `relevant` false: the event can have no effect (see `EventHandlers.on(_:when:_:)`).
    mutating func on<Payload: EventPayload>(
        _ type: Payload.Type, when relevant: (@Sendable (CloudEvent<Payload>) -> Bool)?,
        _ apply: @escaping @Sendable (CloudEvent<Payload>, inout Store) async throws -> Void)
}

extension EventRoutes {
    public mutating func on<Payload: EventPayload>(_ type: Payload.Type, _ apply: @escaping @Sendable (CloudEvent<Payload>, inout Store) async throws -> Void) {
        on(type, when: nil, apply)
    }
}

/// The incremental path: each event in its inbox transaction, on the store `open` makes of the transaction's
/// connection.
public struct ConsumerRoutes<Store>: EventRoutes {
    public private(set) var handlers = EventHandlers()
    private let open: @Sendable (PostgresConnection, Logger) -> Store

    public init(open: @escaping @Sendable (PostgresConnection, Logger) -> Store) {
        self.open = open
    }

    public mutating func on<Payload: EventPayload>(
        _ type: Payload.Type, when relevant: (@Sendable (CloudEvent<Payload>) -> Bool)?,
        _ apply: @escaping @Sendable (CloudEvent<Payload>, inout Store) async throws -> Void
    ) {
        let open = open
        handlers.on(type, when: relevant) { event, connection, logger in
            var store = open(connection, logger)
            try await apply(event, &store)
        }
    }
}

/// The rebuild's path: each event type's decoding (which `EventHistory.replay` runs in parallel) and its effect on a
/// store in memory.
public struct ReplayRoutes<Store>: EventRoutes, Sendable {
    public typealias Effect = @Sendable (inout Store) async throws -> Void
    /// The event's effect, or nil when it can have none.
    typealias Prepare = @Sendable (EventRecord) throws -> Effect?
    private(set) var table: [String: Prepare] = [:]
    public private(set) var topics: Set<String> = []

    public init() {}

    public mutating func on<Payload: EventPayload>(
        _ type: Payload.Type, when relevant: (@Sendable (CloudEvent<Payload>) -> Bool)?,
        _ apply: @escaping @Sendable (CloudEvent<Payload>, inout Store) async throws -> Void
    ) {
        table[Payload.eventType] = { record in
            let event = try record.decode(as: Payload.self)
            guard relevant?(event) ?? true else { return nil }
            return { store in try await apply(event, &store) }
        }
        topics.insert(Payload.descriptor.topic.name)
    }
}

extension ReplayRoutes {
    /// A record read for a replay: its effect, or why it has none.
    enum Prepared: Sendable {
        /// A handled type; its effect, nil when the event can have none.
        case handled(id: UUID, type: String, Effect?)
        /// A type not handled here.
        case ignored
        case undecodable
    }
}
