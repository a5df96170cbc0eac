import Foundation

/// When a message that failed is tried again: the Standard Webhooks specification's schedule (immediately, then
/// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure: the last attempt about 27.6 hours after the
/// first), each delay spread by up to ±10 % so that receivers that failed together are not all retried in the same
/// second.
public enum WebhookRetrySchedule {
    /// The delay before attempt n + 1 (index n), from the failure of attempt n; index 0 is the first attempt.
    public static let delays: [TimeInterval] = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600]
    public static var attempts: Int { delays.count }
    public static let jitter = 0.1

    /// When to try again after `failedAttempts` attempts failed, the last at `failedAt`; nil once every attempt of
    /// the schedule was made. `spread` in 0...1 picks the jitter (0.5: none). A receiver's `Retry-After` postpones
    /// the retry, up to the longest delay of the schedule, never brings it forward.
    public static func nextAttempt(afterFailedAttempts failedAttempts: Int, failedAt: Date, retryAfter: TimeInterval?, spread: Double) -> Date? {
        guard failedAttempts >= 1, failedAttempts < attempts else { return nil }
        let scheduled = delays[failedAttempts] * (1 - jitter + 2 * jitter * min(max(spread, 0), 1))
        let asked = min(max(retryAfter ?? 0, 0), delays.max() ?? 0)
        return failedAt.addingTimeInterval(max(scheduled, asked))
    }
}

/// A receiver's `Retry-After`: delay-seconds or an HTTP date (RFC 9110), as seconds from `now`; nil when absent or
/// unreadable.
public enum RetryAfter {
    public static func seconds(_ header: String?, now: Date) -> TimeInterval? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if let seconds = Int(text) { return seconds >= 0 ? TimeInterval(seconds) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text).map { max($0.timeIntervalSince(now), 0) }
    }
}

/// What is kept of a receiver's answer: its first bytes as text, control characters (NUL among them, which the
/// database refuses) turned into spaces, so any answer can be stored and shown.
public enum WebhookAnswerExcerpt {
    public static let limit = 200

    public static func text(_ bytes: some Sequence<UInt8>) -> String? {
        let text = String(decoding: Array(bytes.prefix(limit)), as: UTF8.self)
        let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
        return cleaned.trimmingCharacters(in: .whitespaces).isEmpty ? nil : cleaned
    }
}

/// What one attempt's answer means.
public enum WebhookAttemptOutcome: String, Sendable, Equatable {
    /// 2xx.
    case delivered
    /// 410: the receiver is gone for good; the subscription is disabled at once.
    case gone
    /// Anything else: no answer, a timeout, a refused address, a redirect (not followed) or another status.
    case failed

    public static func of(status: Int?) -> WebhookAttemptOutcome {
        switch status {
        case .some(200...299): .delivered
        case .some(410): .gone
        default: .failed
        }
    }
}

/// When a failing subscription is switched off: after failing without a success in between for `failingFor`, or
/// after `consecutiveFailures` failed attempts in a row (0: only the time counts).
public struct WebhookDisableRule: Sendable, Equatable {
    public var failingFor: TimeInterval
    public var consecutiveFailures: Int

    public init(failingFor: TimeInterval, consecutiveFailures: Int) {
        self.failingFor = failingFor
        self.consecutiveFailures = consecutiveFailures
    }

    /// Why the subscription is disabled now, or nil while it stays on.
    public func reason(outcome: WebhookAttemptOutcome, failingSince: Date, failures: Int, now: Date) -> String? {
        switch outcome {
        case .delivered: return nil
        case .gone: return "The receiver answered 410 Gone."
        case .failed:
            if consecutiveFailures > 0 && failures >= consecutiveFailures { return "\(failures) delivery attempts failed in a row." }
            if now.timeIntervalSince(failingSince) >= failingFor {
                return "Every delivery attempt failed for \(Self.span(now.timeIntervalSince(failingSince)))."
            }
            return nil
        }
    }

    static func span(_ seconds: TimeInterval) -> String {
        seconds >= 2 * 86400 ? "\(Int(seconds / 86400)) days" : seconds >= 2 * 3600 ? "\(Int(seconds / 3600)) hours" : "\(Int(seconds)) seconds"
    }
}
