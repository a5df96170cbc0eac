import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres

/// Writes integration events into the service's `outbox` table inside the caller's transaction, so an event exists
/// if and only if the state change that caused it committed. `OutboxRelay` publishes them.
///
/// Once the transaction commits, the relay is told at once (`written`); a relay of another replica, or an event written
/// outside `PostgresClient.transaction`, waits for the relay's next poll.
public struct Outbox: Sendable {
    /// The CloudEvents `source` of everything this service emits, e.g. `/surge/identity`.
    public let source: String
    /// Rung when a transaction that wrote events has committed; the relay waits on it.
    let written = Doorbell()

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
        try await connection.execute(InsertEvents(records), logger: logger)
        ringOnCommit()
    }

    /// Tells the relay once the current transaction has committed.
    func ringOnCommit() {
        let written = self.written
        if let afterCommit = AfterCommit.current { afterCommit.add { written.ring() } }
    }
}

/// The outbox's insert, prepared once per connection (PostgreSQL plans it once, not on every write).
struct InsertEvents: PostgresPreparedStatement {
    static let sql = "WITH \(OutboxInsert.sql(from: 1))"
    typealias Row = ()

    let insert: OutboxInsert

    init(_ records: [(EventRecord, topic: String)]) { self.insert = OutboxInsert(records) }

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings(capacity: OutboxInsert.parameters)
        insert.appendBindings(to: &bindings)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}

/// Events written by another statement of the unit of work, in the same round trip as that statement's own change
/// (a command's last update): `sql(from:)` ends the statement's `WITH` list, binding one array per column from the
/// given parameter on, a row per event in the arrays' order. A missing trace field travels as an empty string. No
/// events is an empty insert.
public struct OutboxInsert: Sendable {
    public static let parameters = 11
    let records: [(EventRecord, topic: String)]

    init(_ records: [(EventRecord, topic: String)]) { self.records = records }

    /// The last part of a `WITH` statement: the events' insert as a CTE and the pending list's insert as the statement.
    public static func sql(from first: Int) -> String {
        let arrays = ["uuid", "text", "text", "text", "text", "text", "timestamptz", "text", "text", "text", "text"].enumerated()
            .map { "$\(first + $0.offset)::\($0.element)[]" }.joined(separator: ", ")
        return """
            written AS (
                INSERT INTO outbox (event_id, topic, partition_key, type, source, subject, occurred_at, traceparent, tracestate, request_id, payload)
                SELECT id, topic, key, type, source, subject, time, NULLIF(traceparent, ''), NULLIF(tracestate, ''), NULLIF(request_id, ''),
                       payload::json
                FROM unnest(\(arrays))
                     WITH ORDINALITY AS event(id, topic, key, type, source, subject, time, traceparent, tracestate, request_id, payload, position)
                ORDER BY position
                RETURNING position
            )
            INSERT INTO outbox_pending (position) SELECT position FROM written
            """
    }

    public func appendBindings(to bindings: inout PostgresBindings) {
        bindings.append(records.map(\.0.id))
        bindings.append(records.map(\.topic))
        bindings.append(records.map(\.0.partitionKey))
        bindings.append(records.map(\.0.type))
        bindings.append(records.map(\.0.source))
        bindings.append(records.map(\.0.subject))
        bindings.append(records.map(\.0.time))
        bindings.append(records.map { $0.0.trace.traceparent ?? "" })
        bindings.append(records.map { $0.0.trace.tracestate ?? "" })
        bindings.append(records.map { $0.0.trace.requestID ?? "" })
        bindings.append(records.map { String(decoding: $0.0.data, as: UTF8.self) })
    }
}

/// The events a unit of work causes, written on its connection so that they commit with it (`Outbox`).
public struct EventOutbox {
    let outbox: Outbox
    let connection: PostgresConnection
    let logger: Logger

    public init(outbox: Outbox, connection: PostgresConnection, logger: Logger) {
        self.outbox = outbox
        self.connection = connection
        self.logger = logger
    }

    public func append<Payload: EventPayload>(_ payload: Payload, at time: Date, trace: TraceContext?) async throws {
        try await outbox.append(payload, on: connection, at: time, trace: trace, logger: logger)
    }

    /// The event a payload becomes, to write several in one statement with `append(_:)`.
    public func record<Payload: EventPayload>(_ payload: Payload, at time: Date, trace: TraceContext?) throws -> (EventRecord, topic: String) {
        try outbox.record(payload, at: time, trace: trace)
    }

    /// Several events in one statement (one round trip), in the order given.
    public func append(_ events: [(EventRecord, topic: String)]) async throws {
        try await outbox.append(events, on: connection, logger: logger)
    }

    /// Several events, in the order given, for another statement of the unit of work to write with its own change.
    public func insert(_ events: [(EventRecord, topic: String)]) -> OutboxInsert {
        if !events.isEmpty { outbox.ringOnCommit() }
        return OutboxInsert(events)
    }
}
