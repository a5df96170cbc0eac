import Metrics
import Prometheus

/// swift-metrics over the Prometheus registry, as swift-prometheus's `PrometheusMetricsFactory` does, with what that
/// factory cannot give: each family's `# HELP` line (`MetricHelp`), which `promtool check metrics` asks of every family.
/// Its handlers are the registry's own, so `PrometheusMetricsFactory` still unregisters them.
struct HelpfulMetricsFactory: MetricsFactory {
    private let registry: PrometheusCollectorRegistry
    private let base: PrometheusMetricsFactory

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.base = PrometheusMetricsFactory(registry: registry)
    }

    private static func descriptor(_ label: String) -> MetricNameDescriptor {
        let name = Observability.prometheusName(label)
        return MetricNameDescriptor(metricName: name, unitName: "", helpText: MetricHelp.text(of: name))
    }

    private static func labels(_ dimensions: [(String, String)]) -> [(String, String)] {
        dimensions.map { (Observability.prometheusName($0.0), $0.1) }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: Self.descriptor(label), labels: Self.labels(dimensions))
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: Self.descriptor(label), labels: Self.labels(dimensions))
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: Self.descriptor(label), labels: Self.labels(dimensions)) }
        return registry.makeValueHistogram(
            descriptor: Self.descriptor(label), labels: Self.labels(dimensions), buckets: base.defaultValueHistogramBuckets)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: Self.descriptor(label), labels: Self.labels(dimensions))
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let descriptor = Self.descriptor(label)
        let buckets = Self.subFiveMillisecondTimers.contains(descriptor.name)
            ? [.microseconds(500), .milliseconds(1), .milliseconds(2)] + base.defaultDurationHistogramBuckets : base.defaultDurationHistogramBuckets
        return registry.makeDurationHistogram(descriptor: descriptor, labels: Self.labels(dimensions), buckets: buckets)
    }

    /// Durations mostly under the default first bucket (5 ms): HTTP requests and the gateway's calls to services get
    /// three buckets below it.
    static let subFiveMillisecondTimers: Set = ["http_server_request_duration_seconds", "surge_upstream_response_seconds"]

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { base.destroyFloatingPointCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}

/// What each metric family counts, for its `# HELP` line. A family missing here gets none, and the observability
/// system test, which runs `promtool check metrics` on every service, fails.
enum MetricHelp {
    static func text(of name: String) -> String { texts[name] ?? "" }

    static let texts: [String: String] = [
        "hb_requests_total": "HTTP requests answered, by route, method and status.",
        "hb_request_errors_total": "HTTP requests answered with an error, by route, method and status.",
        "http_server_request_duration_seconds": "Time from a request's arrival until its answer was written, by route, method and status.",
        "http_server_active_requests": "HTTP requests in progress, by method.",
        "surge_db_pool_connections_open": "PostgreSQL connections a pool has open or is opening, by pool.",
        "surge_db_pool_max_connections": "The most connections a pool opens, by pool.",
        "surge_db_pool_in_use": "Transactions holding a connection of a pool now, by pool (single statements on the pool are not counted).",
        "surge_db_pool_waiting": "Transactions waiting for a connection of a pool now, by pool.",
        "surge_db_pool_wait_seconds": "Time a transaction waited for a connection of a pool, by pool.",
        "surge_build_info": "Always 1; its labels say which version and commit the service was built from.",
        "surge_checkins_total": "Check-ins committed, by what they did (done, undone, logged, log-removed, photo).",
        "surge_judgement_rounds_total": "Rounds of the day judge (each takes the attempts and chores that came due).",
        "surge_event_batches_total": "Consumer transactions that applied several records together.",
        "surge_events_batched_total": "Records applied in consumer transactions of several records.",
        "surge_event_batches_rolled_back_total": "Consumer batches rolled back and applied one record at a time.",
        "surge_event_handle_seconds": "Time to apply a consumed event, by consumer group and event type.",
        "surge_events_handled_total": "Consumed events, by consumer group, event type and result.",
        "surge_events_deferred": "Records parked until what they wait for arrives, by consumer group.",
        "surge_kafka_assign_errors_total": "Failed partition assignments of a consumer.",
        "surge_kafka_assigned_partitions": "Partitions assigned to this consumer, by group.",
        "surge_kafka_consumed_total": "Records consumed, by topic and group.",
        "surge_kafka_client_queued_messages": "Messages in a Kafka client's queues, produced and not yet acknowledged (librdkafka's msg_cnt).",
        "surge_kafka_client_reply_queue": "Events waiting for a Kafka client's poll (librdkafka's replyq): growing means the poll falls behind.",
        "surge_kafka_client_fetch_queue_messages": "Messages a Kafka consumer fetched ahead of its handlers (librdkafka's fetchq_cnt).",
        "surge_kafka_broker_rtt_avg_seconds": "Average request round trip to a broker over the last statistics interval.",
        "surge_kafka_broker_rtt_p99_seconds": "99th percentile request round trip to a broker over the last statistics interval.",
        "surge_kafka_broker_outbuf_requests": "Requests waiting to be sent to a broker.",
        "surge_kafka_broker_inflight_requests": "Requests sent to a broker and not yet answered.",
        "surge_kafka_consumer_lag": "Records not yet consumed, by group, topic and partition.",
        "surge_kafka_consumer_lag_seconds": "Age of the oldest record not yet consumed, by group and topic.",
        "surge_kafka_produce_seconds": "Time from producing a record until the broker acknowledged it.",
        "surge_kafka_produced_total": "Records produced, by topic and whether the broker acknowledged them.",
        "surge_outbox_pending": "Outbox events not yet published, by schema.",
        "surge_outbox_lag_seconds": "Age of the oldest outbox event not yet published, by schema.",
        "surge_outbox_published_total": "Outbox events published and acknowledged by the broker, by schema.",
        "surge_notifications_sent_total": "Delivery attempts of notifications, by channel and result.",
        "surge_reminders_sent_total": "Reminders sent, by kind.",
        "surge_reminders_dropped_total": "Reminders not sent, by kind and reason.",
        "surge_upstream_response_seconds": "Time from the gateway sending a request to a service until the service's answer arrived, by service.",
        "surge_upstream_unreachable_total": "Requests the gateway answered 503 because their service could not be reached, by service.",
        "surge_rate_limited_total": "Requests refused with 429, by the budget they exhausted (ip, user, credentials).",
        "surge_gateway_event_loop_calls_total": "Requests the gateway answered on its event loops rather than through its router.",
        "surge_stream_connections": "Live stream connections open on this replica.",
        "surge_stream_cut_off_total": "Live stream connections closed because their client did not keep up.",
    ]
}
