import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a sign-in attempt comes from: the client address the gateway determined, normalised so that one subscriber
/// counts as one source. IPv4 addresses stand for themselves (an IPv4-mapped IPv6 address is its IPv4 address); an
/// IPv6 address stands for its /64, which a single subscriber usually holds whole (otherwise one home connection
/// would be 2^64 fresh sources). Anything else, or nothing, is the unknown source.
public struct SignInSource: Sendable, Hashable, CustomStringConvertible {
    /// The stored form: `203.0.113.7`, `2001:db8:0:1::/64`, or empty when unknown.
    public let key: String

    public static let unknown = SignInSource(key: "")

    private init(key: String) {
        self.key = key
    }

    public init(address: String?) {
        guard let address = address?.trimmingCharacters(in: .whitespaces), !address.isEmpty, address.utf8.count <= 64 else {
            self = .unknown
            return
        }
        // A zone id (`fe80::1%eth0`) names an interface of the sender's host, not a different source.
        let host = address.split(separator: "%", maxSplits: 1).first.map(String.init) ?? address
        if let ipv4 = Self.ipv4(host) {
            self.init(key: ipv4)
        } else if let ipv6 = Self.ipv6(host) {
            self.init(key: ipv6)
        } else {
            self = .unknown
        }
    }

    public var isKnown: Bool { !key.isEmpty }
    public var description: String { isKnown ? key : "unknown" }

    private static func ipv4(_ text: String) -> String? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { bytes in bytes.map(String.init).joined(separator: ".") }
    }

    private static func ipv6(_ text: String) -> String? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let hextets = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return hextets.joined(separator: ":") + "::/64"
    }
}

/// At most `maxFailures` failures within a sliding `window`.
public struct FailureLimit: Sendable, Equatable {
    public var maxFailures: Int
    public var window: TimeInterval

    public init(maxFailures: Int, window: TimeInterval) {
        precondition(maxFailures >= 1 && window > 0)
        self.maxFailures = maxFailures
        self.window = window
    }

    /// Seconds until one more attempt may be made, or nil if one may be made now. `failures` are the recent
    /// failures' times, in any order; only the `maxFailures` most recent matter.
    public func retryAfter(failures: [Date], now: Date) -> Int? {
        let recent = failures.filter { $0 > now.addingTimeInterval(-window) }.sorted(by: >)
        guard recent.count >= maxFailures else { return nil }
        // Allowed again once fewer than `maxFailures` remain in the window: when the maxFailures-th most recent
        // leaves it.
        return SignInThrottle.seconds(from: now, to: recent[maxFailures - 1].addingTimeInterval(window))
    }
}

/// Sign-in throttling, so that guessing passwords is slow without anyone being able to lock an account's owner out.
///
/// - Per (account, source): the first `freeFailures` wrong passwords cost nothing; after that, each failure makes
///   this pair wait `firstBackoff`, doubling with every further failure, at most `maxBackoff`, counted from the
///   pair's last failure. A pair's failures are remembered for `memory`; a correct password forgets them. Another
///   source, and the owner's own source if it has not failed, is not affected.
/// - Per source, across accounts (`perSource`): a source that fails against many accounts (a password spray) is
///   refused for every account. The unknown source has no such limit: it would be everyone's.
/// - Per account, across sources (`perAccount`): a backstop against guessing from very many sources (a botnet, or a
///   forged source), far above what one source can reach on its own. Only this one refuses a correct password from
///   a source that has not failed.
/// - A known device is exempt from both limits across pairs: one presenting the device token a successful sign-in to
///   this account gave it (within `deviceLifetime`), with fewer than `freeFailures` wrong passwords since. Twenty
///   IPv6 /64s can lock the account against new devices for an hour, never its owner's phone on a new address; a
///   stolen device token buys a few guesses, no more.
///
/// Failures are counted per e-mail as typed (normalised), whether or not an account has it, so refusals reveal
/// nothing about which e-mails exist.
public struct SignInThrottle: Sendable, Equatable {
    public var freeFailures: Int
    public var firstBackoff: TimeInterval
    public var maxBackoff: TimeInterval
    public var memory: TimeInterval
    public var perSource: FailureLimit
    public var perAccount: FailureLimit
    /// How long a device token is honoured after the sign-in that gave it.
    public var deviceLifetime: TimeInterval

    public init(
        freeFailures: Int = 5, firstBackoff: TimeInterval = 60, maxBackoff: TimeInterval = 15 * 60, memory: TimeInterval = 24 * 3600,
        perSource: FailureLimit = FailureLimit(maxFailures: 20, window: 15 * 60),
        perAccount: FailureLimit = FailureLimit(maxFailures: 100, window: 3600), deviceLifetime: TimeInterval = 365 * 86_400
    ) {
        precondition(freeFailures >= 1 && firstBackoff > 0 && maxBackoff >= firstBackoff && memory > 0 && deviceLifetime > 0)
        self.freeFailures = freeFailures
        self.firstBackoff = firstBackoff
        self.maxBackoff = maxBackoff
        self.memory = memory
        self.perSource = perSource
        self.perAccount = perAccount
        self.deviceLifetime = deviceLifetime
    }

    /// Whether a device token with `failures` wrong passwords since it was given still makes its device known.
    public func honoursDevice(failures: Int) -> Bool { failures < freeFailures }

    /// What refused an attempt.
    public enum Limit: String, Sendable, Equatable {
        /// This source failed too often for this account.
        case pair
        /// This source failed too often across accounts.
        case source
        /// This account failed too often across sources.
        case account
    }

    public enum Decision: Sendable, Equatable {
        case admit
        case refuse(retryAfter: Int, limit: Limit)
    }

    /// How long a pair waits after its `count`-th remembered failure; nil while it is still free.
    public func backoff(afterFailures count: Int) -> TimeInterval? {
        guard count >= freeFailures else { return nil }
        let doublings = count - freeFailures
        // 2^63 overflows; long before that the cap applies anyway.
        guard doublings < 62 else { return maxBackoff }
        return min(firstBackoff * Double(UInt64(1) << UInt64(doublings)), maxBackoff)
    }

    /// How many of a pair's most recent failures decide its wait: beyond this many the wait is `maxBackoff` anyway.
    public var pairFailuresConsidered: Int {
        var count = freeFailures
        while let wait = backoff(afterFailures: count), wait < maxBackoff { count += 1 }
        return count
    }

    /// How long a failure can matter to any limit; older ones may be deleted.
    public var retention: TimeInterval { max(memory, perSource.window, perAccount.window) }

    /// Whether an attempt may be made now. `pair` are this (account, source)'s failures (at least the
    /// `pairFailuresConsidered` most recent within `memory`), `source` this source's across accounts (none for the
    /// unknown source), `account` this account's across sources; times in any order. A `knownDevice` answers to its
    /// pair's limit only. When several limits refuse, the longest wait is the answer.
    public func decide(pair: [Date], source: [Date], account: [Date], now: Date, knownDevice: Bool = false) -> Decision {
        let waits: [(Int, Limit)] = [
            pairRetryAfter(failures: pair, now: now).map { ($0, .pair) },
            knownDevice ? nil : perSource.retryAfter(failures: source, now: now).map { ($0, .source) },
            knownDevice ? nil : perAccount.retryAfter(failures: account, now: now).map { ($0, .account) },
        ].compactMap { $0 }
        guard let longest = waits.max(by: { $0.0 < $1.0 }) else { return .admit }
        return .refuse(retryAfter: longest.0, limit: longest.1)
    }

    /// Seconds until this pair may try again, or nil if it may now.
    public func pairRetryAfter(failures: [Date], now: Date) -> Int? {
        let remembered = failures.filter { $0 > now.addingTimeInterval(-memory) }
        guard let last = remembered.max(), let wait = backoff(afterFailures: remembered.count) else { return nil }
        return Self.seconds(from: now, to: last.addingTimeInterval(wait))
    }

    /// Whole seconds from `now` until `instant` (at least 1), or nil if it has come.
    static func seconds(from now: Date, to instant: Date) -> Int? {
        guard instant > now else { return nil }
        return max(1, Int(instant.timeIntervalSince(now).rounded(.up)))
    }
}
