import Crypto
import Foundation
import HTTPTypes
import SurgeContracts

/// Proves to a service that a request comes from the gateway, and on whose behalf. The gateway signs the method,
/// target, forwarded caller, request id and time with `INTERNAL_AUTH_SECRET` (HMAC-SHA256); a service accepts the
/// forwarded caller only with a valid, fresh signature, so a process inside the network cannot pose as a user by
/// setting `X-Surge-Caller` itself. The caller's roles (`X-Surge-Roles`, e.g. `admin`) are signed too when there are
/// any, and so is the caller's session (`X-Surge-Session`, the access token's `sid`) when the token names one, and the
/// client's `Idempotency-Key` on a keyed route (`X-Surge-Idempotency-Key`); a call without them is signed exactly as
/// before they existed. The body is not signed: a signature cannot be moved to
/// another route or caller, and it expires after `maximumAge`.
public struct InternalCallSigner: Sendable {
    public static let header = HTTPField.Name("X-Surge-Signature")!
    public static let secretVariable = "INTERNAL_AUTH_SECRET"
    public static let minimumSecretLength = 32
    /// How far a signature's time may be from the verifier's clock, either way.
    public static let maximumAge: TimeInterval = 60

    /// Keyed once: each signature continues from a copy instead of deriving the key's pads again.
    private let keyed: HMAC<SHA256>

    public init(secret: String) throws {
        guard secret.utf8.count >= Self.minimumSecretLength else {
            throw ConfigurationError(variable: Self.secretVariable, problem: "must be at least \(Self.minimumSecretLength) characters")
        }
        keyed = HMAC<SHA256>(key: SymmetricKey(data: Data(secret.utf8)))
    }

    public static func from(_ reader: EnvironmentReader) throws -> InternalCallSigner {
        try InternalCallSigner(secret: reader.required(secretVariable))
    }

    /// The `X-Surge-Roles` value for a caller's roles: sorted, comma-separated; nil when there are none.
    public static func rolesHeader(_ roles: [String]) -> String? {
        roles.isEmpty ? nil : Set(roles).sorted().joined(separator: ",")
    }

    /// The header value for a call. Time is the real clock's, never a simulated one.
    public func signature(
        method: String, target: String, caller: String?, clientAddress: String? = nil, roles: String? = nil, session: String? = nil,
        requestID: String, idempotencyKey: String? = nil, at instant: Date = Date()
    ) -> String {
        let seconds = Int64(instant.timeIntervalSince1970.rounded(.down))
        let code = mac(
            seconds: seconds, method: method, target: target, caller: caller, clientAddress: clientAddress, roles: roles, session: session,
            requestID: requestID, idempotencyKey: idempotencyKey)
        return "v1;t=\(seconds);sig=" + Self.base64URL(of: code)
    }

    /// Checked on every call a service answers, so the header is read in place rather than split into strings.
    public func isValid(
        _ header: String?, method: String, target: String, caller: String?, clientAddress: String? = nil, roles: String? = nil,
        session: String? = nil, requestID: String, idempotencyKey: String? = nil, now: Date = Date()
    ) -> Bool {
        guard var header else { return false }
        return header.withUTF8 { bytes -> Bool in
            let prefix = "v1;t=".utf8
            guard bytes.starts(with: prefix) else { return false }
            var index = prefix.count
            var seconds: Int64 = 0
            var digits = 0
            while index < bytes.count, bytes[index] != UInt8(ascii: ";") {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10, digits < 18 else { return false }
                seconds = seconds * 10 + Int64(digit)
                digits += 1
                index += 1
            }
            let marker = ";sig=".utf8
            guard digits > 0, UnsafeBufferPointer(rebasing: bytes[index...]).starts(with: marker),
                abs(Double(seconds) - now.timeIntervalSince1970) <= Self.maximumAge
            else { return false }
            let given = UnsafeBufferPointer(rebasing: bytes[(index + marker.count)...])
            let code = mac(
                seconds: seconds, method: method, target: target, caller: caller, clientAddress: clientAddress, roles: roles, session: session,
                requestID: requestID, idempotencyKey: idempotencyKey)
            return Self.base64URL(of: code, equalsInConstantTime: given)
        }
    }

    /// HMAC-SHA256 of the call's lines (`v1`, time, method, target, caller, client address, request id, then roles,
    /// session and the forwarded idempotency key when there are any), joined by line feeds. The message is gathered into one buffer: `HMAC.update` is
    /// generic over `DataProtocol`, and each call looks up generic metadata that costs more than hashing a line.
    private func mac(
        seconds: Int64, method: String, target: String, caller: String?, clientAddress: String?, roles: String?, session: String?,
        requestID: String, idempotencyKey: String?
    ) -> HMAC<SHA256>.MAC {
        var message: [UInt8] = []
        message.reserveCapacity(256)
        func line(_ text: String) {
            if !message.isEmpty { message.append(UInt8(ascii: "\n")) }
            message.append(contentsOf: text.utf8)
        }
        line("v1")
        line(String(seconds))
        line(Self.asciiCased(method, upper: true))
        line(target)
        line(caller.map { Self.asciiCased($0, upper: false) } ?? "-")
        line(clientAddress ?? "-")
        line(requestID)
        // Only a call with roles (a session) has this line, so what the gateway signed before they existed still verifies.
        if let roles, !roles.isEmpty { line("roles=" + roles) }
        if let session, !session.isEmpty { line("session=" + Self.asciiCased(session, upper: false)) }
        if let idempotencyKey { line("key=" + idempotencyKey) }
        var hmac = keyed
        message.withUnsafeBytes { hmac.update(data: $0) }
        return hmac.finalize()
    }

    /// `uppercased()` / `lowercased()`, without a new string when the text is ASCII already in that case (a method, a
    /// lower-case UUID).
    private static func asciiCased(_ text: String, upper: Bool) -> String {
        let (from, to) = upper ? (UInt8(ascii: "a"), UInt8(ascii: "z")) : (UInt8(ascii: "A"), UInt8(ascii: "Z"))
        let unchanged = text.utf8.allSatisfy { $0 < 0x80 && !(from...to).contains($0) }
        return unchanged ? text : (upper ? text.uppercased() : text.lowercased())
    }

    /// Whether `given` is the code's base64url text, looking at every byte whatever the first difference.
    private static func base64URL(of code: HMAC<SHA256>.MAC, equalsInConstantTime given: UnsafeBufferPointer<UInt8>) -> Bool {
        var expected = base64URL(of: code)
        return expected.withUTF8 { expected in
            guard given.count == expected.count else { return false }
            return zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }

    private static func base64URL(of code: HMAC<SHA256>.MAC) -> String {
        code.withUnsafeBytes { Base64URL.encode($0) }
    }
}
