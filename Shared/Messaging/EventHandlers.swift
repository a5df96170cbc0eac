import Logging
import PostgresNIO
import SurgeContracts

/// The event types a consumer group handles, each with the effect it has inside the inbox transaction.
public struct EventHandlers: Sendable {
    /// Decodes a record (throwing if it cannot) and returns the effect to apply in the transaction.
    typealias Prepared = @Sendable (PostgresConnection, Logger) async throws -> Void
    typealias Preparer = @Sendable (EventRecord) throws -> Prepared

    private(set) var preparers: [String: Preparer] = [:]
    private(set) var topics: Set<String> = []

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
}
