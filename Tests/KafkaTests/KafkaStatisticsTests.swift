import Foundation
import Logging
import SurgeTestSupport
import Testing

@testable import SurgeKafka

@Suite("Kafka: librdkafka's statistics as gauges", .tags(.integration), .kind(.integration, needsDatabase: false))
struct KafkaStatisticsTests {
    @Test("a statistics document gives the client's queues, the messages fetched ahead and each cluster broker's round trips, in seconds")
    func parse() throws {
        let json = #"""
            {"name": "surge-progress#producer-1", "type": "producer", "msg_cnt": 7, "replyq": 2,
             "brokers": {
               "127.0.0.1:9092/0": {"name": "127.0.0.1:9092/0", "nodeid": 0, "nodename": "127.0.0.1:9092", "outbuf_cnt": 1, "waitresp_cnt": 3,
                                    "rtt": {"avg": 1500, "p99": 12000}},
               "GroupCoordinator": {"name": "GroupCoordinator", "nodeid": -1, "nodename": "127.0.0.1:9092", "rtt": {"avg": 0, "p99": 0}},
               ":0/internal": {"name": ":0/internal", "nodeid": -1, "nodename": "", "rtt": {"avg": 0, "p99": 0}}
             },
             "topics": {"surge.progress.events": {"partitions": {"0": {"fetchq_cnt": 4}, "1": {"fetchq_cnt": 5}, "-1": {"fetchq_cnt": 0}}}}}
            """#
        let statistics = try #require(KafkaStatistics(json: Data(json.utf8)))
        #expect(statistics.client == "surge-progress#producer-1")
        #expect(statistics.queuedMessages == 7 && statistics.replyQueue == 2 && statistics.fetchQueueMessages == 9)
        #expect(statistics.brokers == [.init(name: "127.0.0.1:9092", rttAverage: 0.0015, rttP99: 0.012, outbuf: 1, inflight: 3)])
        #expect(KafkaStatistics(json: Data("not json".utf8)) == nil)
        #expect(KafkaStatistics(json: Data("{}".utf8)) == nil)
    }

    @Test("a producer reports librdkafka's statistics at the configured interval, naming the broker it talked to")
    func reported() async throws {
        let kafka = try TestKafka()
        var configuration = kafka.configuration()
        configuration.producerProperties["statistics.interval.ms"] = "100"
        let producer = try KafkaProducer(configuration: configuration, logger: .test("kafka-statistics"))
        _ = try await producer.send(KafkaRecord(topic: "surge.progress.events", key: Data("k".utf8), value: Data("v".utf8)))
        let statistics = try await eventually("statistics reported", timeout: .seconds(10)) { producer.statistics }
        #expect(statistics.client.hasPrefix("test"))
        #expect(!statistics.brokers.isEmpty, "\(statistics)")
        await producer.close()
    }
}
