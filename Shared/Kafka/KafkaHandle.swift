import CRdKafka
import Foundation
import Logging
import Synchronization

/// Owns one `rd_kafka_t` and the callback context librdkafka hands back to our C callbacks.
///
/// Every librdkafka call on the handle goes through `withPointer`, which holds a lease for the call's duration.
/// `destroy` stops new leases (they fail with `KafkaError.closed` without touching the handle), waits for the leases
/// in flight to be returned, then destroys the handle exactly once; concurrent and later `destroy` calls wait for that
/// and return false. No lock is held while librdkafka runs, so a callback that librdkafka invokes inside a leased call
/// may use the pointer it is given; it must not take a lease or call `destroy` (that would wait for itself).
final class KafkaHandle: @unchecked Sendable {
    private let pointer: OpaquePointer
    let context: KafkaCallbackContext
    private let retainedContext: Unmanaged<KafkaCallbackContext>
    /// Guards `phase` and `leases`; waited on by `destroy` (for leases to drain) and by later closers.
    private let condition = NSCondition()
    private var phase = Phase.open
    private var leases = 0

    private enum Phase { case open, destroying, destroyed }

    init(
        type: rd_kafka_type_t, properties: [String: String], context: KafkaCallbackContext,
        configure: (OpaquePointer) -> Void = { _ in }
    ) throws {
        guard let conf = rd_kafka_conf_new() else { throw KafkaError.configuration("rd_kafka_conf_new failed") }
        var errorText = [CChar](repeating: 0, count: 512)
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            guard rd_kafka_conf_set(conf, key, value, &errorText, errorText.count) == RD_KAFKA_CONF_OK else {
                rd_kafka_conf_destroy(conf)
                throw KafkaError.configuration(String(cBuffer: errorText))
            }
        }
        let retained = Unmanaged.passRetained(context)
        rd_kafka_conf_set_opaque(conf, retained.toOpaque())
        rd_kafka_conf_set_log_cb(conf, kafkaLogCallback)
        rd_kafka_conf_set_error_cb(conf, kafkaErrorCallback)
        rd_kafka_conf_set_stats_cb(conf, kafkaStatisticsCallback)
        configure(conf)
        guard let handle = rd_kafka_new(type, conf, &errorText, errorText.count) else {
            rd_kafka_conf_destroy(conf)
            retained.release()
            throw KafkaError.configuration(String(cBuffer: errorText))
        }
        self.pointer = handle
        self.context = context
        self.retainedContext = retained
    }

    /// Runs `body` with the handle, which is not destroyed before `body` returns; throws `KafkaError.closed` without
    /// calling `body` once `destroy` began. A blocking `body` delays `destroy` until it returns, so give blocking calls
    /// a timeout, and run them off the cooperative pool.
    func withPointer<Result>(_ body: (OpaquePointer) throws(KafkaError) -> Result) throws(KafkaError) -> Result {
        condition.lock()
        guard phase == .open else {
            condition.unlock()
            throw KafkaError.closed
        }
        leases += 1
        condition.unlock()
        defer {
            condition.lock()
            leases -= 1
            if leases == 0 { condition.broadcast() }
            condition.unlock()
        }
        return try body(pointer)
    }

    /// Asks the cluster for metadata: proves a broker answers. Blocks, so callers run it off the cooperative pool.
    func fetchMetadata(timeout: Duration) -> KafkaError? {
        do throws(KafkaError) {
            return try withPointer { pointer in
                var metadata: UnsafePointer<rd_kafka_metadata>?
                let error = rd_kafka_metadata(pointer, 0, nil, &metadata, Int32(timeout.milliseconds))
                if let metadata { rd_kafka_metadata_destroy(metadata) }
                return error == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(error)
            }
        } catch {
            return error
        }
    }

    /// The fatal error librdkafka raised, if any (the idempotent producer cannot continue after one). Throws
    /// `KafkaError.closed` once the handle is being destroyed.
    func fatalError() throws(KafkaError) -> KafkaError? {
        try withPointer { pointer in
            var text = [CChar](repeating: 0, count: 512)
            let code = rd_kafka_fatal_error(pointer, &text, text.count)
            return code == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : .fatal(String(cBuffer: text))
        }
    }

    /// Refuses new leases, waits for those in flight, runs `beforeDestroy` with exclusive use of the handle (e.g.
    /// `rd_kafka_consumer_close`), then destroys it. Only the first call does this and returns true; the others wait
    /// until the handle is destroyed and return false. Blocks: call it off the cooperative pool, and never from inside
    /// `withPointer` or a librdkafka callback.
    @discardableResult
    func destroy(beforeDestroy: (OpaquePointer) -> Void = { _ in }) -> Bool {
        condition.lock()
        guard phase == .open else {
            while phase != .destroyed { condition.wait() }
            condition.unlock()
            return false
        }
        phase = .destroying
        while leases > 0 { condition.wait() }
        condition.unlock()

        beforeDestroy(pointer)
        rd_kafka_destroy(pointer)
        retainedContext.release()

        condition.lock()
        phase = .destroyed
        condition.broadcast()
        condition.unlock()
        return true
    }
}

/// State our C callbacks reach through librdkafka's opaque pointer.
class KafkaCallbackContext: @unchecked Sendable {
    let logger: Logger
    /// Set by the error callback; read without touching the handle.
    let fatalErrorRaised = Atomic<Bool>(false)
    /// The latest statistics librdkafka reported (`statistics.interval.ms`).
    let statistics = Mutex<KafkaStatistics?>(nil)

    init(logger: Logger) {
        self.logger = logger
    }

    static func from(_ handle: OpaquePointer?) -> KafkaCallbackContext? {
        guard let handle, let opaque = rd_kafka_opaque(handle) else { return nil }
        return Unmanaged<KafkaCallbackContext>.fromOpaque(opaque).takeUnretainedValue()
    }
}

private let kafkaLogCallback: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Void = {
    handle, level, facility, message in
    guard let context = KafkaCallbackContext.from(handle), let message else { return }
    let logLevel: Logger.Level =
        switch level {
        case ...2: .critical
        case 3: .error
        case 4: .warning
        case 5: .notice
        case 6: .info
        default: .debug
        }
    context.logger.log(
        level: logLevel, "\(String(cString: message))",
        metadata: ["kafka.facility": .string(facility.map { String(cString: $0) } ?? "")])
}

private let kafkaErrorCallback: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void = {
    handle, code, reason, _ in
    guard let context = KafkaCallbackContext.from(handle) else { return }
    let fatal = code == RD_KAFKA_RESP_ERR__FATAL.rawValue
    if fatal { context.fatalErrorRaised.store(true, ordering: .relaxed) }
    context.logger.log(
        level: fatal ? .critical : .warning, "\(reason.map { String(cString: $0) } ?? "unknown Kafka error")",
        metadata: ["kafka.error": .stringConvertible(code)])
}

/// librdkafka's statistics, every `statistics.interval.ms`: recorded as gauges. Returning 0 lets librdkafka free the text.
private let kafkaStatisticsCallback: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Int32 = {
    handle, json, length, _ in
    guard let context = KafkaCallbackContext.from(handle), let json,
        let statistics = KafkaStatistics(json: Data(bytes: json, count: length))
    else { return 0 }
    statistics.record()
    context.statistics.withLock { $0 = statistics }
    return 0
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

extension String {
    /// Reads a NUL-terminated string out of a fixed-size buffer librdkafka wrote into.
    init(cBuffer buffer: [CChar]) {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        self.init(decoding: bytes, as: UTF8.self)
    }
}

extension KafkaHandle {
    /// A consumer handle that assigns itself partitions: it never joins its group nor commits, so any number of them
    /// read the same records and no consumer group's offsets move. Polls go to its consumer queue.
    static func assigningConsumer(configuration: KafkaConfiguration, properties: [String: String], logger: Logger) throws -> KafkaHandle {
        var merged = try configuration.merged(
            over: ["enable.auto.commit": "false", "enable.auto.offset.store": "false", "enable.partition.eof": "false"].merging(properties) { $1 },
            configuration.consumerProperties)
        // librdkafka wants a group for a consumer handle.
        merged["group.id"] = "surge-assigned-\(UUID().uuidString.lowercased())"
        let handle = try KafkaHandle(type: RD_KAFKA_CONSUMER, properties: merged, context: KafkaCallbackContext(logger: logger))
        let redirected = try handle.withPointer { pointer in rd_kafka_poll_set_consumer(pointer) }
        guard redirected == RD_KAFKA_RESP_ERR_NO_ERROR else {
            _ = handle.destroy()
            throw KafkaError(redirected)
        }
        return handle
    }
}
