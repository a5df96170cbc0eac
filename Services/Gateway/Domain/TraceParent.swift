import SurgeContracts

/// W3C Trace Context `traceparent`: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`.
public struct TraceParent: Sendable, Equatable {
    public var traceID: String
    public var parentID: String
    public var flags: String

    public init?(_ header: String) {
        let parts = header.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == "00",
            parts[1].count == 32, Self.isLowerHex(parts[1]), parts[1] != String(repeating: "0", count: 32),
            parts[2].count == 16, Self.isLowerHex(parts[2]), parts[2] != String(repeating: "0", count: 16),
            parts[3].count == 2, Self.isLowerHex(parts[3])
        else { return nil }
        traceID = parts[1]
        parentID = parts[2]
        flags = parts[3]
    }

    init(traceID: String, parentID: String, flags: String) {
        self.traceID = traceID
        self.parentID = parentID
        self.flags = flags
    }

    /// A placeholder until a request's trace is known: all-zero ids, which W3C defines as invalid.
    public static let unset = TraceParent(traceID: String(repeating: "0", count: 32), parentID: String(repeating: "0", count: 16), flags: "00")

    /// A new sampled trace.
    public static func random() -> TraceParent {
        TraceParent(traceID: randomHex(bytes: 16), parentID: randomHex(bytes: 8), flags: "01")
    }

    /// The same trace with the gateway as the new parent span.
    public func child() -> TraceParent {
        TraceParent(traceID: traceID, parentID: Self.randomHex(bytes: 8), flags: flags)
    }

    public var header: String { "00-\(traceID)-\(parentID)-\(flags)" }

    private static func isLowerHex(_ text: String) -> Bool {
        text.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Random lower-case hex, 16 digits from each 64 random bits: the gateway makes a trace for every request it is not
    /// given one for.
    private static func randomHex(bytes: Int) -> String {
        var generator = PooledRandomNumberGenerator()
        return String(unsafeUninitializedCapacity: bytes * 2) { buffer in
            var word: UInt64 = 0
            for index in 0..<bytes * 2 {
                if index % 16 == 0 { word = generator.next() }
                buffer[index] = hexDigits[Int(word & 0xF)]
                word >>= 4
            }
            return bytes * 2
        }
    }
}
