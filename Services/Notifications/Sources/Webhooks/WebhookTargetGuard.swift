import Foundation
import NIOPosix
import NotificationsDomain

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Checks a webhook URL against the operator's policy: its form, then every address its host resolves to (at
/// creation and again before each attempt, since what a name points at can change).
struct WebhookTargetGuard: Sendable {
    let policy: WebhookTargetPolicy
    static let resolveTimeout: Duration = .seconds(5)

    /// Throws `WebhookTargetRefusal` when the URL may not be called. A host that does not resolve is refused only
    /// when `requireResolution` (an attempt); a subscription may be made before its name exists. Returns the checked
    /// address to connect to when the host is a name (IPv4 first), so that the connection cannot go to another
    /// answer of a second lookup (DNS rebinding); nil for an address literal or a name not resolved.
    @discardableResult
    func check(_ url: String, requireResolution: Bool) async throws -> IPAddress? {
        if let refusal = policy.refusal(of: url) { throw refusal }
        guard let host = URLComponents(string: url)?.host else { return nil }
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let addresses = try await Self.resolve(name)
        if addresses.isEmpty {
            if requireResolution { throw WebhookTargetRefusal.unresolvable }
            return nil
        }
        if let refusal = policy.refusal(of: addresses) { throw refusal }
        guard Self.numeric(name) == nil else { return nil }
        return addresses.first(where: \.isV4) ?? addresses[0]
    }

    /// Every address `host` resolves to (none if it does not), looked up off the cooperative pool, within
    /// `resolveTimeout`.
    static func resolve(_ host: String) async throws -> [IPAddress] {
        try await withThrowingTaskGroup(of: [IPAddress]?.self) { group in
            group.addTask { try await NIOThreadPool.singleton.runIfActive { lookUp(host) } }
            group.addTask {
                try await Task.sleep(for: resolveTimeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }

    /// The address a numeric host (`203.0.113.7`, `2001:db8::1`) names; nil for a name. No lookup is made.
    static func numeric(_ host: String) -> IPAddress? {
        lookUp(host, flags: AI_NUMERICHOST).first
    }

    private static func lookUp(_ host: String, flags: Int32 = 0) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_flags = flags
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let socketAddress = entry.pointee.ai_addr {
                switch Int32(entry.pointee.ai_family) {
                case AF_INET:
                    let bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                    }
                    IPAddress(bytes: bytes).map { addresses.append($0) }
                case AF_INET6:
                    let bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                    }
                    IPAddress(bytes: bytes).map { addresses.append($0) }
                default: break
                }
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }
}

