import Metrics

/// `surge_notifications_sent_total{channel, result}`: what came of each delivery attempt, counted once it is recorded.
enum DeliveryMetrics {
    enum Result: String {
        case delivered, retried, failed
    }

    static func record(_ channel: String, _ result: Result) {
        Counter(label: "surge_notifications_sent_total", dimensions: [("channel", channel), ("result", result.rawValue)]).increment()
    }
}
