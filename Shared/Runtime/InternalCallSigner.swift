import Crypto
import Foundation
import HTTPTypes
import NIOCore
import SurgeContracts
import Synchronization

/// Proves to a service that a request comes from the gateway, and on whose behalf. The gateway signs the method,
/// target, forwarded caller, client address, request id, time, a nonce and the SHA-256 of the body it forwards with
/// `INTERNAL_AUTH_SECRET` (HMAC-SHA256); a service accepts the forwarded caller only with a valid, fresh signature, so
/// a process inside the network cannot pose as a user by setting `X-Surge-Caller` itself. The caller's roles
/// (`X-Surge-Roles`, e.g. `admin`) are signed too when there are any, and so is the caller's session
/// (`X-Surge-Session`, the access token's `sid`) when the token names one, and the client's `Idempotency-Key` on a
/// keyed route (`X-Surge-Idempotency-Key`). A signature cannot be moved to another route, caller or body, expires
/// after `maximumAge`, and is accepted once (`SeenSignatures`).
///
/// The header is `v2;t=<unix seconds>;n=<nonce>;b=<body SHA-256, hex>;sig=<base64url HMAC>`: the body's digest travels
/// in it, so the service checks the signature before reading the body and the body against the digest as it reads it.
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

    /// The SHA-256 of a call's body, as lower-case hex.
    public struct BodyDigest: Sendable, Hashable, CustomStringConvertible {
        public let hex: String

        public static let empty = BodyDigest(SHA256.hash(data: [UInt8]()))

        public init(of body: ByteBuffer) {
            // Most calls (every read) have none: its digest is known.
            if body.readableBytes == 0 {
                self = .empty
            } else {
                self.init(body.withUnsafeReadableBytes { SHA256.hash(data: $0) })
            }
        }

        public init(of body: some DataProtocol) {
            self.init(SHA256.hash(data: body))
        }

        init(_ digest: SHA256.Digest) {
            hex = digest.withUnsafeBytes { bytes in
                String(unsafeUninitializedCapacity: 64) { output in
                    for (index, byte) in bytes.enumerated() {
                        output[2 * index] = Self.hexDigits[Int(byte >> 4)]
                        output[2 * index + 1] = Self.hexDigits[Int(byte & 0x0F)]
                    }
                    return 64
                }
            }
        }

        fileprivate init(hex: String) {
            self.hex = hex
        }

        private static let hexDigits = Array("0123456789abcdef".utf8)

        public var description: String { hex }
    }

    /// A signature that verified: what the service still checks, the body's digest, and what makes it the same call
    /// if it comes again.
    public struct Verified: Sendable {
        /// The digest the gateway signed; the body read must have it.
        public let body: BodyDigest
        /// The signature's time.
        public let seconds: Int64
        /// The first 64 bits of the code: a repeat of the signature has the same.
        public let replayKey: UInt64

        public init(body: BodyDigest, seconds: Int64, replayKey: UInt64) {
            self.body = body
            self.seconds = seconds
            self.replayKey = replayKey
        }
    }

    /// The header value for a call. Time is the real clock's, never a simulated one. `nonce` is random unless given
    /// (the known-answer tests give it).
    public func signature(
        method: String, target: String, caller: String?, clientAddress: String? = nil, roles: String? = nil, session: String? = nil,
        requestID: String, idempotencyKey: String? = nil, body: BodyDigest = .empty, nonce: String = InternalCallSigner.nonce(),
        at instant: Date = Date()
    ) -> String {
        let seconds = Int64(instant.timeIntervalSince1970.rounded(.down))
        let code = mac(
            seconds: seconds, nonce: nonce.utf8, method: method, target: target, caller: caller, clientAddress: clientAddress, roles: roles,
            session: session, requestID: requestID, idempotencyKey: idempotencyKey, body: body.hex.utf8)
        return "v2;t=\(seconds);n=\(nonce);b=\(body.hex);sig=" + Self.base64URL(of: code)
    }

    /// 128 random bits, base64url: what makes two otherwise equal calls in the same second sign differently.
    public static func nonce() -> String {
        var generator = PooledRandomNumberGenerator()
        let bits = (generator.next() as UInt64, generator.next() as UInt64)
        return withUnsafeBytes(of: bits) { Base64URL.encode($0) }
    }

    /// Whether `header` is a valid, fresh signature of this call and of `body`.
    public func isValid(
        _ header: String?, method: String, target: String, caller: String?, clientAddress: String? = nil, roles: String? = nil,
        session: String? = nil, requestID: String, idempotencyKey: String? = nil, body: BodyDigest = .empty, now: Date = Date()
    ) -> Bool {
        verify(
            header, method: method, target: target, caller: caller, clientAddress: clientAddress, roles: roles, session: session,
            requestID: requestID, idempotencyKey: idempotencyKey, now: now)?.body == body
    }

    /// The signature, when `header` is a valid, fresh one of this call: the body it covers is still to be checked.
    /// Checked on every call a service answers, so the header is read in place rather than split into strings.
    public func verify(
        _ header: String?, method: String, target: String, caller: String?, clientAddress: String? = nil, roles: String? = nil,
        session: String? = nil, requestID: String, idempotencyKey: String? = nil, now: Date = Date()
    ) -> Verified? {
        guard var header else { return nil }
        return header.withUTF8 { bytes -> Verified? in
            var index = 0
            func expect(_ text: StaticString) -> Bool {
                let count = text.utf8CodeUnitCount
                guard bytes.count - index >= count, memcmp(bytes.baseAddress! + index, text.utf8Start, count) == 0 else { return false }
                index += count
                return true
            }
            /// The bytes up to the next `;` (at least one, at most `limit`, each allowed), and the index past the `;`.
            func field(limit: Int, _ allowed: (UInt8) -> Bool) -> UnsafeBufferPointer<UInt8>? {
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: ";") {
                    guard index - start < limit, allowed(bytes[index]) else { return nil }
                    index += 1
                }
                guard index > start, index < bytes.count else { return nil }
                defer { index += 1 }
                return UnsafeBufferPointer(rebasing: bytes[start..<index])
            }
            guard expect("v2;t="), let time = field(limit: 18, { $0 &- UInt8(ascii: "0") < 10 }) else { return nil }
            let seconds = time.reduce(Int64(0)) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
            guard abs(Double(seconds) - now.timeIntervalSince1970) <= Self.maximumAge,
                expect("n="), let nonce = field(limit: 64, Self.isBase64URL),
                expect("b="), let digest = field(limit: 64, { $0 &- UInt8(ascii: "0") < 10 || $0 &- UInt8(ascii: "a") < 6 }), digest.count == 64,
                expect("sig=")
            else { return nil }
            let given = UnsafeBufferPointer(rebasing: bytes[index...])
            let code = mac(
                seconds: seconds, nonce: nonce, method: method, target: target, caller: caller, clientAddress: clientAddress, roles: roles,
                session: session, requestID: requestID, idempotencyKey: idempotencyKey, body: digest)
            guard Self.base64URL(of: code, equalsInConstantTime: given) else { return nil }
            let replayKey = code.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            return Verified(body: BodyDigest(hex: String(decoding: digest, as: UTF8.self)), seconds: seconds, replayKey: replayKey)
        }
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "A") < 26 || byte &- UInt8(ascii: "a") < 26 || byte &- UInt8(ascii: "0") < 10 || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_")
    }

    /// HMAC-SHA256 of the call's lines (`v2`, time, nonce, method, target, caller, client address, request id, body
    /// digest, then roles, session and the forwarded idempotency key when there are any), joined by line feeds. A
    /// further forwarded header joins as one more optional `name=value` line at the end. The message is gathered into
    /// one buffer: `HMAC.update` is generic over `DataProtocol`, and each call looks up generic metadata that costs more
    /// than hashing a line.
    private func mac(
        seconds: Int64, nonce: some Collection<UInt8>, method: String, target: String, caller: String?, clientAddress: String?,
        roles: String?, session: String?, requestID: String, idempotencyKey: String?, body: some Collection<UInt8>
    ) -> HMAC<SHA256>.MAC {
        var message: [UInt8] = []
        message.reserveCapacity(384)
        func line(_ bytes: some Collection<UInt8>) {
            if !message.isEmpty { message.append(UInt8(ascii: "\n")) }
            message.append(contentsOf: bytes)
        }
        line("v2".utf8)
        line(String(seconds).utf8)
        line(nonce)
        line(Self.asciiCased(method, upper: true).utf8)
        line(target.utf8)
        line((caller.map { Self.asciiCased($0, upper: false) } ?? "-").utf8)
        line((clientAddress ?? "-").utf8)
        line(requestID.utf8)
        line(body)
        if let roles, !roles.isEmpty { line(("roles=" + roles).utf8) }
        if let session, !session.isEmpty { line(("session=" + Self.asciiCased(session, upper: false)).utf8) }
        if let idempotencyKey { line(("key=" + idempotencyKey).utf8) }
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

/// The signatures a service accepted, kept while they could be accepted again (their time ± `maximumAge`), so a call
/// is answered once however often it is sent. In memory, per replica: one slot per second of signature time, reused
/// (and emptied) when its second comes round again 128 s later, by which time none of its signatures is fresh. A
/// replica refuses new calls rather than forget ones it must remember once `capacity` are held (about 17,000 calls a
/// second for two minutes; some 16 bytes each).
public final class SeenSignatures: Sendable {
    public enum Use: Sendable, Equatable { case first, repeated, full }

    private struct Slot {
        var second = Int64.min
        var keys: Set<UInt64> = []
    }

    private struct State {
        var slots = [Slot](repeating: Slot(), count: 128)
        var count = 0
    }

    private let state = Mutex(State())
    public let capacity: Int

    public init(capacity: Int = 1 << 21) {
        self.capacity = capacity
    }

    /// Records the signature; `.repeated` if it was recorded before.
    public func use(_ signature: InternalCallSigner.Verified) -> Use {
        state.withLock { state in
            let index = Int(UInt64(bitPattern: signature.seconds) & 127)
            if state.slots[index].second != signature.seconds {
                state.count -= state.slots[index].keys.count
                state.slots[index] = Slot(second: signature.seconds)
            }
            guard !state.slots[index].keys.contains(signature.replayKey) else { return .repeated }
            guard state.count < capacity else { return .full }
            state.slots[index].keys.insert(signature.replayKey)
            state.count += 1
            return .first
        }
    }
}
