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
        var duplicates = 0
        var boardWindows = 0
        var scores = 0
        var readSeconds = 0.0
        var applySeconds = 0.0
        var writeSeconds = 0.0

        var totalSeconds: Double { readSeconds + applySeconds + writeSeconds }
        var eventsPerSecond: Double { totalSeconds > 0 ? Double(events) / totalSeconds : 0 }

        var description: String {
            String(
                format: "rebuilt %d board windows (%d scores) from %d events (%d applied, %d duplicates, %d undecodable) in %.2f s: %.0f events/s (read %.2f s, apply %.2f s, write %.2f s)",
                boardWindows, scores, events, applied, duplicates, undecodable, totalSeconds, eventsPerSecond, readSeconds, applySeconds, writeSeconds)
        }
    }

    /// The rebuild's routes: each event type's decoding (done in parallel), and its effect on the memory store.
    struct Routes: EventRoutes, Sendable {
        typealias Effect = @Sendable (inout MemoryLeaderboardStore) async throws -> Void
        /// The event's effect, or nil when it can have none.
        typealias Prepare = @Sendable (EventRecord) throws -> Effect?
        var table: [String: Prepare] = [:]
        var topics: Set<String> = []

        mutating func on<Payload: EventPayload>(
            _ type: Payload.Type, when relevant: (@Sendable (CloudEvent<Payload>) -> Bool)?,
            _ apply: @escaping @Sendable (CloudEvent<Payload>, inout MemoryLeaderboardStore) async throws -> Void
        ) {
            table[Payload.eventType] = { record in
                let event = try record.decode(as: Payload.self)
                guard relevant?(event) ?? true else { return nil }
                return { store in try await apply(event, &store) }
            }
            topics.insert(Payload.descriptor.topic.name)
        }
    }

    /// One record read: its time and effect, or why it is skipped.
    enum Prepared: Sendable {
        case effect(id: UUID, type: String, time: Date, Routes.Effect)
        /// A type the leaderboard does not handle, or an event that can have no effect on it.
        case ignored(time: Date)
        case undecodable
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
        var applied: Set<UUID> = []
        for prepared in await Self.prepare(collected.partitions(), routes: routes) {
            report.events += 1
            switch prepared {
            case .effect(let id, let type, _, let effect):
                // Delivered more than once (a producer's retry): applied once, as the inbox does.
                guard applied.insert(id).inserted else {
                    report.duplicates += 1
                    continue
                }
                do {
                    try await effect(&store)
                    report.applied += 1
                    processed.append((id, type))
                } catch {
                    report.undecodable += 1
                    logger.warning("Event skipped by the rebuild", metadata: ["event.type": "\(type)", "event.id": "\(id)", "error": "\(error)"])
                }
            case .ignored:
                break
            case .undecodable:
                report.undecodable += 1
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

    /// Decodes every partition's records (partitions in parallel), then merges the partitions by event time, each
    /// kept in offset order.
    static func prepare(_ partitions: [[KafkaMessage]], routes: Routes) async -> [Prepared] {
        let decoded = await withTaskGroup(of: (Int, [Prepared]).self) { group in
            for (index, messages) in partitions.enumerated() {
                group.addTask {
                    (index, messages.map { message in
                        guard let record = try? EventRecord(
                            kafkaKey: message.key, value: message.value, headers: message.headers.map { ($0.name, $0.value) })
                        else { return .undecodable }
                        guard let prepare = routes.table[record.type] else { return .ignored(time: record.time) }
                        let effect: Routes.Effect?
                        do { effect = try prepare(record) } catch { return .undecodable }
                        guard let effect else { return .ignored(time: record.time) }
                        return .effect(id: record.id, type: record.type, time: record.time, effect)
                    })
                }
            }
            var decoded = Array(repeating: [Prepared](), count: partitions.count)
            for await (index, prepared) in group { decoded[index] = prepared }
            return decoded
        }
        var heads = Array(repeating: 0, count: decoded.count)
        var merged: [Prepared] = []
        merged.reserveCapacity(decoded.reduce(0) { $0 + $1.count })
        while true {
            var next: Int?
            for index in decoded.indices where heads[index] < decoded[index].count {
                if let best = next, decoded[best][heads[best]].time <= decoded[index][heads[index]].time { continue }
                next = index
            }
            guard let next else { return merged }
            merged.append(decoded[next][heads[next]])
            heads[next] += 1
        }
    }

    /// The records as read, per partition in offset order.
    final class Collected: Sendable {
        private let byPartition = Mutex<[KafkaTopicReader.Partition: [KafkaMessage]]>([:])

        func append(_ message: KafkaMessage) {
            byPartition.withLock { $0[KafkaTopicReader.Partition(topic: message.topic, partition: message.partition), default: []].append(message) }
        }

        /// Each partition's records, partitions in (topic, partition) order.
        func partitions() -> [[KafkaMessage]] {
            byPartition.withLock { $0 }.sorted { ($0.key.topic, $0.key.partition) < ($1.key.topic, $1.key.partition) }.map(\.value)
        }
    }
}

extension Rebuild.Prepared {
    /// When it happened; an undecodable record sorts first (it is only counted).
    var time: Date {
        switch self {
        case .effect(_, _, let time, _), .ignored(let time): time
        case .undecodable: .distantPast
        }
    }
}
