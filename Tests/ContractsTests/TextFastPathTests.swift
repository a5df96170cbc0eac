import Foundation
@testable import SurgeContracts
import SurgeTestSupport
import Testing

/// UUIDs and timestamps are written and read by hand (`UUID.key`, `UUID(text:)`, `Timestamp`): each must give exactly
/// what Foundation gives, bit for bit, and refuse what it refuses.
@Suite("UUID and timestamp text: what Foundation writes and reads, without its sscanf and calendar", .tags(.unit), .kind(.unit))
struct TextFastPathTests {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    @Test("a UUID's key is Foundation's uuidString in lower case, and both cases parse back to it")
    func uuidRoundTrips() {
        var generator = SystemRandomNumberGenerator()
        var samples = (0..<5_000).map { _ in UUID() }
        samples += [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
        samples += [UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))]
        samples += (0..<1_000).map { _ in
            let high = generator.next() as UInt64, low = generator.next() as UInt64
            return withUnsafeBytes(of: (high, low)) { bytes in bytes.load(as: UUID.self) }
        }
        for uuid in samples {
            #expect(uuid.key == uuid.uuidString.lowercased())
            #expect(UUID(text: uuid.uuidString) == uuid)
            #expect(UUID(text: uuid.key) == uuid)
            #expect(UUID(text: uuid.key[...]) == uuid)
        }
    }

    @Test("byte order of UUIDs (PostgreSQL's) is the order of their keys, and strict")
    func byteOrder() {
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let lastByte = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))
        let firstByte = UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let high = UUID(uuid: (0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let samples = [zero, lastByte, firstByte, high] + (0..<2_000).map { _ in UUID() }
        for (a, b) in zip(samples, samples.shuffled()) {
            #expect(a.precedesInByteOrder(b) == (a.key < b.key), "\(a.key) \(b.key)")
        }
        #expect(zero.precedesInByteOrder(lastByte) && lastByte.precedesInByteOrder(firstByte) && firstByte.precedesInByteOrder(high))
        #expect(!zero.precedesInByteOrder(zero))
        #expect(!high.precedesInByteOrder(firstByte))
    }

    @Test("a time-ordered UUID is version 7 of RFC 9562: its milliseconds first, then random bits; later ones sort after")
    func timeOrdered() {
        let instant = Date(timeIntervalSince1970: 1_795_941_900.123)
        let ids = (0..<2_000).map { _ in UUID.timeOrdered(at: instant) }
        for id in ids {
            #expect(id.key.hasPrefix("01a2267a-9f5b-7"), "\(id.key)")
            #expect(["8", "9", "a", "b"].contains(id.key.dropFirst(19).prefix(1)), "\(id.key)")
            #expect(UUID(text: id.key) == id)
        }
        #expect(Set(ids).count == ids.count)
        let later = UUID.timeOrdered(at: instant.addingTimeInterval(0.001))
        #expect(ids.allSatisfy { $0.precedesInByteOrder(later) })
    }

    @Test("a pooled random UUID is version 4 with RFC 9562's variant, and none repeats across refills and threads")
    func pooledRandom() async {
        // 8 tasks × 1,000 ids draw 16,000 words: the 512-word pool is refilled about 30 times, from both cores at once.
        let ids = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<8 { group.addTask { (0..<1_000).map { _ in UUID.pooledRandom() } } }
            return await group.reduce(into: [UUID]()) { $0 += $1 }
        }
        for id in ids {
            #expect(id.key.dropFirst(14).first == "4", "\(id.key)")
            #expect(["8", "9", "a", "b"].contains(id.key.dropFirst(19).prefix(1)), "\(id.key)")
            #expect(UUID(uuidString: id.key) == id)
        }
        #expect(Set(ids).count == ids.count)
        // Every bit that is not the version's or the variant's varies: no byte of the pool is left unfilled.
        let words = ids.map { withUnsafeBytes(of: $0.uuid) { $0.load(as: (UInt64, UInt64).self) } }
        let varying = words.reduce((UInt64(0), UInt64(0))) { ($0.0 | ($1.0 ^ words[0].0), $0.1 | ($1.1 ^ words[0].1)) }
        #expect(varying.0.nonzeroBitCount == 60 && varying.1.nonzeroBitCount == 62)
    }

    @Test("text that is not a UUID is refused, as Foundation refuses it", arguments: [
        "", "c4a11e00-0075-4000-8000-00000000000", "c4a11e00-0075-4000-8000-0000000000011", "c4a11e00007540008000000000000001",
        "c4a11e00-0075-4000-8000_000000000001", "c4a11e000-075-4000-8000-000000000001", "g4a11e00-0075-4000-8000-000000000001",
        "c4a11e00-0075-4000-8000-00000000000 ", "{c4a11e00-0075-4000-8000-0000000001}",
        "c4a11e00-0075-4000-8000-00000000000é", "c4a11e00-0075-4000-8000-0000000000\u{0}1",
    ])
    func uuidRefusals(text: String) {
        #expect(UUID(text: text) == nil)
        #expect(UUID(uuidString: text) == nil)
    }

    @Test("leading white space, which Foundation's sscanf skips, is refused")
    func uuidWhiteSpace() {
        #expect(UUID(text: " c4a11e00-0075-4000-8000-00000000001") == nil)
    }

    /// Instants from 1970 to 2200 at whole seconds, whole milliseconds and in between (what `Date()` holds).
    static func instants(_ count: Int) -> [Date] {
        var generator = SystemRandomNumberGenerator()
        let range = Timestamp.supportedRange
        var instants: [Date] = []
        for index in 0..<count {
            let seconds = Double(Int.random(in: Int(range.lowerBound.timeIntervalSince1970)..<Int(range.upperBound.timeIntervalSince1970), using: &generator))
            switch index % 3 {
            case 0: instants.append(Date(timeIntervalSince1970: seconds))
            case 1: instants.append(Date(timeIntervalSince1970: seconds + Double(Int.random(in: 0..<1000, using: &generator)) / 1000))
            default: instants.append(Date(timeIntervalSince1970: seconds + Double.random(in: 0..<1, using: &generator)))
            }
        }
        let edges = [
            "1970-01-01T00:00:00.000Z", "1999-12-31T23:59:59.999Z", "2000-02-29T12:00:00.500Z", "2001-01-01T00:00:00.000Z",
            "2024-02-29T23:59:59.999Z", "2026-03-29T01:00:00.001Z", "2100-02-28T23:59:59.999Z", "2200-12-31T23:59:59.999Z",
        ]
        instants += edges.compactMap { try? withFraction.parse($0) }
        instants += [Date(), Date(timeIntervalSince1970: 0.0005), Date(timeIntervalSince1970: 1_790_000_000.9999999)]
        // Around Foundation's reference date, where the format style's sum can differ in the last bit.
        instants += (0..<3_000).map { _ in Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -9_000_000..<9_000_000)) + Double(Int.random(in: 0..<1000)) / 1000) }
        return instants
    }

    @Test("instants are written as the ISO 8601 format style writes them (milliseconds: the next instant up), with and without milliseconds")
    func formatting() {
        for instant in Self.instants(30_000) {
            // The next representable instant up, so that what was read from a millisecond reads back the same.
            let nudged = Date(timeIntervalSinceReferenceDate: instant.timeIntervalSinceReferenceDate.nextUp)
            #expect(Timestamp.format(instant) == Self.withFraction.format(nudged), "\(instant.timeIntervalSinceReferenceDate)")
            let whole = Date(timeIntervalSince1970: instant.timeIntervalSince1970.rounded(.down))
            #expect(Timestamp.formatWholeSeconds(instant) == Self.withoutFraction.format(whole), "\(instant.timeIntervalSinceReferenceDate)")
        }
    }

    @Test("what Surge writes parses to the same bits as the format style reads it")
    func parsing() throws {
        for instant in Self.instants(30_000) {
            for text in [Timestamp.format(instant), Timestamp.formatWholeSeconds(instant)] {
                let expected = try (try? Self.withFraction.parse(text)) ?? Self.withoutFraction.parse(text)
                let parsed = try #require(Timestamp.parse(text))
                #expect(parsed.timeIntervalSinceReferenceDate.bitPattern == expected.timeIntervalSinceReferenceDate.bitPattern, "\(text)")
            }
        }
    }

    @Test("other forms still parse as the format style reads them, and bad ones are refused", arguments: [
        "2026-09-21T14:13:20.3Z", "2026-09-21T14:13:20.37Z", "2026-09-21T14:13:20.3756Z", "2026-09-21T16:13:20+02:00",
        "2026-09-21T14:13:20.375+00:00", "2026-09-21T14:13:20.5-03:30", "2026-09-21t14:13:20z", "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z", "2026-09-21 14:13:20Z", "2026-09-21T14:13:20", "2026-09-21T14:13:2aZ", "+026-09-21T14:13:20Z",
        "2026-09-21T14:13:20.-12Z", "",
    ])
    func otherForms(text: String) {
        let expected = (try? Self.withFraction.parse(text)) ?? (try? Self.withoutFraction.parse(text))
        let parsed = Timestamp.parse(text)
        #expect(parsed?.timeIntervalSinceReferenceDate.bitPattern == expected?.timeIntervalSinceReferenceDate.bitPattern)
    }

    @Test("what the format style rolls over is refused: a leap second, 24:00, a 60th minute, a day the month lacks, an offset without its colon", arguments: [
        "2026-06-30T23:59:60Z", "2026-09-21T12:00:60Z", "2026-09-21T12:00:60.000Z", "2026-09-21T12:00:60.5Z", "2026-09-21T12:00:60+02:00",
        "2026-09-21T12:00:61Z", "2026-09-21T24:00:00Z", "2026-09-21T14:60:00Z", "2026-02-30T10:00:00Z", "2026-09-21T12:00:00+0200",
        "2026-09-21T12:00:00+02", "2026-09-21T12:00:00+02:60", "2026-09-21T12:00:5Z",
    ])
    func rolledOverFormsAreRefused(text: String) {
        #expect((try? Self.withFraction.parse(text)) ?? (try? Self.withoutFraction.parse(text)) != nil, "the format style reads \(text)")
        #expect(Timestamp.parse(text) == nil, "\(text)")
    }
}
