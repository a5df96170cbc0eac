import Foundation

extension UUID {
    /// A version 7 UUID (RFC 9562): the Unix time in milliseconds, then 74 random bits. Ids made one after another sort
    /// together, so a B-tree index on them grows at its right edge instead of touching (and, after a checkpoint, writing
    /// whole) a random page per row as version 4 ids do. For ids written in bulk: events, inbox rows. Foundation makes
    /// only version 4.
    public static func timeOrdered(at now: Date = Date()) -> UUID {
        let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        var generator = PooledRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt16
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: milliseconds >> 40), UInt8(truncatingIfNeeded: milliseconds >> 32),
            UInt8(truncatingIfNeeded: milliseconds >> 24), UInt8(truncatingIfNeeded: milliseconds >> 16),
            UInt8(truncatingIfNeeded: milliseconds >> 8), UInt8(truncatingIfNeeded: milliseconds),
            0x70 | UInt8(truncatingIfNeeded: high >> 60), UInt8(truncatingIfNeeded: high >> 52),
            0x80 | UInt8(truncatingIfNeeded: high >> 46) & 0x3F, UInt8(truncatingIfNeeded: high >> 38),
            UInt8(truncatingIfNeeded: high >> 30), UInt8(truncatingIfNeeded: high >> 22), UInt8(truncatingIfNeeded: high >> 14),
            UInt8(truncatingIfNeeded: high >> 6), UInt8(truncatingIfNeeded: low >> 8), UInt8(truncatingIfNeeded: low)))
    }
}
