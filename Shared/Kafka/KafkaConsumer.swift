import CRdKafka
import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// A consumer-group member that hands records to a handler and stores each record's offset only after the handler
/// returned, so a crash redelivers rather than skips.
///
/// Records are polled in batches on a dedicated Dispatch queue. Within a batch, each partition's records are handled
/// in order and partitions run concurrently. The next poll waits until the whole batch is handled and its offsets
/// stored. A rebalance, which librdkafka runs inside a poll, can still revoke a partition during the polls that fill
/// a batch: its records are then handled anyway, their offsets are not stored, and the new owner receives them
/// again, which the inbox makes harmless. Stored offsets are committed in the background, on revocation and on close.
///
/// `close()` (also run at the end of `run()`) is safe while other tasks poll or check connectivity: librdkafka calls
/// already running finish first, later ones throw `KafkaError.closed`. If librdkafka refuses a partition assignment
/// during a rebalance, the member would hold partitions it does not consume (or consume ones it gave away): the error
/// is logged and counted, `checkConnectivity` throws it, and `run()` closes the consumer and throws it so that the
/// process restarts.
public final class KafkaConsumer: Service, Sendable {
    /// What became of a record. An abandoned record's offset is not stored and its partition is rewound to it, so
    /// it is consumed again (by this member or, after shutdown, by the next owner).
    public enum Outcome: Sendable { case handled, abandoned }
    public typealias Handler = @Sendable (KafkaMessage) async -> Outcome
    /// Handles one partition's records of a poll, in order, and returns how many of them (from the first) were
    /// handled; the record after those is abandoned.
    public typealias PartitionHandler = @Sendable ([KafkaMessage]) async -> Int
    /// Handles a whole poll at once: each element is one partition's records, in order; returns, per element, how
    /// many of its records (from the first) were handled.
    public typealias BatchHandler = @Sendable ([[KafkaMessage]]) async -> [Int]

    public static let defaultProperties: [String: String] = [
        "enable.auto.commit": "true",
        "auto.commit.interval.ms": "1000",
        "enable.auto.offset.store": "false",
        "auto.offset.reset": "earliest",
        "enable.partition.eof": "false",
        // What librdkafka fetches ahead of the handlers. Its defaults (64 MiB, at least 100,000 messages) let a
        // consumer behind a flood of events hold well over 100 MiB; a few seconds of backlog keep the handlers busy.
        "queued.max.messages.kbytes": "16384",
        "queued.min.messages": "10000",
        // librdkafka's own figures (queues, broker round trips) as gauges: `KafkaStatistics`.
        "statistics.interval.ms": "15000",
    ]

    public let groupID: String
    public let topics: [String]
    private let handle: KafkaHandle
    private let context: ConsumerCallbackContext
    private let queue: DispatchQueue
    private let handler: BatchHandler
    private let maxBatchSize: Int
    private let logger: Logger
    private let delays = HandlingDelays()

    public convenience init(
        configuration: KafkaConfiguration, groupID: String, topics: [String], maxBatchSize: Int = 256,
        logger: Logger, handler: @escaping Handler
    ) throws {
        try self.init(
            configuration: configuration, groupID: groupID, topics: topics, maxBatchSize: maxBatchSize, logger: logger,
            partitionHandler: { messages in
                for (index, message) in messages.enumerated() where await handler(message) == .abandoned { return index }
                return messages.count
            })
    }

    /// The partitions of a poll are handled concurrently, each by `handler`.
    public convenience init(
        configuration: KafkaConfiguration, groupID: String, topics: [String], maxBatchSize: Int = 256,
        logger: Logger, partitionHandler handler: @escaping PartitionHandler
    ) throws {
        try self.init(
            configuration: configuration, groupID: groupID, topics: topics, maxBatchSize: maxBatchSize, logger: logger,
            batchHandler: { partitions in
                await withTaskGroup(of: (Int, Int).self) { group in
                    for (index, messages) in partitions.enumerated() {
                        group.addTask { (index, await handler(messages)) }
                    }
                    var counts = [Int](repeating: 0, count: partitions.count)
                    for await (index, count) in group { counts[index] = count }
                    return counts
                }
            })
    }

    public init(
        configuration: KafkaConfiguration, groupID: String, topics: [String], maxBatchSize: Int = 256,
        logger: Logger, batchHandler handler: @escaping BatchHandler
    ) throws {
        var properties = try configuration.merged(over: Self.defaultProperties, configuration.consumerProperties)
        properties["group.id"] = groupID
        let context = ConsumerCallbackContext(logger: logger, groupID: groupID)
        self.handle = try KafkaHandle(type: RD_KAFKA_CONSUMER, properties: properties, context: context) { conf in
            rd_kafka_conf_set_rebalance_cb(conf, consumerRebalanceCallback)
        }
        let redirected = try handle.withPointer { pointer in rd_kafka_poll_set_consumer(pointer) }
        guard redirected == RD_KAFKA_RESP_ERR_NO_ERROR else {
            handle.destroy()
            throw KafkaError(redirected)
        }
        self.context = context
        self.groupID = groupID
        self.topics = topics
        self.queue = DispatchQueue(label: "kafka-consumer-\(groupID)")
        self.handler = handler
        self.maxBatchSize = maxBatchSize
        self.logger = logger
    }

    deinit {
        // Does nothing when already closed; otherwise rd_kafka_destroy leaves the group itself.
        let context = self.context
        handle.destroy { _ in context.closing.store(true, ordering: .sequentiallyConsistent) }
    }

    /// Partitions currently assigned to this member.
    public var assignedPartitionCount: Int { context.assignedPartitions.load(ordering: .relaxed) }

    /// Polls and handles records until graceful shutdown, cancellation or `close()`, then closes. Throws
    /// `KafkaError.closed` when the consumer was closed before, and a partition assignment error (see above).
    public func run() async throws {
        try subscribe()
        let stopping = Atomic<Bool>(false)
        let context = self.context
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.reportLag() }
            await withGracefulShutdownHandler {
                while !stopping.load(ordering: .relaxed), !Task.isCancelled, context.assignmentFailure == nil {
                    // Throws only `KafkaError.closed`: someone called `close()`.
                    guard let batch = try? await poll() else { break }
                    guard !batch.isEmpty else { continue }
                    let progress = await handle(batch)
                    storeOffsets(progress.handled)
                    await rewind(to: progress.abandoned)
                }
            } onGracefulShutdown: {
                stopping.store(true, ordering: .relaxed)
            }
            group.cancelAll()
        }
        let failure = context.assignmentFailure
        await close()
        if let failure { throw failure }
    }

    /// Succeeds when a broker answered a metadata request within the timeout and no partition assignment failed;
    /// throws `KafkaError.closed` once the consumer is closing.
    public func checkConnectivity(timeout: Duration = .seconds(2)) async throws {
        if let failure = context.assignmentFailure { throw failure }
        let handle = self.handle
        if let error = await offThePool({ handle.fetchMetadata(timeout: timeout) }) { throw error }
    }

    private func subscribe() throws {
        let list = rd_kafka_topic_partition_list_new(Int32(topics.count))
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for topic in topics { rd_kafka_topic_partition_list_add(list, topic, RD_KAFKA_PARTITION_UA) }
        let error = try handle.withPointer { pointer in rd_kafka_subscribe(pointer, list) }
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error) }
        logger.info("Kafka consumer subscribed", metadata: ["group": "\(groupID)", "topics": "\(topics.joined(separator: ","))"])
    }

    /// Polls one batch on the consumer's queue; throws `KafkaError.closed` once the consumer is closing.
    private func poll() async throws(KafkaError) -> [KafkaMessage] {
        let handle = self.handle
        let maxBatchSize = self.maxBatchSize
        let logger = self.logger
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[KafkaMessage], KafkaError>, Never>) in
            queue.async {
                continuation.resume(
                    returning: Result { () throws(KafkaError) -> [KafkaMessage] in
                        try handle.withPointer { pointer in
                            var batch: [KafkaMessage] = []
                            var timeout: Int32 = 100
                            while batch.count < maxBatchSize, let message = rd_kafka_consumer_poll(pointer, timeout) {
                                timeout = 0
                                defer { rd_kafka_message_destroy(message) }
                                if message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR {
                                    batch.append(KafkaMessage(copying: message))
                                } else {
                                    logger.warning("Kafka consumer error", metadata: ["error": "\(KafkaError(message.pointee.err))"])
                                }
                            }
                            return batch
                        }
                    })
            }
        }
        return try result.get()
    }

    private struct BatchProgress {
        /// Per partition, the offset after the last record handled.
        var handled: [PartitionID: Int64] = [:]
        /// Per partition, the first record abandoned.
        var abandoned: [PartitionID: Int64] = [:]
    }

    private func handle(_ batch: [KafkaMessage]) async -> BatchProgress {
        var order: [PartitionID] = []
        var byPartition: [PartitionID: [KafkaMessage]] = [:]
        for message in batch {
            let partition = PartitionID(topic: message.topic, partition: message.partition)
            if byPartition[partition] == nil { order.append(partition) }
            byPartition[partition, default: []].append(message)
        }
        let partitions = order.map { byPartition[$0]! }
        let counts = await handler(partitions)
        var progress = BatchProgress()
        for (partition, (messages, count)) in zip(order, zip(partitions, counts)) {
            if let produced = messages.first?.timestampMilliseconds { delays.recordHandled(topic: partition.topic, producedMilliseconds: produced) }
            Counter(label: "surge_kafka_consumed_total", dimensions: [("topic", partition.topic), ("group", groupID)]).increment(by: count)
            progress.handled[partition] = count > 0 ? messages[count - 1].offset + 1 : nil
            progress.abandoned[partition] = count < messages.count ? messages[count].offset : nil
        }
        return progress
    }

    /// Every second until cancelled: `surge_kafka_consumer_lag_seconds{group, topic}` (see `HandlingDelays`) and
    /// `surge_kafka_consumer_lag{group, topic}`, as Kafka's own tools count it: the
    /// records on this member's partitions after the group's committed offset (the partition's end as last fetched,
    /// minus the committed offset; the whole partition when nothing is committed). Offsets are committed every second
    /// once handled, so the gauge trails by about that. It runs beside the poll loop, so a stuck handler shows as
    /// growing lag. A topic this member no longer holds reads 0, so a sum over replicas counts each partition once.
    private func reportLag() async {
        var reported: Set<String> = []
        while !Task.isCancelled {
            // An unanswered question (a rebalance, the coordinator away) leaves the gauges as they were.
            guard let lag = try? await offThePool({ () throws(KafkaError) -> [String: Int64] in try self.currentLag() }) else {
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            let waited = delays.takeWaits(waiting: Set(lag.filter { $0.value > 0 }.keys))
            for topic in reported.union(lag.keys) {
                let records = lag[topic] ?? 0
                Gauge(label: "surge_kafka_consumer_lag", dimensions: [("group", groupID), ("topic", topic)]).record(records)
                Gauge(label: "surge_kafka_consumer_lag_seconds", dimensions: [("group", groupID), ("topic", topic)])
                    .record(waited[topic] ?? 0)
            }
            reported.formUnion(lag.keys)
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Blocks for at most a second: the committed offsets come from the group coordinator; the watermarks are the
    /// ones librdkafka last fetched.
    private func currentLag() throws(KafkaError) -> [String: Int64] {
        try handle.withPointer { pointer throws(KafkaError) -> [String: Int64] in
            var assignment: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
            guard rd_kafka_assignment(pointer, &assignment) == RD_KAFKA_RESP_ERR_NO_ERROR, let list = assignment else { return [:] }
            defer { rd_kafka_topic_partition_list_destroy(list) }
            guard list.pointee.cnt > 0 else { return [:] }
            let committed = rd_kafka_committed(pointer, list, 1000)
            guard committed == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(committed) }
            var lag: [String: Int64] = [:]
            for index in 0..<Int(list.pointee.cnt) {
                let element = list.pointee.elems[index]
                let topic = String(cString: element.topic)
                var low: Int64 = 0
                var high: Int64 = -1
                guard rd_kafka_get_watermark_offsets(pointer, element.topic, element.partition, &low, &high) == RD_KAFKA_RESP_ERR_NO_ERROR,
                    high >= 0
                else { continue }
                lag[topic, default: 0] += max(0, high - (element.offset >= 0 ? element.offset : low))
            }
            return lag
        }
    }

    private func storeOffsets(_ next: [PartitionID: Int64]) {
        guard !next.isEmpty else { return }
        let list = rd_kafka_topic_partition_list_new(Int32(next.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for (id, offset) in next {
            rd_kafka_topic_partition_list_add(list, id.topic, id.partition).pointee.offset = offset
        }
        let error: rd_kafka_resp_err_t
        do {
            error = try handle.withPointer { pointer in rd_kafka_offsets_store(pointer, list) }
        } catch {
            logger.info("Kafka offsets not stored: the consumer is closing")
            return
        }
        if error != RD_KAFKA_RESP_ERR_NO_ERROR {
            // A partition revoked while we worked: its new owner will see the record again; the inbox makes that safe.
            logger.info("Kafka offsets not stored", metadata: ["error": "\(KafkaError(error))"])
        }
    }

    private func rewind(to offsets: [PartitionID: Int64]) async {
        guard !offsets.isEmpty else { return }
        let handle = self.handle
        let logger = self.logger
        let targets = offsets.map { ($0.key.topic, $0.key.partition, $0.value) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                let list = rd_kafka_topic_partition_list_new(Int32(targets.count))!
                defer { rd_kafka_topic_partition_list_destroy(list) }
                for (topic, partition, offset) in targets {
                    rd_kafka_topic_partition_list_add(list, topic, partition).pointee.offset = offset
                }
                do {
                    if let error = try handle.withPointer({ pointer in rd_kafka_seek_partitions(pointer, list, 5000) }) {
                        logger.warning("Kafka seek failed", metadata: ["error": "\(KafkaError(consuming: error))"])
                    }
                } catch {
                    // Closing: the abandoned records are not committed, so the next owner receives them.
                    logger.info("Kafka seek skipped: the consumer is closing")
                }
                continuation.resume()
            }
        }
    }

    /// Leaves the group (committing stored offsets) and frees the handle, after the librdkafka calls in flight (a
    /// poll, a connectivity check) returned. `run()` then stops, and later calls throw `KafkaError.closed`. Safe to
    /// call more than once and concurrently: every call returns once the handle is destroyed.
    public func close() async {
        let handle = self.handle
        let context = self.context
        let logger = self.logger
        let closedHere = await offThePool {
            handle.destroy { pointer in
                // Assignment errors while leaving the group are logged, not raised: the member is going away.
                context.closing.store(true, ordering: .sequentiallyConsistent)
                let error = rd_kafka_consumer_close(pointer)
                if error != RD_KAFKA_RESP_ERR_NO_ERROR {
                    logger.warning("Kafka consumer close failed", metadata: ["error": "\(KafkaError(error))"])
                }
            }
        }
        if closedHere { logger.info("Kafka consumer closed", metadata: ["group": "\(groupID)"]) }
    }
}

private struct PartitionID: Hashable {
    var topic: String
    var partition: Int32
}

final class ConsumerCallbackContext: KafkaCallbackContext, @unchecked Sendable {
    let groupID: String
    let assignedPartitions = Atomic<Int>(0)
    /// Set once `rd_kafka_consumer_close` starts.
    let closing = Atomic<Bool>(false)
    private let failure = Mutex<KafkaError?>(nil)

    init(logger: Logger, groupID: String) {
        self.groupID = groupID
        super.init(logger: logger)
    }

    /// The first partition assignment librdkafka refused while the member was not closing.
    var assignmentFailure: KafkaError? { failure.withLock { $0 } }

    func assignmentChanged(by delta: Int, replace: Bool) {
        let count: Int
        if replace {
            assignedPartitions.store(delta, ordering: .relaxed)
            count = delta
        } else {
            count = assignedPartitions.add(delta, ordering: .relaxed).newValue
        }
        Gauge(label: "surge_kafka_assigned_partitions", dimensions: [("group", groupID)]).record(count)
    }

    /// Logs and counts a refused (un)assignment and, unless closing, keeps it for `checkConnectivity` and `run()`.
    func assignmentFailed(_ operation: String, _ error: KafkaError) {
        let closing = closing.load(ordering: .sequentiallyConsistent)
        logger.log(
            level: closing ? .warning : .error, "Kafka partition \(operation) failed",
            metadata: ["group": "\(groupID)", "error": "\(error)", "closing": "\(closing)"])
        Counter(label: "surge_kafka_assign_errors_total", dimensions: [("group", groupID)]).increment()
        guard !closing else { return }
        failure.withLock { failure in
            guard failure == nil else { return }
            if case .broker(let code, let message) = error {
                failure = .broker(code: code, message: "partition \(operation) failed: \(message)")
            } else {
                failure = error
            }
        }
    }

    /// Runs `rd_kafka_assign` (nil `partitions` unassigns all) and records the outcome.
    func assign(_ handle: OpaquePointer, _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, count: Int) {
        let error = rd_kafka_assign(handle, partitions)
        if error == RD_KAFKA_RESP_ERR_NO_ERROR {
            assignmentChanged(by: partitions == nil ? 0 : count, replace: true)
        } else {
            assignmentFailed(partitions == nil ? "unassignment" : "assignment", KafkaError(error))
        }
    }

    /// Runs `rd_kafka_incremental_assign` or `_unassign` and records the outcome.
    func incrementalAssign(_ handle: OpaquePointer, _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, count: Int, adding: Bool) {
        let error = adding ? rd_kafka_incremental_assign(handle, partitions) : rd_kafka_incremental_unassign(handle, partitions)
        if let error {
            assignmentFailed(adding ? "assignment" : "unassignment", KafkaError(consuming: error))
        } else {
            assignmentChanged(by: adding ? count : -count, replace: false)
        }
    }
}

/// Applies assignments and, before giving partitions away, synchronously commits the offsets stored so far. Runs inside
/// `rd_kafka_consumer_poll` or `rd_kafka_consumer_close`, which hold the handle, so it uses `handle` directly.
private let consumerRebalanceCallback: @convention(c) (
    OpaquePointer?, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, UnsafeMutableRawPointer?
) -> Void = { handle, reason, partitions, _ in
    guard let handle, let context = KafkaCallbackContext.from(handle) as? ConsumerCallbackContext else { return }
    let cooperative = rd_kafka_rebalance_protocol(handle).map { String(cString: $0) } == "COOPERATIVE"
    let count = Int(partitions?.pointee.cnt ?? 0)
    switch reason {
    case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
        context.logger.info("Kafka partitions assigned", metadata: ["group": "\(context.groupID)", "count": "\(count)"])
        if cooperative {
            context.incrementalAssign(handle, partitions, count: count, adding: true)
        } else {
            context.assign(handle, partitions, count: count)
        }
    case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
        context.logger.info("Kafka partitions revoked", metadata: ["group": "\(context.groupID)", "count": "\(count)"])
        let commit = rd_kafka_commit(handle, nil, 0)
        if commit != RD_KAFKA_RESP_ERR_NO_ERROR, commit != RD_KAFKA_RESP_ERR__NO_OFFSET {
            context.logger.warning("Kafka commit on revoke failed", metadata: ["error": "\(KafkaError(commit))"])
        }
        if cooperative {
            context.incrementalAssign(handle, partitions, count: count, adding: false)
        } else {
            context.assign(handle, nil, count: 0)
        }
    default:
        context.logger.error("Kafka rebalance error", metadata: ["error": "\(KafkaError(reason))"])
        context.assign(handle, nil, count: 0)
    }
}

/// How far behind the producers a consumer runs, in time: for each topic, the longest a record handled since the last
/// report had waited since it was produced (the first of each partition's batch, the oldest). When nothing was handled
/// since and records wait, how long they have been waiting unhandled (from the first report that saw them), so a stuck
/// handler shows as growing seconds; 0 when nothing waits.
private final class HandlingDelays: Sendable {
    private struct Topic {
        var longestWait: Double = 0
        var handledSinceReport = false
        var waitingSince: ContinuousClock.Instant?
    }

    private let topics = Mutex<[String: Topic]>([:])

    func recordHandled(topic: String, producedMilliseconds: Int64) {
        let waited = max(0, Date().timeIntervalSince1970 - Double(producedMilliseconds) / 1000)
        topics.withLock { topics in
            var entry = topics[topic] ?? Topic()
            entry.longestWait = entry.handledSinceReport ? max(entry.longestWait, waited) : waited
            entry.handledSinceReport = true
            topics[topic] = entry
        }
    }

    /// Per topic, the seconds to report now, given the topics whose records wait; starts the next reporting interval.
    func takeWaits(waiting: Set<String>) -> [String: Double] {
        let now = ContinuousClock.now
        return topics.withLock { topics in
            var waits: [String: Double] = [:]
            for name in Set(topics.keys).union(waiting) {
                var entry = topics[name] ?? Topic()
                if entry.handledSinceReport {
                    waits[name] = entry.longestWait
                    entry.waitingSince = nil
                } else if waiting.contains(name) {
                    let since = entry.waitingSince ?? now
                    entry.waitingSince = since
                    let idle = now - since
                    waits[name] = Double(idle.components.seconds) + Double(idle.components.attoseconds) / 1e18
                } else {
                    waits[name] = 0
                    entry.waitingSince = nil
                }
                entry.handledSinceReport = false
                topics[name] = entry
            }
            return waits
        }
    }
}
