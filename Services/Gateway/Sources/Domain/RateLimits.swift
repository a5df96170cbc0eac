import SurgeRuntime

/// Which budgets a request spends: every request its IP's; authenticated ones also the user's; credential
/// operations (sign-in, sign-up, refresh) also a small per-IP budget against password guessing.
public struct RateLimits: Sendable {
    public var perIP: RateLimitPolicy
    public var perUser: RateLimitPolicy
    public var credentialsPerIP: RateLimitPolicy

    public init(perIP: Int, perUser: Int, credentialsPerIP: Int) {
        self.perIP = RateLimitPolicy(name: "ip", limit: perIP)
        self.perUser = RateLimitPolicy(name: "user", limit: perUser)
        self.credentialsPerIP = RateLimitPolicy(name: "credentials", limit: credentialsPerIP)
    }

    static func from(_ reader: EnvironmentReader) throws -> RateLimits {
        RateLimits(
            perIP: try reader.int("RATE_LIMIT_PER_IP_PER_MINUTE", default: 1200, range: 1...1_000_000),
            perUser: try reader.int("RATE_LIMIT_PER_USER_PER_MINUTE", default: 300, range: 1...1_000_000),
            credentialsPerIP: try reader.int("RATE_LIMIT_CREDENTIALS_PER_MINUTE", default: 10, range: 1...1_000_000))
    }

    public var all: [RateLimitPolicy] { [perIP, perUser, credentialsPerIP] }

    /// The budgets (key, policy) one request spends.
    public func budgets(ip: String, userID: String?, throttle: APIOperation.Throttle) -> [(String, RateLimitPolicy)] {
        var budgets = [(ip, perIP)]
        if let userID { budgets.append((userID, perUser)) }
        if throttle == .credentials { budgets.append((ip, credentialsPerIP)) }
        return budgets
    }
}
