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

    public var all: [RateLimitPolicy] { [perIP, perUser, credentialsPerIP] }

    /// The budgets (key, policy) one request spends; `credentialOperation` for sign-in, sign-up and refresh.
    public func budgets(ip: String, userID: String?, credentialOperation: Bool) -> [(String, RateLimitPolicy)] {
        var budgets = [(ip, perIP)]
        if let userID { budgets.append((userID, perUser)) }
        if credentialOperation { budgets.append((ip, credentialsPerIP)) }
        return budgets
    }
}
