import Crypto
import Foundation
import HTTPTypes
import SurgeContracts

/// Proves to a service that a request comes from the gateway, and on whose behalf. The gateway signs the method,
/// target, forwarded caller, request id and time with `INTERNAL_AUTH_SECRET` (HMAC-SHA256); a service accepts the
/// forwarded caller only with a valid, fresh signature, so a process inside the network cannot pose as a user by
/// setting `X-Surge-Caller` itself. The caller's roles (`X-Surge-Roles`, e.g. `admin`) are signed too when there are
/// any, and so is the caller's session (`X-Surge-Session`, the access token's `sid`) when the token names one; a call
/// without either is signed exactly as before they existed. The body is not signed: a signature cannot be moved to
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
        requestID: String, at instant: Date = Date()
    ) -> String {
        let seconds = Int64(instant.timeIntervalSince1970.rounded(.down))
        let code = mac(
            seconds: seconds, method: method, target: target, caller: caller, clientAddress: clientAddress, roles: roles, session: session,
            requestID: requestID)
        return "v1;t=\(seconds);sig=\(code)"
    }

    public func isValid(
        _ header: String?, method: String, target: String, caller: String?, clientAddress: String? = nil, roles: String? = nil,
        session: String? = nil, requestID: String, now: Date = Date()
    ) -> Bool {
        guard let header else { return false }
        let parts = header.split(separator: ";")
        guard parts.count == 3, parts[0] == "v1", parts[1].hasPrefix("t="), parts[2].hasPrefix("sig="),
            let seconds = Int64(parts[1].dropFirst(2)),
            abs(Double(seconds) - now.timeIntervalSince1970) <= Self.maximumAge
        else { return false }
        let expected = mac(
            seconds: seconds, method: method, target: target, caller: caller, clientAddress: clientAddress, roles: roles, session: session,
            requestID: requestID)
        // Constant-time comparison of the two codes.
        let given = Array(parts[2].dropFirst(4).utf8)
        let wanted = Array(expected.utf8)
        guard given.count == wanted.count else { return false }
        return zip(given, wanted).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private func mac(
        seconds: Int64, method: String, target: String, caller: String?, clientAddress: String?, roles: String?, session: String?,
        requestID: String
    ) -> String {
        var parts = ["v1", String(seconds), method.uppercased(), target, caller?.lowercased() ?? "-", clientAddress ?? "-", requestID]
        // Only a call with roles (a session) has this line, so what the gateway signed before they existed still verifies.
        if let roles, !roles.isEmpty { parts.append("roles=" + roles) }
        if let session, !session.isEmpty { parts.append("session=" + session.lowercased()) }
        let message = parts.joined(separator: "\n")
        var hmac = keyed
        hmac.update(data: Data(message.utf8))
        let code = hmac.finalize()
        return Base64URL.encode(Data(code))
    }
}
