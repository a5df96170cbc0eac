import CRdKafka

public enum KafkaError: Error, Sendable, Equatable, CustomStringConvertible {
    case configuration(String)
    /// librdkafka reported an error code.
    case broker(code: Int32, message: String)
    case closed
    case fatal(String)

    init(_ code: rd_kafka_resp_err_t) {
        self = .broker(code: code.rawValue, message: String(cString: rd_kafka_err2str(code)))
    }

    /// Takes ownership of an `rd_kafka_error_t` and frees it.
    init(consuming error: OpaquePointer) {
        let code = rd_kafka_error_code(error)
        let message = String(cString: rd_kafka_error_string(error))
        rd_kafka_error_destroy(error)
        self = .broker(code: code.rawValue, message: message)
    }

    public var description: String {
        switch self {
        case .configuration(let message): "Kafka configuration: \(message)"
        case .broker(let code, let message): "Kafka error \(code): \(message)"
        case .closed: "Kafka client is closed"
        case .fatal(let message): "Kafka fatal error: \(message)"
        }
    }

    var isQueueFull: Bool {
        if case .broker(let code, _) = self { return code == RD_KAFKA_RESP_ERR__QUEUE_FULL.rawValue }
        return false
    }
}
