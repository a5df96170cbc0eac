import Crypto
import Foundation
import SurgeContracts

/// A refresh token as the client holds it: 32 random bytes, base64url without padding. The server keeps only its
/// SHA-256, so a database leak gives away no usable token.
public struct RefreshTokenSecret: Sendable, Equatable {
    public let token: String
    public let hash: Data

    public static let byteCount = 32

    public static func generate() -> RefreshTokenSecret {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let token = Base64URL.encode(Data(bytes))
        return RefreshTokenSecret(token: token, hash: hash(token))
    }

    /// The stored form of a presented token.
    public static func hash(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }

    /// Whether the text has the shape of a token this service issues (43 base64url characters).
    public static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43 && token.utf8.allSatisfy { byte in
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D
                || byte == 0x5F
        }
    }
}
