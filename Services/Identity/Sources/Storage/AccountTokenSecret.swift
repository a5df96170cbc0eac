import Crypto
import Foundation
import IdentityDomain

/// The stored form of a mailed token's verifier: its SHA-256. The verifier is 256 random bits, so a plain hash is
/// enough (no salt or slow hash is needed against guessing), and a database leak gives away no usable link.
enum AccountTokenSecret {
    static func hash(_ verifier: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: verifier))
    }
}
