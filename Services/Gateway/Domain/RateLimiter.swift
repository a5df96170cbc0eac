import Synchronization

/// A budget of `limit` requests per `window`, enforced as a token bucket (capacity `limit`, refilled continuously).
public struct RateLimitPolicy: Sendable, Equatable {
    public var name: String
    public var limit: Int
    public var windowSeconds: Double

    public init(name: String, limit: Int, windowSeconds: Double = 60) {
        self.name = name
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    var refillPerSecond: Double { Double(limit) / windowSeconds }
}

/// The outcome of taking one request from a budget, with what the `RateLimit-*` headers report.
public struct RateLimitDecision: Sendable, Equatable {
    public var allowed: Bool
    public var policy: RateLimitPolicy
    public var remaining: Int
    /// Seconds until the budget is whole again.
    public var resetSeconds: Int
    /// Seconds until one request is allowed again (refused requests only).
    public var retryAfterSeconds: Int?
}

/// In-memory token buckets per key (an IP or a user), sharded to keep lock contention low. Each gateway replica
/// counts on its own, so N replicas allow up to N times a budget; per-account sign-in throttling lives in identity's
/// database and holds across replicas.
public final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    private final class Shard: Sendable {
        let buckets = Mutex<[String: Bucket]>([:])
    }

    private let shards: [Shard]

    public init(shards: Int = 16) {
        self.shards = (0..<shards).map { _ in Shard() }
    }

    /// Takes one request from `key`'s budget under `policy` at monotonic time `now` (seconds).
    public func take(_ key: String, policy: RateLimitPolicy, now: Double) -> RateLimitDecision {
        let shard = shards[abs(key.hashValue % shards.count)]
        let bucketKey = policy.name + "|" + key
        return shard.buckets.withLock { buckets in
            var bucket = buckets[bucketKey] ?? Bucket(tokens: Double(policy.limit), updated: now)
            bucket.tokens = min(Double(policy.limit), bucket.tokens + (now - bucket.updated) * policy.refillPerSecond)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            buckets[bucketKey] = bucket
            let missing = Double(policy.limit) - bucket.tokens
            return RateLimitDecision(
                allowed: allowed, policy: policy, remaining: Int(bucket.tokens.rounded(.down)),
                resetSeconds: Int((missing / policy.refillPerSecond).rounded(.up)),
                retryAfterSeconds: allowed ? nil : max(1, Int(((1 - bucket.tokens) / policy.refillPerSecond).rounded(.up))))
        }
    }

    /// Forgets buckets that have refilled completely: they hold nothing a fresh bucket would not.
    public func evictFull(now: Double, policies: [RateLimitPolicy]) {
        let rates = Dictionary(policies.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for shard in shards {
            shard.buckets.withLock { buckets in
                buckets = buckets.filter { key, bucket in
                    guard let policy = rates[String(key.prefix { $0 != "|" })] else { return false }
                    return bucket.tokens + (now - bucket.updated) * policy.refillPerSecond < Double(policy.limit)
                }
            }
        }
    }

    public var trackedKeys: Int { shards.reduce(0) { $0 + $1.buckets.withLock { $0.count } } }
}
