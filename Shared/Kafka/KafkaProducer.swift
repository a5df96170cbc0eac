import CRdKafka
import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// An idempotent producer (`acks=all`) whose `send` returns once the broker acknowledged the record.
///
/// Delivery reports are served on a dedicated thread from creation. Run it as a `Service`: on graceful shutdown
/// `run()` flushes what is in flight, then closes. Services that produce must be listed after it in the service group so that
/// they stop first. After a fatal error (such as the idempotent producer losing its sequence with the broker) every send
/// fails for good, so `run()` throws, which stops the service group and lets the orchestrator restart the process.
///
/// Closing (`close()`, the end of `run()`, or deinit) is safe while other tasks send, flush or check connectivity:
/// librdkafka calls already running finish before the handle is destroyed, calls made afterwards throw
/// `KafkaError.closed`, and every record not yet acknowledged fails with `KafkaError.closed`.
public final class KafkaProducer: Service, Sendable {
    public static let defaultProperties: [String: String] = [
        "enable.idempotence": "true",
        "acks": "all",
        "linger.ms": "5",
        "message.timeout.ms": "30000",
        "partitioner": "murmur2_random",
        // librdkafka's own figures (queues, broker round trips) as gauges: `KafkaStatistics`.
        "statistics.interval.ms": "15000",
    ]

    private let handle: KafkaHandle
    private let deliveries: DeliveryTracker
    private let poller: BlockingLoop
    private let metricsByTopic = Mutex<[String: TopicMetrics]>([:])
    private let logger: Logger

    public init(configuration: KafkaConfiguration, logger: Logger) throws {
        let deliveries = DeliveryTracker()
        let context = ProducerCallbackContext(logger: logger, deliveries: deliveries)
        self.handle = try KafkaHandle(
            type: RD_KAFKA_PRODUCER, properties: try configuration.merged(over: Self.defaultProperties, configuration.producerProperties), context: context
        ) { conf in
            rd_kafka_conf_set_dr_msg_cb(conf, producerDeliveryCallback)
        }
        self.deliveries = deliveries
        self.logger = logger
        let handle = self.handle
        // Serves delivery reports until the handle starts closing: `destroy` waits for the poll in flight.
        self.poller = BlockingLoop(name: "kafka-producer-poll") {
            (try? handle.withPointer { pointer in _ = rd_kafka_poll(pointer, 100) }) != nil
        }
        poller.start()
    }

    deinit {
        closeNow()
    }

    /// The latest statistics librdkafka reported for this producer (`KafkaStatistics`), nil before the first.
    var statistics: KafkaStatistics? { handle.context.statistics.withLock { $0 } }

    /// Produces one record and waits for the broker's acknowledgement.
    public func send(_ record: KafkaRecord) async throws -> KafkaDeliveryReport {
        try await enqueue(record).report()
    }

    /// Produces records in the order given (so records of one key keep their order on their partition) and returns
    /// each one's outcome once the broker answered for all of them.
    public func send(_ records: [KafkaRecord]) async -> [Result<KafkaDeliveryReport, any Error>] {
        var pending: [Result<PendingDelivery, any Error>] = []
        for record in records {
            do { pending.append(.success(try await enqueue(record))) } catch { pending.append(.failure(error)) }
        }
        var results: [Result<KafkaDeliveryReport, any Error>] = []
        for delivery in pending {
            switch delivery {
            case .success(let delivery):
                do { results.append(.success(try await delivery.report())) } catch { results.append(.failure(error)) }
            case .failure(let error):
                results.append(.failure(error))
            }
        }
        return results
    }

    /// Hands the record to librdkafka, waiting while its queue is full; the delivery report arrives later.
    private func enqueue(_ record: KafkaRecord) async throws -> PendingDelivery {
        let metrics = self.metrics(for: record.topic)
        while true {
            let delivery = PendingDelivery(metrics: metrics)
            let id = deliveries.register(delivery)
            guard let error = enqueue(record, id: id) else { return delivery }
            // When `close()` already failed the delivery, it also counted it.
            let stillPending = deliveries.forget(id)
            guard error.isQueueFull else {
                if stillPending { metrics.failed.increment() }
                throw error
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    private func metrics(for topic: String) -> TopicMetrics {
        metricsByTopic.withLock { metrics in
            if let known = metrics[topic] { return known }
            let made = TopicMetrics(topic: topic)
            metrics[topic] = made
            return made
        }
    }

    /// Succeeds when a broker answered a metadata request within the timeout and no fatal error was raised; throws
    /// `KafkaError.closed` once the producer is closing.
    public func checkConnectivity(timeout: Duration = .seconds(2)) async throws {
        let handle = self.handle
        if let fatal = try handle.fatalError() { throw fatal }
        if let error = await offThePool({ handle.fetchMetadata(timeout: timeout) }) { throw error }
    }

    /// Waits for graceful shutdown, then flushes and closes; throws the fatal error if librdkafka raises one first.
    public func run() async throws {
        let fatalErrorRaised = await cancelWhenGracefulShutdown { await self.waitForFatalError() }
        if fatalErrorRaised {
            let error = ((try? handle.fatalError()) ?? nil) ?? .fatal("unknown")
            logger.critical("Kafka producer cannot continue; stopping the service", metadata: ["error": "\(error)"])
            await close()
            throw error
        }
        do {
            try await flush(timeout: .seconds(10))
        } catch {
            logger.warning("Kafka producer flush did not complete", metadata: ["error": "\(error)"])
        }
        await close()
    }

    /// Returns true once a fatal error was raised, false when cancelled.
    private func waitForFatalError() async -> Bool {
        while !handle.context.fatalErrorRaised.load(ordering: .relaxed) {
            do { try await Task.sleep(for: .seconds(1)) } catch { return false }
        }
        return true
    }

    /// Waits until every record in flight is acknowledged or failed. Throws the timeout error (`_TIMED_OUT`) when
    /// records were still in flight at the deadline, and `KafkaError.closed` once the producer is closing (a close
    /// waits for a flush in flight to return).
    public func flush(timeout: Duration) async throws {
        let handle = self.handle
        let error = try await offThePool { () throws(KafkaError) -> rd_kafka_resp_err_t in
            try handle.withPointer { pointer in rd_kafka_flush(pointer, Int32(timeout.milliseconds)) }
        }
        if error != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(error) }
    }

    /// Closes now, without flushing (call `flush(timeout:)` first to wait for records in flight): waits for the
    /// librdkafka calls in flight to return, destroys the handle, and fails every record not yet acknowledged with
    /// `KafkaError.closed`. Later calls throw `KafkaError.closed`. Safe to call more than once and concurrently.
    public func close() async {
        await offThePool { self.closeNow() }
    }

    /// Blocks until the handle is destroyed (by this call or a concurrent one).
    private func closeNow() {
        let poller = self.poller
        guard handle.destroy(beforeDestroy: { _ in poller.stop() }) else { return }
        deliveries.failAll(with: KafkaError.closed)
        logger.debug("Kafka producer closed")
    }

    private func enqueue(_ record: KafkaRecord, id: UInt64) -> KafkaError? {
        let handle = self.handle
        return ProduceArguments.with(record, opaque: UnsafeMutableRawPointer(bitPattern: UInt(id))) { arguments, count -> KafkaError? in
            do throws(KafkaError) {
                return try handle.withPointer { pointer -> KafkaError? in
                    guard let error = rd_kafka_produceva(pointer, arguments, count) else { return nil }
                    return KafkaError(consuming: error)
                }
            } catch {
                return error
            }
        }
    }
}

final class ProducerCallbackContext: KafkaCallbackContext, @unchecked Sendable {
    let deliveries: DeliveryTracker

    init(logger: Logger, deliveries: DeliveryTracker) {
        self.deliveries = deliveries
        super.init(logger: logger)
    }
}

private let producerDeliveryCallback: @convention(c) (OpaquePointer?, UnsafePointer<rd_kafka_message_t>?, UnsafeMutableRawPointer?) -> Void = {
    handle, message, _ in
    guard let message, let context = KafkaCallbackContext.from(handle) as? ProducerCallbackContext else { return }
    let raw = message.pointee
    let id = UInt64(UInt(bitPattern: raw._private))
    if raw.err == RD_KAFKA_RESP_ERR_NO_ERROR {
        let topic = raw.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
        context.deliveries.succeed(id, with: KafkaDeliveryReport(topic: topic, partition: raw.partition, offset: raw.offset))
    } else {
        context.deliveries.fail(id, with: KafkaError(raw.err))
    }
}

/// A topic's produce metrics, made once rather than per record.
struct TopicMetrics: Sendable {
    let acknowledged: Counter
    let failed: Counter
    let latency: Metrics.Timer

    init(topic: String) {
        acknowledged = Counter(label: "surge_kafka_produced_total", dimensions: [("topic", topic), ("result", "ok")])
        failed = Counter(label: "surge_kafka_produced_total", dimensions: [("topic", topic), ("result", "error")])
        latency = Metrics.Timer(label: "surge_kafka_produce_seconds", dimensions: [("topic", topic)])
    }
}

/// One record's delivery report, waited for by the sender. Records its latency and outcome in the metrics.
final class PendingDelivery: Sendable {
    private struct State {
        var result: Result<KafkaDeliveryReport, KafkaError>?
        var waiter: CheckedContinuation<KafkaDeliveryReport, any Error>?
    }

    private let state = Mutex(State())
    private let metrics: TopicMetrics
    private let started = ContinuousClock.now

    init(metrics: TopicMetrics) {
        self.metrics = metrics
    }

    func complete(_ result: Result<KafkaDeliveryReport, KafkaError>) {
        switch result {
        case .success:
            metrics.acknowledged.increment()
            metrics.latency.record(duration: ContinuousClock.now - started)
        case .failure:
            metrics.failed.increment()
        }
        let waiter = state.withLock { state -> CheckedContinuation<KafkaDeliveryReport, any Error>? in
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result.mapError { $0 as any Error })
    }

    func report() async throws -> KafkaDeliveryReport {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLock { state -> Result<KafkaDeliveryReport, KafkaError>? in
                if state.result == nil { state.waiter = continuation }
                return state.result
            }
            if let result { continuation.resume(with: result.mapError { $0 as any Error }) }
        }
    }
}

/// Deliveries waiting for their report, keyed by the per-message opaque id.
final class DeliveryTracker: Sendable {
    private struct Pending {
        var nextID: UInt64 = 1
        var waiting: [UInt64: PendingDelivery] = [:]
    }

    private let pending = Mutex(Pending())

    func register(_ delivery: PendingDelivery) -> UInt64 {
        pending.withLock { pending in
            let id = pending.nextID
            pending.nextID += 1
            pending.waiting[id] = delivery
            return id
        }
    }

    /// Returns false when the delivery was no longer pending (already completed or failed by a close).
    @discardableResult
    func forget(_ id: UInt64) -> Bool {
        pending.withLock { $0.waiting.removeValue(forKey: id) } != nil
    }

    func succeed(_ id: UInt64, with report: KafkaDeliveryReport) {
        pending.withLock { $0.waiting.removeValue(forKey: id) }?.complete(.success(report))
    }

    func fail(_ id: UInt64, with error: KafkaError) {
        pending.withLock { $0.waiting.removeValue(forKey: id) }?.complete(.failure(error))
    }

    func failAll(with error: KafkaError) {
        let waiting = pending.withLock { pending in
            defer { pending.waiting.removeAll() }
            return Array(pending.waiting.values)
        }
        for delivery in waiting { delivery.complete(.failure(error)) }
    }
}

/// Builds the `rd_kafka_vu_t` array for `rd_kafka_produceva`. Every pointer lives until `body` returns; librdkafka
/// copies the key, value (`RD_KAFKA_MSG_F_COPY`) and headers before returning.
enum ProduceArguments {
    private static let copyPayload: Int32 = 0x2  // RD_KAFKA_MSG_F_COPY

    static func with<Result>(
        _ record: KafkaRecord, opaque: UnsafeMutableRawPointer?,
        _ body: (UnsafePointer<rd_kafka_vu_t>, Int) -> Result
    ) -> Result {
        var allocations: [UnsafeMutableRawPointer] = []
        defer { allocations.forEach { free($0) } }
        func copy(_ bytes: Data) -> UnsafeMutableRawPointer {
            let pointer = malloc(max(bytes.count, 1))!
            bytes.copyBytes(to: pointer.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            allocations.append(pointer)
            return pointer
        }
        func cString(_ text: String) -> UnsafePointer<CChar> {
            let pointer = strdup(text)!
            allocations.append(UnsafeMutableRawPointer(pointer))
            return UnsafePointer(pointer)
        }

        var arguments: [rd_kafka_vu_t] = []
        var topic = rd_kafka_vu_t()
        topic.vtype = RD_KAFKA_VTYPE_TOPIC
        topic.u.cstr = cString(record.topic)
        arguments.append(topic)
        var flags = rd_kafka_vu_t()
        flags.vtype = RD_KAFKA_VTYPE_MSGFLAGS
        flags.u.i = copyPayload
        arguments.append(flags)
        if let key = record.key {
            var argument = rd_kafka_vu_t()
            argument.vtype = RD_KAFKA_VTYPE_KEY
            argument.u.mem.ptr = copy(key)
            argument.u.mem.size = key.count
            arguments.append(argument)
        }
        if let value = record.value {
            var argument = rd_kafka_vu_t()
            argument.vtype = RD_KAFKA_VTYPE_VALUE
            argument.u.mem.ptr = copy(value)
            argument.u.mem.size = value.count
            arguments.append(argument)
        }
        for header in record.headers {
            var argument = rd_kafka_vu_t()
            argument.vtype = RD_KAFKA_VTYPE_HEADER
            argument.u.header.name = cString(header.name)
            argument.u.header.val = UnsafeRawPointer(copy(header.value))
            argument.u.header.size = header.value.count
            arguments.append(argument)
        }
        var opaqueArgument = rd_kafka_vu_t()
        opaqueArgument.vtype = RD_KAFKA_VTYPE_OPAQUE
        opaqueArgument.u.ptr = opaque
        arguments.append(opaqueArgument)
        return arguments.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}
