import Logging
import PostgresNIO
import SurgeContracts

/// The event types a consumer group handles, each with the effect it has inside the inbox transaction: the table the
/// consumer reads. Services fill it through `ConsumerRoutes` (`EventRoutes`), the one way to register a handler.
public struct EventHandlers: Sendable {
    /// Decodes a record (throwing if it cannot) and returns the effect to apply in the transaction, or nil when the
    /// event can have none here (it is then not recorded as processed: no transaction at all).
    typealias Prepared = @Sendable (PostgresConnection, Logger) async throws -> Void
    typealias Preparer = @Sendable (EventRecord) throws -> Prepared?

    private(set) var preparers: [String: Preparer] = [:]
    /// The topics the handled event types are published on.
    public private(set) var topics: Set<String> = []

    public init() {}

    /// Handles `Payload` events. The effect runs in the same transaction that records the event as processed; write
    /// any resulting events through the service's `Outbox` on the same connection.
    ///
    /// `relevant` says, from the event alone, whether it can have an effect here; one that cannot is passed over like
    /// a type the group does not handle, without a transaction (most check-ins mean nothing to a competition board,
    /// most points nothing to a weekly badge). It must be false only where `handle` would do nothing.
    mutating func on<Payload: EventPayload>(
        _ type: Payload.Type, when relevant: (@Sendable (CloudEvent<Payload>) -> Bool)? = nil,
        _ handle: @escaping @Sendable (CloudEvent<Payload>, PostgresConnection, Logger) async throws -> Void
    ) {
        preparers[Payload.eventType] = { record in
            let event = try record.decode(as: Payload.self)
            guard relevant?(event) ?? true else { return nil }
            return { connection, logger in try await handle(event, connection, logger) }
        }
        topics.insert(Payload.descriptor.topic.name)
    }

    /// Applies a record's effect on `connection` outside the consumer (a rebuild replaying history through the same
    /// handlers), if it can have one; false for a type not handled here. Throws when the record cannot be decoded or
    /// its effect fails.
    public func apply(_ record: EventRecord, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        guard let prepare = preparers[record.type] else { return false }
        try await prepare(record)?(connection, logger)
        return true
    }
}
