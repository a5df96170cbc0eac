import Foundation

/// An address a webhook URL's host resolved to, as bytes: 4 for IPv4, 16 for IPv6.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var isV4: Bool { bytes.count == 4 }

    public var description: String {
        if isV4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":")
    }

    /// Whether the address lies in `prefix`/`length` (a prefix of the same family).
    func isIn(_ prefix: [UInt8], _ length: Int) -> Bool {
        guard prefix.count == bytes.count else { return false }
        for bit in 0..<length {
            let mask = UInt8(0x80) >> UInt8(bit % 8)
            if bytes[bit / 8] & mask != prefix[bit / 8] & mask { return false }
        }
        return true
    }
}

/// Where an address sits, for the rule against server-side request forgery: only `.public` is called unless the
/// operator allows private targets.
public enum AddressClass: String, Sendable, CaseIterable {
    case `public`
    /// 0.0.0.0/8, `::`: "this host", which most stacks route to themselves.
    case unspecified
    case loopback
    /// 169.254/16 and fe80::/10; 169.254.169.254 is the cloud metadata service.
    case linkLocal = "link-local"
    case metadata
    /// RFC 1918, 100.64/10 (carrier-grade NAT), fc00::/7 (unique local), fec0::/10 (the old site-local).
    case `private`
    case multicast
    /// 240/4, the broadcast address, and the special-purpose blocks nobody serves webhooks from.
    case reserved

    public static func of(_ address: IPAddress) -> AddressClass {
        address.isV4 ? ofV4(address) : ofV6(address)
    }

    private static func ofV4(_ address: IPAddress) -> AddressClass {
        let ranges: [([UInt8], Int, AddressClass)] = [
            ([169, 254, 169, 254], 32, .metadata),
            ([0, 0, 0, 0], 8, .unspecified),
            ([127, 0, 0, 0], 8, .loopback),
            ([169, 254, 0, 0], 16, .linkLocal),
            ([10, 0, 0, 0], 8, .private),
            ([172, 16, 0, 0], 12, .private),
            ([192, 168, 0, 0], 16, .private),
            ([100, 64, 0, 0], 10, .private),
            ([192, 0, 0, 0], 24, .reserved),
            ([198, 18, 0, 0], 15, .reserved),
            ([224, 0, 0, 0], 4, .multicast),
            ([240, 0, 0, 0], 4, .reserved),
        ]
        return ranges.first { address.isIn($0.0, $0.1) }?.2 ?? .public
    }

    private static func ofV6(_ address: IPAddress) -> AddressClass {
        let bytes = address.bytes
        let embeddedV4 = IPAddress(bytes: Array(bytes[12..<16]))!
        // IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96) and NAT64 (64:ff9b::/96) addresses reach the IPv4
        // address they carry; 6to4 (2002::/16) carries it in bytes 2 to 5.
        if address.isIn([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + [0, 0, 0, 0], 96) { return ofV4(embeddedV4) }
        if address.isIn([0, 0x64, 0xFF, 0x9B] + [UInt8](repeating: 0, count: 12), 96) { return ofV4(embeddedV4) }
        if address.isIn([0x20, 0x02] + [UInt8](repeating: 0, count: 14), 16) { return ofV4(IPAddress(bytes: Array(bytes[2..<6]))!) }
        let zero = [UInt8](repeating: 0, count: 16)
        if bytes == zero { return .unspecified }
        if bytes == Array(zero.dropLast()) + [1] { return .loopback }
        if address.isIn(zero, 96) { return ofV4(embeddedV4) }
        let ranges: [([UInt8], Int, AddressClass)] = [
            ([0xFE, 0x80] + zero.dropFirst(2), 10, .linkLocal),
            ([0xFE, 0xC0] + zero.dropFirst(2), 10, .private),
            ([0xFC] + zero.dropFirst(1), 7, .private),
            ([0xFF] + zero.dropFirst(1), 8, .multicast),
        ]
        return ranges.first { address.isIn($0.0, $0.1) }?.2 ?? .public
    }
}

/// What the operator allows webhook URLs to point at.
public struct WebhookTargetPolicy: Sendable, Equatable {
    /// Plain http (tests, a receiver on the same private network).
    public var allowHTTP: Bool
    /// Loopback, private, link-local and the other non-public addresses (tests).
    public var allowPrivateTargets: Bool

    public init(allowHTTP: Bool, allowPrivateTargets: Bool) {
        self.allowHTTP = allowHTTP
        self.allowPrivateTargets = allowPrivateTargets
    }

    public static let maxURLLength = 2048

    /// Why the URL itself is refused, before any name is resolved; nil when its form is acceptable.
    public func refusal(of text: String) -> WebhookTargetRefusal? {
        guard text.utf8.count <= Self.maxURLLength, let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { return .malformed }
        guard scheme == "https" || (scheme == "http" && allowHTTP) else { return .scheme(scheme) }
        // Credentials in the URL would be sent to whoever the name points at next, and logged with it.
        guard components.user == nil, components.password == nil else { return .credentials }
        guard components.fragment == nil else { return .malformed }
        return nil
    }

    /// Why the addresses the host resolved to are refused; nil when every one may be called.
    public func refusal(of addresses: [IPAddress]) -> WebhookTargetRefusal? {
        guard !allowPrivateTargets else { return nil }
        for address in addresses {
            let kind = AddressClass.of(address)
            if kind != .public { return .address(address, kind) }
        }
        return nil
    }
}

public enum WebhookTargetRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed
    case scheme(String)
    case credentials
    case address(IPAddress, AddressClass)
    case unresolvable

    public var description: String {
        switch self {
        case .malformed: "must be an absolute URL with a host and no fragment, at most \(WebhookTargetPolicy.maxURLLength) bytes"
        case .scheme(let scheme): "must use https, not \(scheme)"
        case .credentials: "must not carry a user name or password"
        case .address(let address, let kind): "resolves to \(address), a \(kind.rawValue) address Surge does not call"
        case .unresolvable: "its host name does not resolve"
        }
    }
}
