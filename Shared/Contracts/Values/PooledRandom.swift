import Foundation
import Synchronization

/// Random words for what must be unique but is no secret: request and trace ids, signature nonces, event ids.
/// `SystemRandomNumberGenerator` makes one `getrandom` system call per 64 bits, and the gateway needed six per proxied
/// request (its request id, trace and span ids, the signature's nonce); this draws the kernel's randomness 4 KiB at a
/// time and hands it out word by word, so a request costs a hundredth of a system call. Secrets (tokens, keys,
/// passwords' salts) keep `SystemRandomNumberGenerator`, so no key material waits in a buffer.
public struct PooledRandomNumberGenerator: RandomNumberGenerator {
    public init() {}

    public mutating func next() -> UInt64 {
        Self.pool.withLock { $0.next() }
    }

    private static let pool = Mutex(Pool())

    private struct Pool {
        private var words = [UInt64](repeating: 0, count: 512)
        private var index = 512

        mutating func next() -> UInt64 {
            if index == words.count {
                // The kernel's CSPRNG through glibc (one `getrandom` for the whole buffer).
                words.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
                index = 0
            }
            defer { index += 1 }
            return words[index]
        }
    }
}

extension UUID {
    /// A version 4 UUID from `PooledRandomNumberGenerator`: Foundation's `UUID()` asks the kernel for each one.
    public static func pooledRandom() -> UUID {
        var generator = PooledRandomNumberGenerator()
        var bytes = (generator.next(), generator.next())
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = 0x40 | raw[6] & 0x0F
            raw[8] = 0x80 | raw[8] & 0x3F
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }
}
