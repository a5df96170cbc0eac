import Logging
import PostgresNIO
import SurgeContracts

/// The event types a consumer group handles, each with the effect it has inside the inbox transaction.
public struct EventHandlers: Sendable {
    /// Decodes a record (throwing if it cannot) and returns the effect to apply in the transaction.
    typealias Prepared = @Sendable (PostgresConnection, Logger) async throws -> Void
    typealias Preparer = @Sendable (EventRecord) throws -> Prepared

    private(set) var preparers: [String: Preparer] = [:]
    /// The topics the handled event types are published on.
    public private(set) var topics: Set<String> = []

    public init() {}

    /// Handles `Payload` events. The effect runs in the same transaction that records the event as processed; write
    /// any resulting events through the service's `Outbox` on the same connection.
    public mutating func on<Payload: EventPayload>(
        _ type: Payload.Type,
        _ handle: @escaping @Sendable (CloudEvent<Payload>, PostgresConnection, Logger) async throws -> Void
    ) {
        preparers[Payload.eventType] = { record in
            let event = try record.decode(as: Payload.self)
            return { connection, logger in try await handle(event, connection, logger) }
        }
        topics.insert(Payload.descriptor.topic.name)
    }

    /// Applies a record's effect on `connection` outside the consumer (a rebuild replaying history through the same
    /// handlers); false for a type not handled here. Throws when the record cannot be decoded or its effect fails.
    public func apply(_ record: EventRecord, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        guard let prepare = preparers[record.type] else { return false }
        try await prepare(record)(connection, logger)
        return true
    }
}
