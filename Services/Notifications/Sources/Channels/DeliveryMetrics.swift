import Logging
import Metrics
import NotificationsDomain

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

extension DeliveryMetrics {
    /// Counts and logs what one attempt on `channel` came to, the same way for every channel. `metadata` names the
    /// delivery, never its address, token or content.
    static func report(_ resolution: DeliveryResolution, channel: String, metadata: Logger.Metadata, logger: Logger) {
        var metadata = metadata
        metadata["channel"] = "\(channel)"
        let result: Result
        let level: Logger.Level
        let message: Logger.Message
        switch resolution {
        case .delivered:
            (result, level, message) = (.delivered, .debug, "Delivered")
        case .failed(let reason, let targetGone):
            metadata["reason"] = "\(reason)"
            (result, level, message) = targetGone ? (.failed, .info, "Delivery target gone: forgotten") : (.failed, .warning, "Delivery refused")
        case .gaveUp(let reason):
            metadata["reason"] = "\(reason)"
            (result, level, message) = (.failed, .warning, "Delivery given up")
        case .retry(_, let reason):
            metadata["reason"] = "\(reason)"
            (result, level, message) = (.retried, .info, "Delivery will be retried")
        }
        record(channel, result)
        logger.log(level: level, message, metadata: metadata)
    }
}
