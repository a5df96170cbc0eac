import Foundation
import Logging
import PostgresNIO
import SurgeContracts

/// Writes integration events into the service's `outbox` table inside the caller's transaction, so an event exists
/// if and only if the state change that caused it committed. `OutboxRelay` publishes them.
public struct Outbox: Sendable {
    /// The CloudEvents `source` of everything this service emits, e.g. `/surge/identity`.
    public let source: String

    public init(service: String) {
        self.source = "/surge/\(service)"
    }

    @discardableResult
    public func append<Payload: EventPayload>(
        _ payload: Payload, on connection: PostgresConnection, at time: Date = Date(), trace: TraceContext? = nil,
        logger: Logger
    ) async throws -> UUID {
        let event = CloudEvent(source: source, time: time, trace: trace, data: payload)
        try await append(EventRecord(event), topic: Payload.descriptor.topic.name, on: connection, logger: logger)
        return event.id
    }

    public func append(_ record: EventRecord, topic: String, on connection: PostgresConnection, logger: Logger) async throws {
        let payload = String(decoding: record.data, as: UTF8.self)
        try await connection.query(
            """
            INSERT INTO outbox (event_id, topic, partition_key, type, source, subject, occurred_at,
                                traceparent, tracestate, request_id, payload)
            VALUES (\(record.id), \(topic), \(record.partitionKey), \(record.type), \(record.source), \(record.subject),
                    \(record.time), \(record.trace.traceparent), \(record.trace.tracestate), \(record.trace.requestID),
                    \(payload)::jsonb)
            """, logger: logger)
    }
}
