import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgeRuntime
import Synchronization

/// `surge-leaderboard rebuild`: the boards and the directory rebuilt from the earliest offset of every topic the
/// leaderboard reads, with the same handlers as the incremental path (`LeaderboardEvents`) on a
/// `MemoryLeaderboardStore`, then written to PostgreSQL in one transaction.
///
/// Order: each partition in offset order (as the consumer reads it), partitions merged by event time (ties by topic,
/// partition, offset), which is the order things happened in. Nothing is published: no `rank.changed`, and the
/// windows already closed keep their revision (their standings are the same). Events that cannot be decoded are
/// skipped and counted (the incremental path parked them on the dead-letter topic). Every event applied is recorded
/// as processed by the consumer group in the same transaction: the group's offsets are left alone, and the replicas,
/// started again, pass over what the rebuild read as duplicates and go on from there. The replicas must be stopped
/// (they would change what the rebuild replaces): each running one holds `ChangeFeed.replicasLock` shared, and the
/// rebuild takes it exclusively or stops before reading.
enum Rebuild {
    struct Report: CustomStringConvertible {
        var events = 0
        var applied = 0
        var undecodable = 0
        var boardWindows = 0
        var scores = 0
        var readSeconds = 0.0
        var applySeconds = 0.0
        var writeSeconds = 0.0

        var totalSeconds: Double { readSeconds + applySeconds + writeSeconds }
        var eventsPerSecond: Double { totalSeconds > 0 ? Double(events) / totalSeconds : 0 }

        var description: String {
            String(
                format: "rebuilt %d board windows (%d scores) from %d events (%d applied, %d undecodable) in %.2f s: %.0f events/s (read %.2f s, apply %.2f s, write %.2f s)",
                boardWindows, scores, events, applied, undecodable, totalSeconds, eventsPerSecond, readSeconds, applySeconds, writeSeconds)
        }
    }

    /// The rebuild's routes: each event type's effect on the memory store.
    struct Routes: EventRoutes, Sendable {
        typealias Apply = @Sendable (EventRecord, inout MemoryLeaderboardStore) async throws -> Void
        var table: [String: Apply] = [:]
        var topics: Set<String> = []

        mutating func on<Payload: EventPayload>(
            _ type: Payload.Type, _ apply: @escaping @Sendable (CloudEvent<Payload>, inout MemoryLeaderboardStore) async throws -> Void
        ) {
            table[Payload.eventType] = { record, store in try await apply(try record.decode(as: Payload.self), &store) }
            topics.insert(Payload.descriptor.topic.name)
        }
    }

    static func run(_ settings: ServiceSettings, logger: Logger) async throws -> Report {
        let routes = {
            var routes = Routes()
            LeaderboardEvents.visit(&routes)
            return routes
        }()
        let group = "surge-\(settings.service)"
        let client = settings.database.makeClient(schema: settings.service, logger: logger)
        return try await PostgresClient.withRunning(client) { client in
            try await client.withConnection { connection in
                let locked = try await connection.query(
                    "SELECT pg_try_advisory_lock(hashtext(\(ChangeFeed.replicasLock)))", logger: logger
                ).collect().first?.decode(Bool.self) ?? false
                guard locked else { throw RebuildError.replicasRunning }
                return try await rebuild(routes: routes, group: group, settings: settings, connection: connection, logger: logger)
            }
        }
    }

    enum RebuildError: Error, CustomStringConvertible {
        case replicasRunning

        var description: String { "replicas of the leaderboard are running: stop them (scale to zero) first" }
    }

    private static func rebuild(routes: Routes, group: String, settings: ServiceSettings, connection: PostgresConnection, logger: Logger)
        async throws -> Report
    {
        let reader = try KafkaTopicReader(configuration: settings.kafka, logger: logger)
        var report = Report()

        var started = ContinuousClock.now
        let collected = Collected()
        _ = try await reader.readAll(routes.topics.sorted()) { message in collected.append(message) }
        report.readSeconds = seconds(since: started)

        started = ContinuousClock.now
        var store = MemoryLeaderboardStore()
        var processed: [(id: UUID, type: String)] = []
        for message in collected.inEventOrder() {
            report.events += 1
            guard let record = try? EventRecord(kafkaKey: message.key, value: message.value, headers: message.headers.map { ($0.name, $0.value) })
            else {
                report.undecodable += 1
                continue
            }
            guard let apply = routes.table[record.type] else { continue }
            do {
                try await apply(record, &store)
                report.applied += 1
                processed.append((record.id, record.type))
            } catch {
                report.undecodable += 1
                logger.warning("Event skipped by the rebuild", metadata: ["event.type": "\(record.type)", "event.id": "\(record.id)", "error": "\(error)"])
            }
        }
        report.applySeconds = seconds(since: started)

        started = ContinuousClock.now
        try await connection.query("BEGIN", logger: logger)
        do {
            (report.boardWindows, report.scores) = try await RebuildWriter.write(store, on: connection, logger: logger)
            try await RebuildWriter.markProcessed(processed, consumer: group, on: connection, logger: logger)
            try await connection.query("COMMIT", logger: logger)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
        report.writeSeconds = seconds(since: started)
        return report
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The records as read, per partition in offset order.
    final class Collected: Sendable {
        private let partitions = Mutex<[KafkaTopicReader.Partition: [KafkaMessage]]>([:])

        func append(_ message: KafkaMessage) {
            partitions.withLock { $0[KafkaTopicReader.Partition(topic: message.topic, partition: message.partition), default: []].append(message) }
        }

        /// Partitions merged by event time, each kept in offset order.
        func inEventOrder() -> [KafkaMessage] {
            let sorted = partitions.withLock { $0 }.sorted { ($0.key.topic, $0.key.partition) < ($1.key.topic, $1.key.partition) }
            let queues = sorted.map(\.value)
            let times = queues.map { $0.map(Self.time(of:)) }
            var heads = Array(repeating: 0, count: queues.count)
            var merged: [KafkaMessage] = []
            merged.reserveCapacity(queues.reduce(0) { $0 + $1.count })
            while true {
                var next: Int?
                for index in queues.indices where heads[index] < queues[index].count {
                    if let best = next, times[best][heads[best]] <= times[index][heads[index]] { continue }
                    next = index
                }
                guard let next else { return merged }
                merged.append(queues[next][heads[next]])
                heads[next] += 1
            }
        }

        private static func time(of message: KafkaMessage) -> Date {
            message.header(EventRecord.Header.time).flatMap(Timestamp.parse) ?? .distantPast
        }
    }
}
