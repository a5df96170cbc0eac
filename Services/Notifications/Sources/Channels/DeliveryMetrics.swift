import Metrics

/// `surge_notifications_sent_total{channel, result}`: what came of each delivery attempt, counted once it is recorded.
enum DeliveryMetrics {
    enum Result: String, CaseIterable {
        case delivered, retried, failed
    }

    static let channels = ["push", "email", "webhook"]

    static func record(_ channel: String, _ result: Result) {
        counter(channel, result).increment()
    }

    /// Every channel's and result's series at zero, so that a dashboard shows them before the first delivery.
    static func startAtZero() {
        for channel in channels { for result in Result.allCases { _ = counter(channel, result) } }
    }

    private static func counter(_ channel: String, _ result: Result) -> Counter {
        Counter(label: "surge_notifications_sent_total", dimensions: [("channel", channel), ("result", result.rawValue)])
    }
}
