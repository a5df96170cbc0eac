import Foundation
import Metrics

/// What librdkafka's own statistics (`statistics.interval.ms`, every 15 s unless set otherwise; a JSON document per
/// client) say an operator needs, as gauges labelled with the client's name (`surge-progress#producer-1`):
/// - `surge_kafka_client_queued_messages`: messages in the client's queues, produced but not yet acknowledged;
/// - `surge_kafka_client_reply_queue`: events waiting for the client's poll (a growing queue: the poll falls behind);
/// - `surge_kafka_client_fetch_queue_messages`: messages fetched ahead of the consumer's handlers;
/// - `surge_kafka_broker_rtt_avg_seconds`, `surge_kafka_broker_rtt_p99_seconds`: request round trips to each broker over
///   the last interval;
/// - `surge_kafka_broker_outbuf_requests`, `surge_kafka_broker_inflight_requests`: requests waiting to be sent to each
///   broker, and sent without an answer yet.
struct KafkaStatistics: Sendable, Equatable {
    struct Broker: Sendable, Equatable {
        var name: String
        var rttAverage: Double
        var rttP99: Double
        var outbuf: Int
        var inflight: Int
    }

    var client: String
    var queuedMessages: Int
    var replyQueue: Int
    var fetchQueueMessages: Int
    var brokers: [Broker]

    /// Reads librdkafka's document (STATISTICS.md); nil when it is not one. Brokers are the cluster's own (node id
    /// 0 or more), not librdkafka's internal or bootstrap entries; round trips are given in microseconds.
    init?(json: Data) {
        guard let document = try? JSONSerialization.jsonObject(with: json) as? [String: Any], let client = document["name"] as? String else { return nil }
        func int(_ object: [String: Any]?, _ key: String) -> Int { (object?[key] as? NSNumber)?.intValue ?? 0 }
        self.client = client
        queuedMessages = int(document, "msg_cnt")
        replyQueue = int(document, "replyq")
        let topics = document["topics"] as? [String: [String: Any]] ?? [:]
        fetchQueueMessages = topics.values.reduce(0) { total, topic in
            total + (topic["partitions"] as? [String: [String: Any]] ?? [:]).values.reduce(0) { $0 + int($1, "fetchq_cnt") }
        }
        let brokers = document["brokers"] as? [String: [String: Any]] ?? [:]
        self.brokers = brokers.values.filter { int($0, "nodeid") >= 0 }.map { broker in
            let rtt = broker["rtt"] as? [String: Any]
            return Broker(
                name: broker["nodename"] as? String ?? broker["name"] as? String ?? "?",
                rttAverage: Double(int(rtt, "avg")) / 1_000_000, rttP99: Double(int(rtt, "p99")) / 1_000_000,
                outbuf: int(broker, "outbuf_cnt"), inflight: int(broker, "waitresp_cnt"))
        }.sorted { $0.name < $1.name }
    }

    func record() {
        let client = [("client", self.client)]
        Gauge(label: "surge_kafka_client_queued_messages", dimensions: client).record(queuedMessages)
        Gauge(label: "surge_kafka_client_reply_queue", dimensions: client).record(replyQueue)
        Gauge(label: "surge_kafka_client_fetch_queue_messages", dimensions: client).record(fetchQueueMessages)
        for broker in brokers {
            let labels = client + [("broker", broker.name)]
            Gauge(label: "surge_kafka_broker_rtt_avg_seconds", dimensions: labels).record(broker.rttAverage)
            Gauge(label: "surge_kafka_broker_rtt_p99_seconds", dimensions: labels).record(broker.rttP99)
            Gauge(label: "surge_kafka_broker_outbuf_requests", dimensions: labels).record(broker.outbuf)
            Gauge(label: "surge_kafka_broker_inflight_requests", dimensions: labels).record(broker.inflight)
        }
    }
}
