import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

@testable import LeaderboardDomain

// MARK: - RankIndex

/// The specification: a plain array sorted by the board order spelled out literally.
private struct NaiveBoard {
    var members: [UUID: RankEntry] = [:]

    static func precedes(_ a: RankEntry, _ b: RankEntry) -> Bool {
        if a.score != b.score { return a.score > b.score }
        if a.name.lowercased() != b.name.lowercased() { return a.name.lowercased() < b.name.lowercased() }
        if a.name != b.name { return a.name < b.name }
        return a.userID.uuidString < b.userID.uuidString
    }

    var sorted: [RankEntry] { members.values.sorted(by: Self.precedes) }

    func rank(forScore score: Double) -> Int { 1 + members.values.count { $0.score > score } }
}

private func uuid(_ random: inout SeededRandom) -> UUID {
    let (high, low) = (random.next(), random.next())
    var bytes = (high.bigEndian, low.bigEndian)
    return withUnsafeBytes(of: &bytes) { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
}

private func sequentialUUID(_ n: Int) -> UUID {
    UUID(uuidString: String(format: "00000000-0000-4000-8000-%012X", n))!
}

extension RankIndex {
    /// Checks the treap's invariants (sizes, heap order, the free list, the hash table) and returns its height.
    fileprivate func checkedHeight() -> Int {
        func walk(_ t: Int32, depth: Int) -> (size: Int, height: Int) {
            guard t != RankIndex.none else { return (0, depth) }
            let node = nodes[Int(t)]
            for child in [node.left, node.right] where child != RankIndex.none {
                #expect(nodes[Int(child)].priority <= node.priority)
            }
            let (left, right) = (walk(node.left, depth: depth + 1), walk(node.right, depth: depth + 1))
            #expect(Int(node.size) == left.size + right.size + 1)
            return (left.size + right.size + 1, max(left.height, right.height))
        }
        let (size, height) = walk(root, depth: 0)
        #expect(size == count)
        var free = 0
        var t = freeList
        while t != RankIndex.none {
            free += 1
            t = nodes[Int(t)].size
        }
        #expect(free + count == nodes.count)
        #expect(slots.count { $0 != RankIndex.none } == count)
        #expect(slots.count * 3 >= count * 4)
        return height
    }
}

/// `swift test --filter LeaderboardDomainTests` runs both suites.
@Suite("Leaderboard domain")
enum LeaderboardDomainTests {}

extension LeaderboardDomainTests {
    @Suite("RankIndex", .tags(.unit), .kind(.unit))
    struct RankIndexTests {
        static let names = [
            "Ada", "ada", "ADA", "Bob", "bob", "Émile", "émile", "Emile", "e\u{301}mile", "Zoë", "zoe", "ß", "SS", "ss", "李雷", "", "Ærø",
            "a display name longer than fifteen bytes", "A display name longer than fifteen bytes", "🙂", "Ωmega", "ωmega",
        ]
        static let scores: [Double] = [0, -0.0, 1, 2, 2, 3, 5, 10, -1, -2.5, 0.5, 0.1 + 0.2, 0.3, 1e12, -1e12, .infinity, -.infinity]

        @Test("Ties share a rank (1, 2, 2, 4) and are ordered by name, case-insensitively first")
        func ties() {
            var index = RankIndex()
            let (ann, bob, cat, dan) = (UUID(), UUID(), UUID(), UUID())
            index.set(dan, score: 5, name: "dan")
            index.set(bob, score: 7, name: "bob")
            index.set(cat, score: 10, name: "Cat")
            index.set(ann, score: 7, name: "Ann")
            #expect(index.entries(from: 0, limit: 10).map(\.name) == ["Cat", "Ann", "bob", "dan"])
            #expect([cat, ann, bob, dan].map { index.rank(of: $0) } == [1, 2, 2, 4])
            #expect([cat, ann, bob, dan].map { index.position(of: $0) } == [0, 1, 2, 3])
            #expect([cat, ann, bob, dan].map { index.topPercent(of: $0) } == [25, 50, 50, 100])
            #expect(index.topScore == 10)
            #expect([11, 10, 8, 7, 6, 5, 0].map { index.rank(forScore: $0) } == [1, 1, 2, 2, 4, 4, 5])

            index.set(ann, score: 10, name: "Ann")
            #expect(index.entries(from: 0, limit: 10).map(\.name) == ["Ann", "Cat", "bob", "dan"])
            #expect([ann, cat, bob, dan].map { index.rank(of: $0) } == [1, 1, 3, 4])
            index.set(ann, score: 10, name: "Zed")
            #expect(index.entries(from: 0, limit: 2).map(\.name) == ["Cat", "Zed"])

            index.remove(cat)
            index.remove(cat)
            #expect(index.count == 3)
            #expect(index.rank(of: cat) == nil && index.position(of: cat) == nil && index.topPercent(of: cat) == nil && index.entry(cat) == nil)
            #expect(index.entry(ann) == RankEntry(userID: ann, score: 10, name: "Zed"))
        }

        @Test("Equal names and scores fall back to the user ID in uuidString order")
        func sameNameAndScore() {
            var random = SeededRandom(seed: 7)
            let ids = (0..<200).map { _ in uuid(&random) }
            var index = RankIndex()
            for id in ids { index.set(id, score: 1, name: "Sam") }
            #expect(index.entries(from: 0, limit: 500).map(\.userID) == ids.sorted { $0.uuidString < $1.uuidString })
            #expect(Set(ids.map { index.rank(of: $0) }) == [1])
            #expect(Set(ids.map { index.topPercent(of: $0) }) == [1])
        }

        @Test("Percentiles round up and stay within 1...100")
        func percentiles() {
            var index = RankIndex()
            let ids = (0..<3).map(sequentialUUID)
            for (i, id) in ids.enumerated() { index.set(id, score: Double(10 - i), name: "u\(i)") }
            #expect(ids.map { index.topPercent(of: $0) } == [34, 67, 100])
            var big = RankIndex()
            for n in 0..<1000 { big.set(sequentialUUID(n), score: Double(n), name: "") }
            #expect(big.topPercent(of: sequentialUUID(999)) == 1)
            #expect(big.topPercent(of: sequentialUUID(989)) == 2)
            #expect(big.topPercent(of: sequentialUUID(0)) == 100)
        }

        @Test("Empty boards, odd positions and limits, NaN")
        func edges() {
            var index = RankIndex()
            #expect(index.count == 0 && index.topScore == nil && index.rank(forScore: 3) == 1)
            #expect(index.entries(from: 0, limit: 10).isEmpty)
            index.remove(UUID())
            let id = UUID()
            index.set(id, score: 4, name: "x")
            #expect(index.entries(from: -3, limit: 10).map(\.userID) == [id])
            #expect(index.entries(from: 1, limit: 10).isEmpty)
            #expect(index.entries(from: 0, limit: 0).isEmpty)
            #expect(index.entries(from: 0, limit: -1).isEmpty)
            let nan = UUID()
            index.set(nan, score: .nan, name: "a")
            #expect(index.entry(nan)?.score == -.infinity)
            #expect(index.position(of: nan) == 1)
            #expect(index.rank(forScore: .nan) == 2)
        }

        @Test("A copy is independent of the original (copy-on-write)")
        func valueSemantics() {
            var original = RankIndex()
            let (a, b) = (UUID(), UUID())
            original.set(a, score: 1, name: "a")
            var copy = original
            copy.set(b, score: 2, name: "b")
            copy.set(a, score: 0, name: "a")
            #expect(original.count == 1 && original.entry(a)?.score == 1 && original.entry(b) == nil)
            #expect(copy.count == 2 && copy.rank(of: a) == 2)
        }

        @Test("Matches a sorted array under random inserts, moves, renames and removals", arguments: [1, 2, 3, 2026] as [UInt64])
        func againstNaiveModel(seed: UInt64) throws {
            var random = SeededRandom(seed: seed)
            let pool = (0..<120).map { _ in uuid(&random) }
            var index = RankIndex()
            var model = NaiveBoard()

            for step in 0..<2500 {
                let id = pool.randomElement(using: &random)!
                let existing = model.members[id]
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<45:
                    let entry = RankEntry(userID: id, score: Self.scores.randomElement(using: &random)!, name: Self.names.randomElement(using: &random)!)
                    index.set(id, score: entry.score, name: entry.name)
                    model.members[id] = entry
                case 45..<60 where existing != nil:
                    let score = existing!.score + Double(Int.random(in: -3...3, using: &random)) * 0.5
                    index.set(id, score: score, name: existing!.name)
                    model.members[id]!.score = score
                case 60..<70 where existing != nil:
                    let name = Self.names.randomElement(using: &random)!
                    index.set(id, score: existing!.score, name: name)
                    model.members[id]!.name = name
                case 70..<75 where existing != nil:
                    index.set(id, score: existing!.score, name: existing!.name)
                default:
                    index.remove(id)
                    model.members[id] = nil
                }

                let sorted = model.sorted
                let context = Comment(rawValue: "seed \(seed), step \(step)")  // `#require` stops at the first step that differs
                try #require(index.count == sorted.count, context)
                try #require(index.entries(from: 0, limit: sorted.count + 3) == sorted, context)
                try #require(index.topScore == sorted.first?.score, context)
                var rank = 0
                for (position, entry) in sorted.enumerated() {
                    if position == 0 || sorted[position - 1].score != entry.score { rank = position + 1 }
                    try #require(index.rank(of: entry.userID) == rank, context)
                    try #require(index.position(of: entry.userID) == position, context)
                    try #require(index.topPercent(of: entry.userID) == Int((100 * Double(rank) / Double(sorted.count)).rounded(.up)), context)
                    try #require(index.entry(entry.userID) == entry, context)
                }
                for absent in pool.prefix(10) where model.members[absent] == nil {
                    try #require(index.rank(of: absent) == nil && index.position(of: absent) == nil && index.entry(absent) == nil, context)
                }
                let score = Self.scores.randomElement(using: &random)! + Double(Int.random(in: -1...1, using: &random)) * 0.25
                try #require(index.rank(forScore: score) == model.rank(forScore: score), context)
                let from = Int.random(in: -2...(sorted.count + 2), using: &random)
                let limit = Int.random(in: 0...12, using: &random)
                let slice = Array(sorted.dropFirst(max(0, from)).prefix(limit))
                try #require(index.entries(from: from, limit: limit) == slice, context)
                let ranked = index.rankedEntries(from: from, limit: limit)
                try #require(ranked.map(\.entry) == slice && ranked.map(\.rank) == slice.map { model.rank(forScore: $0.score) }, context)
                if step % 250 == 0 { _ = index.checkedHeight() }
            }
            _ = index.checkedHeight()
        }

        @Test("Stays balanced for adversarial arrival orders and reuses freed nodes")
        func balance() {
            let n = 20_000
            var index = RankIndex()
            for i in 0..<n { index.set(sequentialUUID(i), score: Double(i), name: "user \(i)") }
            let height = index.checkedHeight()
            #expect(height <= 60, "height \(height) for \(n) entries")
            #expect(index.rank(of: sequentialUUID(n - 1)) == 1 && index.position(of: sequentialUUID(0)) == n - 1)

            for i in stride(from: 0, to: n, by: 2) { index.remove(sequentialUUID(i)) }
            for i in stride(from: 0, to: n, by: 2) { index.set(sequentialUUID(n + i), score: 0, name: "late \(i)") }
            #expect(index.nodes.count == n)
            #expect(index.checkedHeight() <= 60)
            #expect(index.rank(of: sequentialUUID(n)) == n / 2 + 1)
        }

        @Test("The same members make the same tree, whatever the order they arrived in")
        func canonicalShape() {
            var random = SeededRandom(seed: 11)
            let members = (0..<500).map { i in RankEntry(userID: uuid(&random), score: Double(i % 37), name: Self.names[i % Self.names.count]) }
            func shape(_ order: [RankEntry]) -> String {
                var index = RankIndex()
                for member in order { index.set(member.userID, score: member.score, name: member.name) }
                func walk(_ t: Int32) -> String {
                    t == RankIndex.none ? "." : "(\(walk(index.nodes[Int(t)].left)) \(index.nodes[Int(t)].userID) \(walk(index.nodes[Int(t)].right)))"
                }
                return walk(index.root)
            }
            #expect(shape(members) == shape(members.reversed()))
            #expect(shape(members) == shape(members.shuffled(using: &random)))
        }

        @Test("Built in one pass from a board's rows: the same tree, order and ranks as inserting them one by one", arguments: [5, 8, 2026] as [UInt64])
        func bulkBuild(seed: UInt64) throws {
            var random = SeededRandom(seed: seed)
            let pool = (0..<3000).map { _ in uuid(&random) }
            var rows: [RankEntry] = []
            for _ in 0..<4000 {
                rows.append(
                    RankEntry(
                        userID: pool.randomElement(using: &random)!, score: Self.scores.randomElement(using: &random)!,
                        name: Self.names.randomElement(using: &random)!))
            }
            var inserted = RankIndex()
            for row in rows { inserted.set(row.userID, score: row.score, name: row.name) }
            var built = RankIndex(rows)
            func shape(_ index: RankIndex) -> String {
                func walk(_ t: Int32) -> String {
                    t == RankIndex.none ? "." : "(\(walk(index.nodes[Int(t)].left)) \(index.nodes[Int(t)].userID) \(walk(index.nodes[Int(t)].right)))"
                }
                return walk(index.root)
            }
            #expect(built.count == inserted.count)
            #expect(built.checkedHeight() == inserted.checkedHeight())
            #expect(shape(built) == shape(inserted))
            #expect(built.entries(from: 0, limit: rows.count) == inserted.entries(from: 0, limit: rows.count))
            #expect(built.nodes.count == built.count, "no spare nodes")
            for id in pool.prefix(200) {
                try #require(built.rank(of: id) == inserted.rank(of: id) && built.entry(id) == inserted.entry(id))
            }
            // It stays an ordinary index afterwards.
            for id in pool.prefix(300) { built.set(id, score: 7, name: "moved"); inserted.set(id, score: 7, name: "moved") }
            for id in pool.suffix(300) { built.remove(id); inserted.remove(id) }
            #expect(built.entries(from: 0, limit: rows.count) == inserted.entries(from: 0, limit: rows.count))
            _ = built.checkedHeight()
            #expect(RankIndex([]).count == 0 && RankIndex([]).entries(from: 0, limit: 5).isEmpty)
        }

        @Test("Memory per entry, from MemoryLayout: 56-byte nodes plus 4-byte hash slots at most 3/4 full")
        func memoryPerEntry() {
            let node = MemoryLayout<RankIndex.Node>.stride
            let slot = MemoryLayout<Int32>.stride
            #expect(node == 56)
            #expect(MemoryLayout<String>.size == 16, "names of up to 15 UTF-8 bytes are stored inline")
            let leanest = Double(node) + Double(slot) * 4 / 3
            let fullest = Double(node) + Double(slot) * 8 / 3
            #expect(leanest > 61 && fullest < 67)

            let n = 100_000
            var index = RankIndex(minimumCapacity: n)
            for i in 0..<n { index.set(sequentialUUID(i), score: Double(i % 1000), name: "player \(i)") }
            let bytes = index.nodes.capacity * node + index.slots.count * slot
            let perEntry = Double(bytes) / Double(n)
            #expect(perEntry < 70, "\(perEntry) bytes per entry for \(n) entries loaded with reserveCapacity")

            var grown = RankIndex()
            for i in 0..<n { grown.set(sequentialUUID(i), score: Double(i % 1000), name: "player \(i)") }
            let grownPerEntry = Double(grown.nodes.capacity * node + grown.slots.count * slot) / Double(n)
            #expect(grownPerEntry < 2 * Double(node) + 11, "\(grownPerEntry) bytes per entry for \(n) entries added one by one")
        }
    }

}

// MARK: - WindowKey

extension LeaderboardDomainTests {
    @Suite("WindowKey", .tags(.unit), .kind(.unit))
    struct WindowKeyTests {
        static func date(_ text: String) -> LocalDate { LocalDate(text)! }
        static func key(_ text: String) -> WindowKey { WindowKey(text)! }

        static func instant(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

        @Test("ISO week-numbering years at year ends")
        func isoWeekYears() {
            let cases = [
                ("2024-12-30", "2025-W01"), ("2027-01-01", "2026-W53"), ("2021-01-03", "2020-W53"), ("2021-01-04", "2021-W01"),
                ("2026-12-31", "2026-W53"), ("2026-01-01", "2026-W01"), ("2025-12-29", "2026-W01"), ("2025-12-28", "2025-W52"),
                ("2010-01-03", "2009-W53"), ("1970-01-01", "1970-W01"), ("2200-12-31", "2201-W01"), ("2026-11-23", "2026-W48"),
            ]
            for (day, week) in cases { #expect(WindowKey.week(containing: Self.date(day)).description == week, "\(day)") }
            #expect(Self.key("1970-W01").dates == Self.date("1969-12-29")...Self.date("1970-01-04"))
            #expect(Self.key("2025-W01").dates == Self.date("2024-12-30")...Self.date("2025-01-05"))
            #expect([2020, 2024, 2025, 2026, 2032, 2037].map(WindowKey.weeks(inYear:)) == [53, 52, 52, 53, 53, 53])
        }

        @Test("Weeks agree with Foundation's ISO 8601 calendar on every day from 1990 to 2040")
        func againstFoundation() {
            var iso = Calendar(identifier: .iso8601)
            iso.timeZone = TimeZone(identifier: "UTC")!
            var day = Self.date("1990-01-01")
            while day <= Self.date("2040-12-31") {
                let parts = iso.dateComponents([.yearForWeekOfYear, .weekOfYear], from: Date(timeIntervalSince1970: Double(day.dayNumber) * 86_400 + 43_200))
                let week = WindowKey.week(containing: day)
                if week.year != parts.yearForWeekOfYear || week.number != parts.weekOfYear {
                    Issue.record("\(day): \(week), Foundation says \(parts.yearForWeekOfYear!)-W\(parts.weekOfYear!)")
                    return
                }
                day = day.adding(days: 1)
            }
        }

        @Test("Every supported week and month: round trips, contiguous dates, next and previous", arguments: [WindowKind.week, .month])
        func walk(kind: WindowKind) throws {
            var key = WindowKey.containing(LocalDate.supportedRange.lowerBound, kind: kind)
            #expect(key.previous == nil)
            var windows = 1
            while true {
                let dates = try #require(key.dates)
                #expect(WindowKey(key.description) == key)
                #expect(WindowKey.containing(dates.lowerBound, kind: kind) == key && WindowKey.containing(dates.upperBound, kind: kind) == key)
                #expect(dates.lowerBound == (kind == .week ? dates.lowerBound.startOfWeek : dates.lowerBound.startOfMonth))
                guard let next = key.next else { break }
                #expect(next.dates?.lowerBound == dates.upperBound.adding(days: 1), "\(key)")
                #expect(next.previous == key && key < next)
                key = next
                windows += 1
            }
            #expect(key == WindowKey.containing(LocalDate.supportedRange.upperBound, kind: kind))
            #expect(key.description == (kind == .week ? "2201-W01" : "2200-12"))
            let days = LocalDate.supportedRange.lowerBound.days(until: LocalDate.supportedRange.upperBound) + 1
            #expect(windows == (kind == .week ? (days + 3 + 4) / 7 : (2200 - 1969) * 12))
        }

        @Test("Keys parse only in their canonical forms and supported ranges")
        func parsing() {
            for text in ["2026-W48", "2026-W01", "2026-W53", "2020-W53", "2026-11", "2026-01", "1970-01", "2200-12", "1970-W01", "2201-W01", "all-time"] {
                #expect(WindowKey(text)?.description == text, "\(text)")
            }
            #expect(WindowKey("2026-W48")?.kind == .week && WindowKey("2026-11")?.kind == .month && WindowKey("all-time") == .allTime)
            let refused = [
                "2026-W54", "2025-W53", "2026-W00", "2026-W99", "2026-13", "2026-00", "1969-12", "2201-01", "1969-W52", "2201-W02", "0000-01",
                "9999-W52", "", "all time", "ALL-TIME", "alltime", "week", "2026-w48", "2026-W4", "2026-W048", "2026-1", "2026-011", "26-11",
                "02026-11", "2026-+1", "+026-11", "2026-W+1", "2026-W-1", "2026-11-01", "2026–11", "２０２６-11", " 2026-11", "2026-11 ", "2026-W",
                "2026-", "-11", "2026W48", "2026-M11",
            ]
            for text in refused { #expect(WindowKey(text) == nil, "\(text)") }
        }

        @Test("Codable as its text; refuses what the parser refuses")
        func codable() throws {
            let keys = [Self.key("2026-W48"), Self.key("2026-11"), .allTime]
            let json = try JSONEncoder().encode(keys)
            #expect(String(decoding: json, as: UTF8.self) == #"["2026-W48","2026-11","all-time"]"#)
            #expect(try JSONDecoder().decode([WindowKey].self, from: json) == keys)
            #expect(throws: DecodingError.self) { try JSONDecoder().decode([WindowKey].self, from: Data(#"["2026-W54"]"#.utf8)) }
            #expect(WindowKind.allCases.map(\.rawValue) == ["week", "month", "all-time"])
        }

        @Test("previous and next across year boundaries")
        func neighbours() {
            let pairs = [
                ("2025-W01", "2024-W52"), ("2021-W01", "2020-W53"), ("2027-W01", "2026-W53"), ("2026-W10", "2026-W09"), ("2026-01", "2025-12"),
                ("2026-03", "2026-02"), ("2201-W01", "2200-W52"),
            ]
            for (key, previous) in pairs {
                #expect(Self.key(key).previous == Self.key(previous), "\(key)")
                #expect(Self.key(previous).next == Self.key(key), "\(previous)")
            }
            #expect(Self.key("1970-W01").previous == nil && Self.key("1970-01").previous == nil)
            #expect(Self.key("2201-W01").next == nil && Self.key("2200-12").next == nil)
            #expect(WindowKey.allTime.previous == nil && WindowKey.allTime.next == nil && WindowKey.allTime.dates == nil)
            #expect(WindowKey.containing(Self.date("2026-05-05"), kind: .allTime) == .allTime)
        }

        @Test("Keys sort by kind, then chronologically")
        func ordering() {
            let keys = ["all-time", "2026-01", "2027-W01", "2025-12", "2026-W53", "2026-W02", "2026-W10"].map(Self.key)
            #expect(keys.sorted().map(\.description) == ["2026-W02", "2026-W10", "2026-W53", "2027-W01", "2025-12", "2026-01", "all-time"])
        }

        @Test(
            "Week and month bounds in a zone: local midnights, 167 or 169 hours across DST",
            arguments: [
                // Tokyo has no DST.
                ("Asia/Tokyo", "2026-W48", "2026-11-22T15:00:00Z", "2026-11-29T15:00:00Z", 168),
                ("Asia/Tokyo", "2028-02", "2028-01-31T15:00:00Z", "2028-02-29T15:00:00Z", 696),
                // Rome: clocks go forward on 29 March 2026 and back on 25 October 2026.
                ("Europe/Rome", "2026-W13", "2026-03-22T23:00:00Z", "2026-03-29T22:00:00Z", 167),
                ("Europe/Rome", "2026-W43", "2026-10-18T22:00:00Z", "2026-10-25T23:00:00Z", 169),
                ("Europe/Rome", "2026-W14", "2026-03-29T22:00:00Z", "2026-04-05T22:00:00Z", 168),
                ("Europe/Rome", "2026-03", "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z", 743),
                ("Europe/Rome", "2026-10", "2026-09-30T22:00:00Z", "2026-10-31T23:00:00Z", 745),
                // New York: forward on 8 March 2026, back on 1 November 2026 (a Sunday: the last day of 2026-W44).
                ("America/New_York", "2026-W10", "2026-03-02T05:00:00Z", "2026-03-09T04:00:00Z", 167),
                ("America/New_York", "2026-W44", "2026-10-26T04:00:00Z", "2026-11-02T05:00:00Z", 169),
                ("America/New_York", "2026-11", "2026-11-01T04:00:00Z", "2026-12-01T05:00:00Z", 721),
                ("America/New_York", "2026-W53", "2026-12-28T05:00:00Z", "2027-01-04T05:00:00Z", 168),
            ])
        func bounds(zone: String, key: String, start: String, end: String, hours: Int) throws {
            let calendar = try #require(LocalCalendar(zoneNamed: zone))
            let bounds = try #require(Self.key(key).bounds(in: calendar))
            #expect(bounds.start == Self.instant(start))
            #expect(bounds.end == Self.instant(end))
            #expect(bounds.end.timeIntervalSince(bounds.start) == Double(hours) * 3600)
            #expect(calendar.date(at: bounds.start) == Self.key(key).dates?.lowerBound)
            #expect(calendar.date(at: bounds.end.addingTimeInterval(-1)) == Self.key(key).dates?.upperBound)
            #expect(WindowKey.allTime.bounds(in: calendar) == nil)
        }

        @Test("Each window ends where the next begins, in every zone", arguments: ["Asia/Tokyo", "Europe/Rome", "America/New_York", "Australia/Lord_Howe"])
        func contiguousBounds(zone: String) throws {
            let calendar = try #require(LocalCalendar(zoneNamed: zone))
            for kind in [WindowKind.week, .month] {
                var key = WindowKey.containing(Self.date("2025-12-01"), kind: kind)
                var hours: Set<Double> = []
                for _ in 0..<(kind == .week ? 60 : 14) {
                    let bounds = try #require(key.bounds(in: calendar))
                    let next = try #require(key.next)
                    #expect(bounds.end == next.bounds(in: calendar)?.start)
                    hours.insert(bounds.end.timeIntervalSince(bounds.start) / 3600)
                    key = next
                }
                if kind == .week {
                    #expect(hours.isSubset(of: [167, 167.5, 168, 168.5, 169]), "\(zone): \(hours.sorted())")
                }
            }
        }
    }
}

// MARK: - GroupZone

extension LeaderboardDomainTests {
    @Suite("GroupZone", .tags(.unit), .kind(.unit))
    struct GroupZoneTests {
        static func instant(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }
        static func key(_ text: String) -> WindowKey { WindowKey(text)! }

        @Test("A zone change on a Wednesday applies from the next Monday 00:00 in the old zone; the week under way keeps its bounds")
        func changeAppliesFromNextWeek() throws {
            // Wednesday 2026-11-18 in Tokyo; the household moves to Rome.
            let tokyo = GroupZone(zone: "Asia/Tokyo")
            let moved = tokyo.changing(to: "Europe/Rome", at: Self.instant("2026-11-18T03:00:00Z"))
            #expect(moved == GroupZone(zone: "Asia/Tokyo", nextZone: "Europe/Rome", changesAt: Self.instant("2026-11-22T15:00:00Z")))
            // The week under way: Monday 00:00 to Monday 00:00 Tokyo, as before.
            let current = try #require(Self.key("2026-W47").bounds(in: moved.calendar(for: Self.key("2026-W47"))))
            #expect(current.start == Self.instant("2026-11-15T15:00:00Z"))
            #expect(current.end == Self.instant("2026-11-22T15:00:00Z"))
            // The next week is Rome's: it begins at Monday 00:00 Rome, 8 hours after Tokyo's week ended.
            let next = try #require(Self.key("2026-W48").bounds(in: moved.calendar(for: Self.key("2026-W48"))))
            #expect(next.start == Self.instant("2026-11-22T23:00:00Z"))
            // Points awarded late on Sunday in Rome (Monday in Tokyo) are past the change: Rome's zone, but the new
            // week's first day, not the Sunday of a week already closed.
            let sundayEvening = Self.instant("2026-11-22T20:00:00Z")
            #expect(moved.zoneName(at: sundayEvening) == "Europe/Rome")
            #expect(moved.date(at: sundayEvening) == LocalDate("2026-11-23"))
            #expect(moved.date(at: Self.instant("2026-11-24T20:00:00Z")) == LocalDate("2026-11-24"))
            #expect(moved.date(at: Self.instant("2026-11-22T14:00:00Z")) == LocalDate("2026-11-22"))
            #expect(moved.zoneName(at: Self.instant("2026-11-22T14:59:59Z")) == "Asia/Tokyo")
        }

        @Test("Changing back before the change applies cancels it; a second change replaces a pending one; a due one settles")
        func pendingChanges() {
            let tokyo = GroupZone(zone: "Asia/Tokyo")
            let wednesday = Self.instant("2026-11-18T03:00:00Z")
            let moved = tokyo.changing(to: "Europe/Rome", at: wednesday)
            #expect(moved.changing(to: "Asia/Tokyo", at: wednesday.addingTimeInterval(3600)) == tokyo)
            #expect(moved.changing(to: "America/New_York", at: wednesday).nextZone == "America/New_York")
            #expect(moved.changing(to: "America/New_York", at: wednesday).changesAt == moved.changesAt)
            // Two weeks later Rome is in force: a change then is judged from Rome's week.
            let later = moved.changing(to: "America/New_York", at: Self.instant("2026-12-02T12:00:00Z"))
            #expect(later == GroupZone(zone: "Europe/Rome", nextZone: "America/New_York", changesAt: Self.instant("2026-12-06T23:00:00Z")))
            #expect(moved.changing(to: "Europe/Rome", at: Self.instant("2026-12-02T12:00:00Z")) == GroupZone(zone: "Europe/Rome"))
        }

        @Test("A week that begins across a DST change keeps its 167 or 169 hours in the zone it began in")
        func dstWeeks() throws {
            let rome = GroupZone(zone: "Europe/Rome")
            // Rome's clocks go back on Sunday 2026-10-25: that week is 169 hours long.
            let week = try #require(Self.key("2026-W43").bounds(in: rome.calendar(for: Self.key("2026-W43"))))
            #expect(week.end.timeIntervalSince(week.start) == 169 * 3600)
        }
    }
}
