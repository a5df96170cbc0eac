import CRdKafka
import Foundation

public struct KafkaHeader: Sendable, Equatable {
    public var name: String
    public var value: Data

    public init(name: String, value: Data) {
        self.name = name
        self.value = value
    }

    public init(_ name: String, _ text: String) {
        self.init(name: name, value: Data(text.utf8))
    }
}

/// A record to produce. Partitioning is by key with murmur2, as the Java client does, so a key lands on the same
/// partition as Java producers put it.
public struct KafkaRecord: Sendable, Equatable {
    public var topic: String
    public var key: Data?
    public var value: Data?
    public var headers: [KafkaHeader]

    public init(topic: String, key: Data?, value: Data?, headers: [KafkaHeader] = []) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
    }
}

public struct KafkaDeliveryReport: Sendable, Equatable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
}

/// A consumed record, copied out of librdkafka's buffers.
public struct KafkaMessage: Sendable, Equatable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var key: Data?
    public var value: Data?
    public var headers: [KafkaHeader]
    /// When the record was produced (its CreateTime), in milliseconds since 1970; nil when the broker gave none.
    public var timestampMilliseconds: Int64?

    public init(
        topic: String, partition: Int32, offset: Int64, key: Data?, value: Data?, headers: [KafkaHeader], timestampMilliseconds: Int64? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestampMilliseconds = timestampMilliseconds
    }

    public func header(_ name: String) -> String? {
        headers.last { $0.name == name }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    /// `topic`, when the caller already has the record's topic name, saves copying it again.
    init(copying message: UnsafePointer<rd_kafka_message_t>, topic: String? = nil) {
        let raw = message.pointee
        self.topic = topic ?? raw.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
        partition = raw.partition
        offset = raw.offset
        key = raw.key.map { Data(bytes: $0, count: raw.key_len) }
        value = raw.payload.map { Data(bytes: $0, count: raw.len) }
        let timestamp = rd_kafka_message_timestamp(message, nil)
        timestampMilliseconds = timestamp >= 0 ? timestamp : nil
        var headers: [KafkaHeader] = []
        var list: OpaquePointer?
        if rd_kafka_message_headers(message, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list {
            var index = 0
            var name: UnsafePointer<CChar>?
            var bytes: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(list, index, &name, &bytes, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                if let name {
                    headers.append(KafkaHeader(name: String(cString: name), value: bytes.map { Data(bytes: $0, count: size) } ?? Data()))
                }
                index += 1
            }
        }
        self.headers = headers
    }
}

/// The partition a keyed record lands on with the producer's `murmur2_random` partitioner (librdkafka's murmur2, as
/// the Java client computes it): lets a test or tool tell whether two keys share a partition.
public enum KafkaPartitioner {
    public static func murmur2(_ key: Data, partitions: Int) -> Int32 {
        key.withUnsafeBytes { bytes in
            rd_kafka_msg_partitioner_murmur2(nil, bytes.baseAddress, bytes.count, Int32(partitions), nil, nil)
        }
    }
}
