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
        try await append([(record, topic)], on: connection, logger: logger)
    }

    /// The event a payload becomes, for writing several in one statement with `append(_:on:logger:)`.
    public func record<Payload: EventPayload>(_ payload: Payload, at time: Date, trace: TraceContext? = nil) throws -> (EventRecord, topic: String) {
        (try EventRecord(CloudEvent(source: source, time: time, trace: trace, data: payload)), Payload.descriptor.topic.name)
    }

    /// Several events in one statement (one round trip), in the order given.
    public func append(_ records: [(EventRecord, topic: String)], on connection: PostgresConnection, logger: Logger) async throws {
        guard !records.isEmpty else { return }
        var sql = PostgresQuery.StringInterpolation(literalCapacity: 256, interpolationCount: 11 * records.count)
        sql.appendLiteral(
            "INSERT INTO outbox (event_id, topic, partition_key, type, source, subject, occurred_at, traceparent, tracestate, request_id, payload) VALUES ")
        for (index, (record, topic)) in records.enumerated() {
            sql.appendLiteral(index == 0 ? "(" : ", (")
            for value: any PostgresThrowingDynamicTypeEncodable in [
                record.id, topic, record.partitionKey, record.type, record.source, record.subject, record.time,
            ] {
                try sql.appendInterpolation(value)
                sql.appendLiteral(", ")
            }
            for value in [record.trace.traceparent, record.trace.tracestate, record.trace.requestID] {
                sql.appendInterpolation(value)
                sql.appendLiteral(", ")
            }
            sql.appendInterpolation(String(decoding: record.data, as: UTF8.self))
            sql.appendLiteral("::jsonb)")
        }
        try await connection.query(PostgresQuery(stringInterpolation: sql), logger: logger)
    }
}
