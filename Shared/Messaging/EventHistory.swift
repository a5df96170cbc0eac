import Foundation
import Logging
import NIOCore
import PostgresNIO
import SurgeContracts
import SurgeKafka
import SurgePostgres
import Synchronization

/// Every record of some topics from the earliest offset, in the order things happened: each partition in offset order
/// (as a consumer reads it), partitions merged by event time (ties by topic and partition). A record that cannot be
/// read as an event is nil and comes first among equals, so a rebuild can count it. Rebuilds replay this through a
/// service's own handlers.
public enum EventHistory {
    public static func read(_ topics: [String], configuration: KafkaConfiguration, logger: Logger) async throws -> [EventRecord?] {
        try await read(topics, configuration: configuration, logger: logger) { record in (record?.time ?? .distantPast, record) }
    }

    /// Reads the topics, making each record what `decode` makes of it (nil: it is no event) while reading goes on, then
    /// merges the partitions by the time `decode` gives, each kept in offset order.
    static func read<Decoded: Sendable>(
        _ topics: [String], configuration: KafkaConfiguration, logger: Logger, decode: @escaping @Sendable (EventRecord?) -> (Date, Decoded)
    ) async throws -> [Decoded] {
        var partitions = try await KafkaTopicReader(configuration: configuration, logger: logger).read(topics) { message in
            decode(try? EventRecord(kafkaKey: message.key, value: message.value, headers: message.headers.map { ($0.name, $0.value) }))
        }
        // The times apart from the values: the merge compares times only, and moves each value out of its partition
        // (from the back, so each partition is reversed first) rather than copying what it holds.
        let times = partitions.map { $0.map(\.0) }
        for index in partitions.indices { partitions[index].reverse() }
        var heads = Array(repeating: 0, count: partitions.count)
        var merged: [Decoded] = []
        merged.reserveCapacity(times.reduce(0) { $0 + $1.count })
        while true {
            var next = -1
            var earliest = Date.distantFuture
            for index in times.indices where heads[index] < times[index].count && (next < 0 || times[index][heads[index]] < earliest) {
                next = index
                earliest = times[index][heads[index]]
            }
            guard next >= 0 else { return merged }
            merged.append(partitions[next].removeLast().1)
            heads[next] += 1
        }
    }

    /// What a replay in memory did: counts, and its time reading (and decoding), applying and, in a rebuild, writing.
    public struct ReplayedInMemory: Sendable {
        public var events = 0
        public var applied = 0
        public var duplicates = 0
        /// Unreadable records, and those whose effect failed (the incremental path dead-lettered them).
        public var skipped = 0
        public var readSeconds = 0.0
        public var applySeconds = 0.0
        /// From the end of the apply to the commit (`rebuild`).
        public var writeSeconds = 0.0

        public init() {}

        public var totalSeconds: Double { readSeconds + applySeconds + writeSeconds }
        public var eventsPerSecond: Double { totalSeconds > 0 ? Double(events) / totalSeconds : 0 }

        /// "from N events (A applied, D duplicates, S skipped)", as a rebuild's report says it.
        public var counts: String { "from \(events) events (\(applied) applied, \(duplicates) duplicates, \(skipped) skipped)" }

        /// "in T s: R events/s (read …, apply …, write …)", as a rebuild's report says it.
        public var timing: String {
            String(
                format: "in %.2f s: %.0f events/s (read %.2f s, apply %.2f s, write %.2f s)", totalSeconds, eventsPerSecond, readSeconds, applySeconds,
                writeSeconds)
        }
    }

    /// A service's rebuild on `connection`, in one transaction opened before the first read: `replay` into `store`, its
    /// events recorded as processed by the consumer group `group` while it applies them (`recordingProcessed`), then
    /// `write` with the store it made, to replace the service's tables.
    public static func rebuild<Store>(
        _ routes: ReplayRoutes<Store>, into store: inout Store, group: String, on connection: PostgresConnection, configuration: KafkaConfiguration,
        logger: Logger, write: (Store) async throws -> Void
    ) async throws -> ReplayedInMemory {
        var replayed = ReplayedInMemory()
        var applied = ContinuousClock.now
        try await connection.transaction(logger: logger) {
            replayed = try await connection.recordingProcessed(consumer: group, logger: logger) { processed in
                try await replay(routes, into: &store, recording: &processed, configuration: configuration, logger: logger)
            }
            applied = .now
            try await write(store)
        }
        replayed.writeSeconds = (ContinuousClock.now - applied) / .seconds(1)
        return replayed
    }

    /// Every record of the routes' topics from the earliest offset, in the order `read` gives, applied to `store`
    /// in memory, a duplicate (a producer's retry) once. Each event that had an effect goes to `processed` as it is
    /// applied, to be recorded in the inbox; those of a handled type that can have none are counted as applied but not
    /// recorded (the consumer records the ones it passes over only for the record: nothing depends on those rows, and
    /// in a rebuild they are most of what would be written). A record that cannot be decoded, or whose effect fails, is
    /// skipped and counted.
    public static func replay<Store>(
        _ routes: ReplayRoutes<Store>, into store: inout Store, recording processed: inout ProcessedEventsCopy, configuration: KafkaConfiguration,
        logger: Logger
    ) async throws -> ReplayedInMemory {
        var replayed = ReplayedInMemory()
        var started = ContinuousClock.now
        let prepared = try await read(routes.topics.sorted(), configuration: configuration, logger: logger) { record -> (Date, ReplayRoutes<Store>.Prepared) in
            guard let record else { return (.distantPast, .undecodable) }
            guard let route = routes.table.index(forKey: record.type) else { return (record.time, .ignored) }
            // The table's own copy of the type: one string shared by every record of it, not one allocated per record.
            let (type, prepare) = routes.table[route]
            do {
                return (record.time, .handled(id: record.id, type: type, try prepare(record)))
            } catch {
                return (record.time, .undecodable)
            }
        }
        replayed.readSeconds = (ContinuousClock.now - started) / .seconds(1)
        started = ContinuousClock.now
        var applied: Set<UUID> = []
        for record in prepared {
            replayed.events += 1
            switch record {
            case .handled(let id, let type, let effect):
                guard applied.insert(id).inserted else {
                    replayed.duplicates += 1
                    continue
                }
                guard let effect else {
                    replayed.applied += 1
                    continue
                }
                do {
                    try await effect(&store)
                    replayed.applied += 1
                    try await processed.record(id, type: type)
                } catch {
                    replayed.skipped += 1
                    logger.warning("Event skipped by the rebuild", metadata: ["event.type": "\(type)", "event.id": "\(id)", "error": "\(error)"])
                }
            case .ignored:
                break
            case .undecodable:
                replayed.skipped += 1
            }
        }
        replayed.applySeconds = (ContinuousClock.now - started) / .seconds(1)
        discardInBackground(consume prepared)
        return replayed
    }

    /// Frees `value` on another thread: dropping hundreds of thousands of decoded records takes a while, and what the
    /// caller does next (write to PostgreSQL) mostly waits.
    private static func discardInBackground<Value: Sendable>(_ value: consuming Value) {
        let held = Held(value)
        DispatchQueue.global(qos: .utility).async { held.drop() }
    }

    private final class Held<Value: Sendable>: Sendable {
        private let value: Mutex<Value?>

        init(_ value: consuming Value) { self.value = Mutex(value) }

        func drop() { value.withLock { $0 = nil } }
    }

    /// What a replay did with the records it was given.
    public struct Replayed: Sendable {
        public var events = 0
        public var applied = 0
        public var duplicates = 0
        /// Unreadable records, and those whose handler failed (the incremental path dead-lettered them).
        public var skipped = 0
    }

    /// Applies `records` in order through `handlers` on `connection` (inside the caller's transaction), each recorded
    /// as processed by `group` as the inbox does, so a duplicate is applied once and the group's replicas, started
    /// again, pass over what was replayed. A record whose handler fails is rolled back alone and skipped. The caller
    /// has emptied `processed_events` (a rebuild starts from nothing), so duplicates are found in memory.
    ///
    /// Records go in chunks of `chunkSize`, each under one savepoint and recorded as processed in one statement; only
    /// a chunk in which a handler failed is rolled back and applied again one savepoint per record, so the failing
    /// record is skipped alone. A rebuild thus costs the handlers' own statements and little more.
    public static func replay(
        _ records: [EventRecord?], through handlers: EventHandlers, group: String, on connection: PostgresConnection, logger: Logger,
        chunkSize: Int = 1000
    ) async throws -> Replayed {
        var replayed = Replayed()
        var processed = Set<UUID>()
        var start = records.startIndex
        while start < records.endIndex {
            let chunk = records[start..<min(start + chunkSize, records.endIndex)]
            start = chunk.endIndex
            try await connection.query("SAVEPOINT chunk", logger: logger)
            var outcome: Chunk
            do {
                outcome = try await apply(chunk, through: handlers, after: processed, guarded: false, on: connection, logger: logger)
            } catch {
                try await connection.query("ROLLBACK TO SAVEPOINT chunk", logger: logger)
                outcome = try await apply(chunk, through: handlers, after: processed, guarded: true, on: connection, logger: logger)
            }
            try await connection.query(
                """
                INSERT INTO processed_events (consumer, event_id, event_type)
                SELECT \(group), id, type FROM unnest(\(outcome.processed.map(\.id))::uuid[], \(outcome.processed.map(\.type))::text[]) AS p (id, type)
                """, logger: logger)
            try await connection.query("RELEASE SAVEPOINT chunk", logger: logger)
            processed.formUnion(outcome.processed.map(\.id))
            replayed.events += chunk.count
            replayed.applied += outcome.applied
            replayed.duplicates += outcome.duplicates
            replayed.skipped += outcome.skipped
        }
        return replayed
    }

    private struct Chunk {
        var processed: [(id: UUID, type: String)] = []
        var applied = 0
        var duplicates = 0
        var skipped = 0
    }

    /// One chunk's records in order; `guarded` puts each under its own savepoint and skips the ones that fail.
    private static func apply(
        _ records: ArraySlice<EventRecord?>, through handlers: EventHandlers, after earlier: Set<UUID>, guarded: Bool, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> Chunk {
        var chunk = Chunk()
        var seen = Set<UUID>()
        for record in records {
            guard let record else {
                chunk.skipped += 1
                continue
            }
            guard !earlier.contains(record.id), seen.insert(record.id).inserted else {
                chunk.duplicates += 1
                continue
            }
            if guarded { try await connection.query("SAVEPOINT event", logger: logger) }
            do {
                if try await handlers.apply(record, on: connection, logger: logger) { chunk.applied += 1 }
                if guarded { try await connection.query("RELEASE SAVEPOINT event", logger: logger) }
            } catch where guarded {
                try await connection.query("ROLLBACK TO SAVEPOINT event", logger: logger)
                seen.remove(record.id)
                chunk.skipped += 1
                logger.warning("Event skipped by the rebuild", metadata: ["event.type": "\(record.type)", "event.id": "\(record.id)", "error": "\(error)"])
                continue
            }
            chunk.processed.append((record.id, record.type))
        }
        return chunk
    }
}

/// A rebuild's inbox rows (`processed_events`), streamed with `COPY` while the replay applies the events it records:
/// PostgreSQL parses and stores them on the other core meanwhile, instead of after the replay.
public struct ProcessedEventsCopy {
    private let writer: PostgresCopyFromWriter
    private let consumer: String
    private var buffer = ByteBuffer()

    fileprivate init(writer: PostgresCopyFromWriter, consumer: String) {
        self.writer = writer
        self.consumer = consumer
    }

    mutating func record(_ id: UUID, type: String) async throws {
        buffer.writeCopyRow([consumer, id.key, type])
        if buffer.readableBytes >= 1 << 18 { try await flush() }
    }

    fileprivate mutating func flush() async throws {
        guard buffer.readableBytes > 0 else { return }
        try await writer.write(buffer)
        buffer.clear()
    }
}

extension PostgresConnection {
    /// Empties `processed_events` in the caller's transaction and runs `replay`, whose events are copied into it as
    /// they are recorded (the table's indexes dropped meanwhile and built again after): the rows of the consumer group
    /// `consumer`, so that its replicas, started again, pass over what the rebuild applied.
    public func recordingProcessed<Result>(
        consumer: String, logger: Logger, _ replay: (inout ProcessedEventsCopy) async throws -> Result
    ) async throws -> Result {
        try await query("TRUNCATE processed_events", logger: logger)
        var result: Result?
        try await withIndexesRebuilt(on: "processed_events", logger: logger) {
            try await copyFrom(table: "processed_events", columns: ["consumer", "event_id", "event_type"], logger: logger) { writer in
                var copy = ProcessedEventsCopy(writer: writer, consumer: consumer)
                result = try await replay(&copy)
                try await copy.flush()
            }
        }
        return result!
    }
}
