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
/// they stop first.
public final class KafkaProducer: Service, Sendable {
    public static let defaultProperties: [String: String] = [
        "enable.idempotence": "true",
        "acks": "all",
        "linger.ms": "5",
        "message.timeout.ms": "30000",
        "partitioner": "murmur2_random",
    ]

    private let handle: KafkaHandle
    private let deliveries: DeliveryTracker
    private let poller: BlockingLoop
    private let state = Mutex(State.open)
    private let logger: Logger

    private enum State { case open, closed }

    public init(configuration: KafkaConfiguration, logger: Logger) throws {
        let deliveries = DeliveryTracker()
        let context = ProducerCallbackContext(logger: logger, deliveries: deliveries)
        self.handle = try KafkaHandle(
            type: RD_KAFKA_PRODUCER, properties: configuration.merged(over: Self.defaultProperties, configuration.producerProperties), context: context
        ) { conf in
            rd_kafka_conf_set_dr_msg_cb(conf, producerDeliveryCallback)
        }
        self.deliveries = deliveries
        self.logger = logger
        let handle = self.handle
        self.poller = BlockingLoop(name: "kafka-producer-poll") { _ = rd_kafka_poll(handle.pointer, 100) }
        poller.start()
    }

    deinit {
        close()
    }

    /// Produces one record and waits for the broker's acknowledgement.
    public func send(_ record: KafkaRecord) async throws -> KafkaDeliveryReport {
        let start = ContinuousClock.now
        while true {
            do {
                let report = try await withCheckedThrowingContinuation { continuation in
                    let id = deliveries.register(continuation)
                    if let error = enqueue(record, id: id) {
                        deliveries.fail(id, with: error)
                    }
                }
                Counter(label: "surge_kafka_produced_total", dimensions: [("topic", record.topic), ("result", "ok")]).increment()
                Metrics.Timer(label: "surge_kafka_produce_seconds", dimensions: [("topic", record.topic)])
                    .record(duration: ContinuousClock.now - start)
                return report
            } catch let error as KafkaError where error.isQueueFull {
                try await Task.sleep(for: .milliseconds(5))
            } catch {
                Counter(label: "surge_kafka_produced_total", dimensions: [("topic", record.topic), ("result", "error")]).increment()
                throw error
            }
        }
    }

    /// Produces records concurrently and returns each one's outcome, in the order given.
    public func send(_ records: [KafkaRecord]) async -> [Result<KafkaDeliveryReport, any Error>] {
        await withTaskGroup(of: (Int, Result<KafkaDeliveryReport, any Error>).self) { group in
            for (index, record) in records.enumerated() {
                group.addTask {
                    do { return (index, .success(try await self.send(record))) } catch { return (index, .failure(error)) }
                }
            }
            var results = [Result<KafkaDeliveryReport, any Error>?](repeating: nil, count: records.count)
            for await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }

    /// Succeeds when a broker answered a metadata request within the timeout.
    public func checkConnectivity(timeout: Duration = .seconds(2)) async throws {
        let handle = self.handle
        let isOpen = state.withLock { $0 == .open }
        guard isOpen else { throw KafkaError.closed }
        if let error = await offThePool({ handle.fetchMetadata(timeout: timeout) }) { throw error }
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await flush(timeout: .seconds(10))
        close()
    }

    /// Waits until every record in flight is acknowledged or failed.
    public func flush(timeout: Duration) async {
        let handle = self.handle
        let isOpen = state.withLock { $0 == .open }
        guard isOpen else { return }
        let error = await offThePool { rd_kafka_flush(handle.pointer, Int32(timeout.milliseconds)) }
        if error != RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.warning("Kafka producer flush did not complete", metadata: ["error": "\(KafkaError(error))"])
        }
    }

    private func close() {
        let wasOpen = state.withLock { state -> Bool in
            defer { state = .closed }
            return state == .open
        }
        guard wasOpen else { return }
        poller.stop()
        handle.destroy()
        deliveries.failAll(with: KafkaError.closed)
    }

    private func enqueue(_ record: KafkaRecord, id: UInt64) -> KafkaError? {
        let isOpen = state.withLock { $0 == .open }
        guard isOpen else { return .closed }
        return ProduceArguments.with(record, opaque: UnsafeMutableRawPointer(bitPattern: UInt(id))) { arguments, count in
            guard let error = rd_kafka_produceva(handle.pointer, arguments, count) else { return nil }
            return KafkaError(consuming: error)
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

/// Continuations waiting for delivery reports, keyed by the per-message opaque id.
final class DeliveryTracker: Sendable {
    private struct Pending {
        var nextID: UInt64 = 1
        var waiting: [UInt64: CheckedContinuation<KafkaDeliveryReport, any Error>] = [:]
    }

    private let pending = Mutex(Pending())

    func register(_ continuation: CheckedContinuation<KafkaDeliveryReport, any Error>) -> UInt64 {
        pending.withLock { pending in
            let id = pending.nextID
            pending.nextID += 1
            pending.waiting[id] = continuation
            return id
        }
    }

    func succeed(_ id: UInt64, with report: KafkaDeliveryReport) {
        pending.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: report)
    }

    func fail(_ id: UInt64, with error: KafkaError) {
        pending.withLock { $0.waiting.removeValue(forKey: id) }?.resume(throwing: error)
    }

    func failAll(with error: KafkaError) {
        let waiting = pending.withLock { pending in
            defer { pending.waiting.removeAll() }
            return Array(pending.waiting.values)
        }
        for continuation in waiting { continuation.resume(throwing: error) }
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
