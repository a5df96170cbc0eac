import Foundation
import SurgeContracts

/// What a token sent by e-mail lets its holder do, once.
public enum AccountTokenPurpose: String, Sendable, CaseIterable {
    /// Set a new password without the old one.
    case passwordReset = "password-reset"
    /// Prove that the address (the account's, or the one it is changing to) reaches its owner.
    case emailVerification = "email-verification"
}

/// A token mailed in a link: a selector, by which the server finds the stored row, and a verifier, of which the server
/// keeps only a hash and which it compares in constant time. Looking up by the selector and comparing the verifier
/// apart means the database's index lookup never compares secret bytes, so its timing tells an attacker nothing.
///
/// On the wire: base64url (no padding) of the 16-byte selector followed by the 32-byte verifier, 64 characters.
public struct AccountToken: Sendable, Equatable {
    public static let selectorByteCount = 16
    /// 256 bits, well over the 128 a guess must face.
    public static let verifierByteCount = 32
    public static let textLength = 64

    public let selector: [UInt8]
    public let verifier: [UInt8]

    public init(selector: [UInt8], verifier: [UInt8]) {
        precondition(selector.count == Self.selectorByteCount && verifier.count == Self.verifierByteCount)
        self.selector = selector
        self.verifier = verifier
    }

    public static func generate<Generator: RandomNumberGenerator>(using generator: inout Generator) -> AccountToken {
        let bytes = (0..<(selectorByteCount + verifierByteCount)).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return AccountToken(selector: Array(bytes[..<selectorByteCount]), verifier: Array(bytes[selectorByteCount...]))
    }

    public static func generate() -> AccountToken {
        var generator = SystemRandomNumberGenerator()
        return generate(using: &generator)
    }

    /// The token a link carried, or nil when the text cannot be one (then it names nothing, like an unknown token).
    public init?(text: String) {
        guard text.utf8.count == Self.textLength,
            text.utf8.allSatisfy({ byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
            }),
            let data = Base64URL.decode(text), data.count == Self.selectorByteCount + Self.verifierByteCount
        else { return nil }
        let bytes = Array(data)
        self.init(selector: Array(bytes[..<Self.selectorByteCount]), verifier: Array(bytes[Self.selectorByteCount...]))
    }

    public var text: String { Base64URL.encode(Data(selector + verifier)) }
}

/// A token as the server keeps it: never the verifier itself, only its hash.
public struct StoredAccountToken: Sendable, Equatable {
    public var userID: UUID
    public var purpose: AccountTokenPurpose
    /// The address the mail went to: the one a verification proves, or the account's address at the time of a reset.
    public var email: String
    public var verifierHash: [UInt8]
    public var expiresAt: Date
    public var usedAt: Date?

    public init(userID: UUID, purpose: AccountTokenPurpose, email: String, verifierHash: [UInt8], expiresAt: Date, usedAt: Date? = nil) {
        self.userID = userID
        self.purpose = purpose
        self.email = email
        self.verifierHash = verifierHash
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

/// What presenting a mailed token comes to. Every refusal is answered alike (one problem type), so the answer does
/// not tell a guesser which of them it was; the reason is for logs and tests.
public enum AccountTokenDecision: Sendable, Equatable {
    case accept
    case refuse(Refusal)

    public enum Refusal: String, Sendable, Equatable {
        case unknown, wrongVerifier, wrongPurpose, used, expired
    }

    /// `presentedHash` is the hash of the presented verifier; `stored` the row its selector found, if any.
    public static func decide(
        _ stored: StoredAccountToken?, presentedHash: [UInt8], purpose: AccountTokenPurpose, now: Date
    ) -> AccountTokenDecision {
        guard let stored else { return .refuse(.unknown) }
        guard ConstantTime.equal(stored.verifierHash, presentedHash) else { return .refuse(.wrongVerifier) }
        guard stored.purpose == purpose else { return .refuse(.wrongPurpose) }
        if stored.usedAt != nil { return .refuse(.used) }
        if stored.expiresAt <= now { return .refuse(.expired) }
        return .accept
    }
}

public enum ConstantTime {
    /// Whether two byte strings are equal, taking the same time wherever they differ (a length difference is not
    /// secret: every hash compared here has the same length).
    public static func equal(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}

/// How often mails about an account may be asked for, so that nobody can flood a mailbox or probe many addresses
/// from one place. Requests are counted per address as typed (normalised), whether or not an account has it.
///
/// - Per source (`perSource`): over the limit, the request is refused with 429 and `Retry-After`; this says nothing
///   about any address.
/// - Per address (`perAddress`): over the limit, the request is answered exactly as any other, but no further mail is
///   sent; telling the caller would tell them the address is being asked about, and the owner's inbox is spared.
public struct MailRequestThrottle: Sendable, Equatable {
    public var perAddress: FailureLimit
    public var perSource: FailureLimit

    public init(
        perAddress: FailureLimit = FailureLimit(maxFailures: 3, window: 3600),
        perSource: FailureLimit = FailureLimit(maxFailures: 20, window: 3600)
    ) {
        self.perAddress = perAddress
        self.perSource = perSource
    }

    public enum Decision: Sendable, Equatable {
        /// Record the request and send the mail.
        case send
        /// Answer as usual; record nothing and send nothing.
        case answerQuietly
        /// 429 with `Retry-After`.
        case refuse(retryAfter: Int)
    }

    /// `address` are earlier requests for this address, `source` earlier requests from this source (none for the
    /// unknown source, which would be everyone's); times in any order.
    public func decide(address: [Date], source: [Date], now: Date) -> Decision {
        if let wait = perSource.retryAfter(failures: source, now: now) { return .refuse(retryAfter: wait) }
        if perAddress.retryAfter(failures: address, now: now) != nil { return .answerQuietly }
        return .send
    }

    /// How long a request can matter to a limit; older ones may be deleted.
    public var retention: TimeInterval { max(perAddress.window, perSource.window) }
}

/// How long mailed tokens live.
public struct AccountTokenLifetimes: Sendable, Equatable {
    public var passwordReset: TimeInterval
    public var emailVerification: TimeInterval

    public init(passwordReset: TimeInterval = 30 * 60, emailVerification: TimeInterval = 48 * 3600) {
        self.passwordReset = passwordReset
        self.emailVerification = emailVerification
    }

    public func lifetime(of purpose: AccountTokenPurpose) -> TimeInterval {
        switch purpose {
        case .passwordReset: passwordReset
        case .emailVerification: emailVerification
        }
    }
}

extension EmailAddress {
    /// The address as told to someone who should recognise it but not learn it whole: `an***@example.com`.
    public var masked: String {
        let local = localPart
        let domain = value.dropFirst(local.count)
        return String(local.prefix(min(2, max(1, local.count - 1)))) + "***" + domain
    }
}
