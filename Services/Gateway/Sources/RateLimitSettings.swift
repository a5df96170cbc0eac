import GatewayDomain
import SurgeRuntime

extension RateLimits {
    /// The budgets per minute the environment sets (`RATE_LIMIT_*`).
    static func from(_ reader: EnvironmentReader) throws -> RateLimits {
        RateLimits(
            perIP: try reader.int("RATE_LIMIT_PER_IP_PER_MINUTE", default: 1200, range: 1...1_000_000),
            perUser: try reader.int("RATE_LIMIT_PER_USER_PER_MINUTE", default: 300, range: 1...1_000_000),
            credentialsPerIP: try reader.int("RATE_LIMIT_CREDENTIALS_PER_MINUTE", default: 10, range: 1...1_000_000))
    }
}
